import type { AppError, FieldError } from '../../kernel/errors';
import { registerEnvelope, type Envelope } from '../../kernel/envelopes';

/** Its clients read one code per status; the platform's own code stays in `details.reason`. */
const INFRA_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'authentication_failed',
  403: 'insufficient_permissions',
  404: 'not_found',
  409: 'conflict',
  429: 'rate_limit_exceeded',
  500: 'server_error',
  503: 'service_unavailable',
};

/** The infrastructure service's answers: the resource itself (or {data, pagination} for lists); errors by status, as above. */
export const INFRA_ENVELOPE = registerEnvelope('infra', {
  codeByStatus: INFRA_CODES,
  success: (data) => data,
  error: (err, meta) => {
    const code = INFRA_CODES[err.status] ?? err.code.toLowerCase();
    const details = code === err.code || 'reason' in (err.details ?? {}) ? (err.details ?? {}) : { ...reasonOf(err), ...err.details };
    const retryAfter = err.status === 429 && typeof err.details?.retryAfter === 'number' ? { retryAfter: err.details.retryAfter } : {};
    return { error: code, message: err.message, details, requestId: meta.requestId, ...retryAfter };
  },
} satisfies Envelope);

/**
 * What `details` says first: for a refused field, the first one and why (the whole list stays in
 * `details.errors`); else the platform's own code.
 */
function reasonOf(err: AppError): { reason: string; field?: string } {
  const first = Array.isArray(err.details?.errors) ? (err.details.errors[0] as FieldError | undefined) : undefined;
  return first?.field ? { field: first.field, reason: first.reason ?? 'invalid_value' } : { reason: err.code };
}
