import { defineRoute } from '../route';
import { RateLimitStatusDocument } from './generated';

/** `{base_url}/v1/rate-limits/status`: shared by the control plane, prompt library and engine. */
export const rateLimitRoutes = [
  defineRoute({
    method: 'GET',
    path: '/rate-limits/status',
    operation: RateLimitStatusDocument,
  }),
];
