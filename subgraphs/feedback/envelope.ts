import { registerEnvelope, type Envelope } from '../../kernel/envelopes';

/** The feature-request service's answers: a message beside the data; an error's `error` is its code, the field problems in `details`. */
export const FEEDBACK_ENVELOPE = registerEnvelope('feedback', {
  success: (data, _meta, message) => ({ success: true, message: message ?? 'OK', data }),
  error: (err) => ({ success: false, message: err.message, error: err.code, details: err.details ?? {} }),
} satisfies Envelope);
