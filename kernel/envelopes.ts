import { withTraceId, type AppError } from './errors';

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

/**
 * The one place an error becomes an envelope: every envelope, the kernel's and the ones services
 * register, shapes the error with the active trace's id in its details (`details.traceId`) when
 * the request is traced, and as it is when tracing is off.
 */
function traced<E extends Envelope>(envelope: E): E {
  return { ...envelope, error: (err: AppError, meta: Meta) => envelope.error(withTraceId(err), meta) };
}

/** The envelopes several services answer in; a service's own is declared in its folder (registerEnvelope). */
const kernelEnvelopes = {
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

export const envelopes = {
  v1: traced(kernelEnvelopes.v1),
  platform: traced(kernelEnvelopes.platform),
  webhook: traced(kernelEnvelopes.webhook),
};

const byName = new Map<string, Envelope>(Object.entries(envelopes));
const declared = new Map<string, Envelope>();

/**
 * Declares a service's own envelope under its name (from the service's module, at load), for the
 * REST surfaces that answer in it. The service answers in what this returns (its errors traced).
 */
export function registerEnvelope<E extends Envelope>(name: string, envelope: E): E {
  const known = byName.get(name);
  if (known && declared.get(name) !== envelope) throw new Error(`An envelope named ${name} is already declared`);
  if (known) return known as E;
  const wrapped = traced(envelope);
  byName.set(name, wrapped);
  declared.set(name, envelope);
  return wrapped;
}

/** The envelope of that name: a kernel one or one a service registered. */
export function envelopeOf(name: string): Envelope {
  const envelope = byName.get(name);
  if (!envelope) throw new Error(`No envelope named ${name}: the service that answers in it declares it with registerEnvelope`);
  return envelope;
}
