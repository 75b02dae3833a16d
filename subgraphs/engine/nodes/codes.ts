import { registerErrorCodes } from '../../../kernel/errors';

/** The engine's own error codes, declared in its lowest folder that raises them, so every folder above finds them. */
export const ENGINE_CODES = registerErrorCodes({
  WORKFLOW_NOT_FOUND: 404,
  WORKFLOW_INACTIVE: 409,
  EXECUTION_FAILED: 500,
  SCHEDULE_INVALID: 400,
  NODE_EXECUTION_FAILED: 500,
  WORKFLOW_INVALID: 400,
});
