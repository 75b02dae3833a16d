import { GraphQLError } from 'graphql';
import { currentTraceId } from './tracing';

/**
 * One error hierarchy for the platform. An AppError carries its code, HTTP status and details
 * into GraphQL extensions ({code, http: {status}, details}); the REST adapter turns those back
 * into each surface's envelope. Nothing downstream matches on message text.
 */

/** The codes any service or surface may raise; a service's own codes are registered by its module (registerErrorCodes). */
const KERNEL_CODES = {
  RATE_LIMIT_EXCEEDED: 429,
  WEBHOOK_INVALID: 400,
  PAYLOAD_TOO_LARGE: 413,
  // a path outside every surface
  NOT_FOUND: 404,
  unauthorized: 401,
  forbidden: 403,
  invalid_api_key: 401,
  expired_api_key: 401,
  missing_authorization: 401,
  invalid_credentials: 401,
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
  upstream_error: 502,
  service_unavailable: 503,
  internal_server_error: 500,
  // GraphQL request limits (gateway/limits.ts)
  query_too_complex: 400,
} as const;

/** A code's HTTP status: the kernel's codes and every code a service registered. */
export const ERROR_STATUS: typeof KERNEL_CODES & Readonly<Record<string, number>> = { ...KERNEL_CODES };

/**
 * Declares a service's own error codes with their statuses (from the service's module, at load).
 * A code may be declared again only with the same status: two services cannot mean two things by it.
 */
export function registerErrorCodes<C extends Record<string, number>>(codes: C): C {
  const table = ERROR_STATUS as Record<string, number>;
  for (const [code, status] of Object.entries(codes)) {
    if (Object.hasOwn(table, code) && table[code] !== status) {
      throw new Error(`Error code ${code} is already declared with status ${table[code]}, not ${status}`);
    }
    table[code] = status;
  }
  return codes;
}

/** Whether `code` is declared (by the kernel or a registered service). */
export function isKnownErrorCode(code: string): boolean {
  return Object.hasOwn(ERROR_STATUS, code);
}

/** A kernel code, or any string a service registered (checked when the error is made). */
export type ErrorCode = keyof typeof KERNEL_CODES | (string & {});
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
    this.status = status ?? statusOfCode(code);
  }

  toGraphQLError(): GraphQLError {
    return new GraphQLError(this.message, {
      extensions: { code: this.code, http: { status: this.status }, details: tracedDetails(this.details) },
    });
  }
}

/**
 * Error details as a client receives them: with `traceId`, the trace the answer belongs to, when
 * the request is traced (tracing on, its trace sampled); as they are otherwise. Every error answer
 * goes through here: the REST envelopes (kernel/envelopes.ts) and the GraphQL errors' extensions.
 */
export function tracedDetails(details: ErrorDetails | undefined): ErrorDetails {
  const traceId = currentTraceId();
  if (!traceId) return details ?? {};
  return details?.traceId === traceId ? details : { ...details, traceId };
}

/** The same error with the active trace's id in its details (see tracedDetails); itself when there is none. */
export function withTraceId(err: AppError): AppError {
  const details = tracedDetails(err.details);
  return details === err.details ? err : new AppError(err.code, err.message, details, err.status);
}

/** A GraphQL error's extensions with the active trace's id in `details` (see tracedDetails). */
export function tracedExtensions(extensions: Record<string, unknown>): Record<string, unknown> {
  const details = extensions.details;
  const traced = tracedDetails(details && typeof details === 'object' && !Array.isArray(details) ? (details as ErrorDetails) : undefined);
  return traced === details || (!details && !traced.traceId) ? extensions : { ...extensions, details: traced };
}

/** Why a field was refused, in words a client can branch on (the infrastructure surface shows it as details.reason). */
export type FieldReason = 'required_field_missing' | 'invalid_type' | 'invalid_value' | 'too_long' | 'unknown_field';

/**
 * The status of a declared code. An undeclared one is a programming error (test/error-codes.test.ts
 * finds it in the sources): it answers 500 rather than a status nobody chose.
 */
function statusOfCode(code: string): number {
  return ERROR_STATUS[code] ?? 500;
}

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
  if (code && isKnownErrorCode(code)) {
    return new AppError(code, err.message, details, http?.status);
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
