import type { AppError, FieldError } from './errors';

export interface Meta {
  requestId: string;
  /** ISO 8601 with milliseconds. */
  timestamp: string;
}

/** How one surface wraps its answers (each surface's documented envelope, docs/surfaces.md). */
export interface Envelope {
  success(data: unknown, meta: Meta, message?: string): unknown;
  error(err: AppError, meta: Meta): unknown;
}

const error = (err: AppError) => ({ code: err.code, message: err.message, details: err.details ?? {} });

export const envelopes = {
  /** /v1/... (control plane, prompt library, engine main layout) */
  v1: {
    success: (data, meta) => ({ success: true, data, meta }),
    error: (err, meta) => ({ success: false, error: error(err), meta }),
  },
  /** /control-plane/api/v1, /promptlib/api/v1, /engine/api/v1 */
  platform: {
    success: (data, meta) => ({ success: true, data, metadata: { timestamp: meta.timestamp, request_id: meta.requestId } }),
    error: (err, meta) => ({ success: false, error: error(err), metadata: { timestamp: meta.timestamp, request_id: meta.requestId } }),
  },
  /** /links/api/links */
  links: {
    success: (data) => ({ success: true, data }),
    error: (err) => ({ success: false, error: error(err) }),
  },
  /** /feedback/api/v1 */
  feedback: {
    success: (data, _meta, message) => ({ success: true, message: message ?? 'OK', data }),
    /** Spec 3: `error` is a string (the code); the field problems, where any, are in `details`. */
    error: (err) => ({ success: false, message: err.message, error: err.code, details: err.details ?? {} }),
  },
  /** /webhook/...: a trigger's answer is the workflow's own; its refusals are built by the engine (inbound) and the surface. */
  webhook: {
    success: (data) => data,
    error: (err) => ({ success: false, error: error(err) }),
  },
  /** /infra/api/v1: the resource itself, or {data, pagination} for lists; errors in the infrastructure service's own codes (invalid_request, not_found, …). */
  infra: {
    success: (data) => data,
    error: (err, meta) => {
      const code = INFRA_CODES[err.status] ?? err.code.toLowerCase();
      const details = code === err.code || 'reason' in (err.details ?? {}) ? (err.details ?? {}) : { ...reasonOf(err), ...err.details };
      const retryAfter = err.status === 429 && typeof err.details?.retryAfter === 'number' ? { retryAfter: err.details.retryAfter } : {};
      return { error: code, message: err.message, details, requestId: meta.requestId, ...retryAfter };
    },
  },
} satisfies Record<string, Envelope>;

/**
 * What `details` says first on the infrastructure surface: for a refused field, the first one and
 * why (the whole list stays in `details.errors`); else the platform's own code.
 */
function reasonOf(err: AppError): { reason: string; field?: string } {
  const first = Array.isArray(err.details?.errors) ? (err.details.errors[0] as FieldError | undefined) : undefined;
  return first?.field ? { field: first.field, reason: first.reason ?? 'invalid_value' } : { reason: err.code };
}

/** One code per status on the infrastructure surface; the platform's own code stays in `details.reason`. */
export const INFRA_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'authentication_failed',
  403: 'insufficient_permissions',
  404: 'not_found',
  409: 'conflict',
  429: 'rate_limit_exceeded',
  500: 'server_error',
  503: 'service_unavailable',
};
