import { registerErrorCodes } from '../../../kernel/errors';

/** The control plane's own error codes (agents, tasks, orchestrations and their gates), declared in its lowest folder that raises them. */
export const CONTROL_PLANE_CODES = registerErrorCodes({
  AGENT_NOT_FOUND: 404,
  INVALID_TASK_TYPE: 400,
  CONTEXT_VALIDATION_FAILED: 422,
  GATE_VALIDATION_FAILED: 422,
  TASK_TIMEOUT: 504,
  invalid_agent_configuration: 400,
  workflow_validation_failed: 422,
  forge_gate_failure: 422,
});
