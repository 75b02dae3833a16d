import type { AppError } from '../kernel/errors';

export interface Meta {
  requestId: string;
  /** ISO 8601 with milliseconds. */
  timestamp: string;
}

/** How one surface wraps its answers (CONTRACT.md section 6). */
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
  /** /infra/api/v1: the resource itself, or {data, pagination} for lists */
  infra: {
    success: (data) => data,
    error: (err, meta) => ({ error: err.code, message: err.message, details: err.details ?? {}, requestId: meta.requestId }),
  },
} satisfies Record<string, Envelope>;
