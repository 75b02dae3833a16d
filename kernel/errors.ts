import { GraphQLError } from 'graphql';

/**
 * One error hierarchy for the platform. An AppError carries its code, HTTP status and details
 * into GraphQL extensions ({code, http: {status}, details}); the REST adapter turns those back
 * into each surface's envelope. Nothing downstream matches on message text.
 */

/** Every error code the platform answers with and its HTTP status, defined once. */
export const ERROR_STATUS = {
  // uppercase codes
  AGENT_NOT_FOUND: 404,
  INVALID_TASK_TYPE: 400,
  CONTEXT_VALIDATION_FAILED: 422,
  GATE_VALIDATION_FAILED: 422,
  TASK_TIMEOUT: 504,
  RATE_LIMIT_EXCEEDED: 429,
  WORKFLOW_NOT_FOUND: 404,
  WORKFLOW_INACTIVE: 409,
  EXECUTION_FAILED: 500,
  WEBHOOK_INVALID: 400,
  SCHEDULE_INVALID: 400,
  PAYLOAD_TOO_LARGE: 413,
  NODE_EXECUTION_FAILED: 500,
  PROMPT_NOT_FOUND: 404,
  WORKFLOW_INVALID: 400,
  // a path outside every surface
  NOT_FOUND: 404,
  // lowercase codes
  unauthorized: 401,
  forbidden: 403,
  invalid_api_key: 401,
  expired_api_key: 401,
  missing_authorization: 401,
  insufficient_permissions: 403,
  validation_error: 400,
  invalid_json: 400,
  missing_required_field: 400,
  resource_not_found: 404,
  method_not_allowed: 405,
  resource_already_exists: 409,
  resource_locked: 409,
  conflict: 409,
  rate_limit_exceeded: 429,
  agent_execution_failed: 500,
  timeout: 504,
  invalid_agent_configuration: 400,
  workflow_validation_failed: 422,
  forge_gate_failure: 422,
  upstream_error: 502,
  service_unavailable: 503,
  /** A model run that only a configured model can do usefully (refine) while the offline one answers. */
  model_unavailable: 409,
  internal_server_error: 500,
  // link service
  invalid_credentials: 401,
  too_many_attempts: 429,
  link_gone: 410,
  // feature-request service
  already_voted: 409,
  request_not_approved: 409,
  /** A sign-in callback whose state is not the one this browser was given, or is used up. */
  invalid_state: 400,
  // GraphQL request limits (gateway/limits.ts)
  query_too_complex: 400,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorDetails = Record<string, unknown>;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
    status?: number,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = status ?? ERROR_STATUS[code];
  }

  toGraphQLError(): GraphQLError {
    return new GraphQLError(this.message, {
      extensions: { code: this.code, http: { status: this.status }, details: this.details },
    });
  }
}

/** Why a field was refused, in words a client can branch on (the infrastructure surface shows it as details.reason). */
export type FieldReason = 'required_field_missing' | 'invalid_type' | 'invalid_value' | 'too_long' | 'unknown_field';

export interface FieldError {
  field: string;
  message: string;
  /** invalid_value when not given. */
  reason?: FieldReason;
}

/** Constructors for the errors every service raises, so messages and details stay uniform. */
export const errors = {
  notFound: (resourceType: string, resourceId: string) =>
    new AppError('resource_not_found', `${resourceType} ${resourceId} not found`, { resource_type: resourceType, resource_id: resourceId }),
  validation: (fieldErrors: FieldError[]) =>
    new AppError('validation_error', fieldErrors.map((e) => `${e.field}: ${e.message}`).join('; ') || 'Invalid request', { errors: fieldErrors }),
  field: (field: string, message: string, reason?: FieldReason) => errors.validation([{ field, message, ...(reason && { reason }) }]),
  alreadyExists: (field: string, value: unknown, existingId?: string) =>
    new AppError('resource_already_exists', `A resource with ${field} "${String(value)}" already exists`, { field, value, existing_id: existingId }),
  conflict: (message: string, details: ErrorDetails = {}) => new AppError('conflict', message, details),
  missingAuthorization: () => new AppError('missing_authorization', 'Authorization header with a Bearer API key is required'),
  invalidApiKey: () => new AppError('invalid_api_key', 'The API key is invalid or has been revoked'),
  expiredApiKey: (expiredAt: Date) => new AppError('expired_api_key', 'The API key has expired', { expired_at: expiredAt.toISOString() }),
  insufficientPermissions: (required: string | string[], has: string[]) =>
    new AppError('insufficient_permissions', `This operation requires the permission ${[required].flat().join(', ')}`, { required, has }),
  internal: (requestId?: string) => new AppError('internal_server_error', 'An internal error occurred', requestId ? { request_id: requestId } : {}),
};

/** Reads an AppError back out of a GraphQL error (or any error) by its extensions, never its text. */
export function fromGraphQLError(err: { message: string; extensions?: Record<string, unknown> }): AppError {
  const ext = err.extensions ?? {};
  const code = typeof ext.code === 'string' ? ext.code : undefined;
  const http = ext.http as { status?: number } | undefined;
  const details = (ext.details as ErrorDetails | undefined) ?? {};
  if (code && Object.hasOwn(ERROR_STATUS, code)) {
    return new AppError(code as ErrorCode, err.message, details, http?.status);
  }
  // Errors GraphQL itself raised on a well-formed request (unknown field, bad variable, ...).
  if (code === 'GRAPHQL_VALIDATION_FAILED' || code === 'BAD_USER_INPUT' || code === 'GRAPHQL_PARSE_FAILED') {
    return errors.validation([{ field: 'query', message: err.message }]);
  }
  return errors.internal();
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
