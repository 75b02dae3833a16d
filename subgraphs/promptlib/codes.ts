import { registerErrorCodes } from '../../kernel/errors';

/** The prompt library's own error codes. */
export const PROMPTLIB_CODES = registerErrorCodes({
  PROMPT_NOT_FOUND: 404,
  /** A refine asked of the offline model, which has nothing useful to say: configure a model. */
  model_unavailable: 409,
});
