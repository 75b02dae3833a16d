import { registerErrorCodes } from '../../kernel/errors';

/** The feature-request service's own error codes. */
export const FEEDBACK_CODES = registerErrorCodes({
  already_voted: 409,
  request_not_approved: 409,
  /** A sign-in callback whose state is not the one this browser was given, or is used up. */
  invalid_state: 400,
});
