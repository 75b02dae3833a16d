import { errorBody, registerEnvelope, type Envelope } from '../../kernel/envelopes';

/** The link service's answers (its REST surface and its own routes): no meta. */
export const LINKS_ENVELOPE = registerEnvelope('links', {
  success: (data) => ({ success: true, data }),
  error: (err) => ({ success: false, error: errorBody(err) }),
} satisfies Envelope);
