import type { AppError } from './errors';

export interface Meta {
  requestId: string;
  /** ISO 8601 with milliseconds. */
  timestamp: string;
}

/** How one surface wraps its answers. */
export interface Envelope {
  success(data: unknown, meta: Meta, message?: string): unknown;
  error(err: AppError, meta: Meta): unknown;
  /** Where the envelope names errors by status rather than by the platform's code: the name of each. */
  codeByStatus?: Readonly<Record<number, string>>;
}

/** An error as most envelopes carry it: `{code, message, details}`. */
export const errorBody = (err: AppError) => ({ code: err.code, message: err.message, details: err.details ?? {} });

/** The envelopes several services answer in; a service's own is declared in its folder (registerEnvelope). */
export const envelopes = {
  /** /v1/... (control plane, prompt library, engine main layout) */
  v1: {
    success: (data, meta) => ({ success: true, data, meta }),
    error: (err, meta) => ({ success: false, error: errorBody(err), meta }),
  },
  /** /control-plane/api/v1, /promptlib/api/v1, /engine/api/v1 */
  platform: {
    success: (data, meta) => ({ success: true, data, metadata: { timestamp: meta.timestamp, request_id: meta.requestId } }),
    error: (err, meta) => ({ success: false, error: errorBody(err), metadata: { timestamp: meta.timestamp, request_id: meta.requestId } }),
  },
  /** /webhook/...: a trigger's answer is the workflow's own; its refusals are built by the engine (inbound) and the surface. */
  webhook: {
    success: (data) => data,
    error: (err) => ({ success: false, error: errorBody(err) }),
  },
} satisfies Record<string, Envelope>;

const byName = new Map<string, Envelope>(Object.entries(envelopes));

/** Declares a service's own envelope under its name (from the service's module, at load), for the REST surfaces that answer in it. */
export function registerEnvelope<E extends Envelope>(name: string, envelope: E): E {
  const known = byName.get(name);
  if (known && known !== envelope) throw new Error(`An envelope named ${name} is already declared`);
  byName.set(name, envelope);
  return envelope;
}

/** The envelope of that name: a kernel one or one a service registered. */
export function envelopeOf(name: string): Envelope {
  const envelope = byName.get(name);
  if (!envelope) throw new Error(`No envelope named ${name}: the service that answers in it declares it with registerEnvelope`);
  return envelope;
}
