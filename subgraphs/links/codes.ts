import { registerErrorCodes } from '../../kernel/errors';

/** The link service's own error codes: a password-gated link's lockout and an expired link. */
export const LINK_CODES = registerErrorCodes({
  too_many_attempts: 429,
  link_gone: 410,
});
