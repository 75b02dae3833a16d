import { defineRoute } from '../route';

/** `{base_url}/v1/rate-limits/status`: shared by the control plane, prompt library and engine. */
export const rateLimitRoutes = [
  defineRoute({
    method: 'GET',
    path: '/rate-limits/status',
    operation: /* GraphQL */ `
      query RateLimitStatus {
        rateLimitStatus {
          tier
          limits {
            perMinute {
              limit
              remaining
              resetAt
            }
            perHour {
              limit
              remaining
              resetAt
            }
            perDay {
              limit
              remaining
              resetAt
            }
          }
          burst {
            limit
            remaining
          }
          concurrentExecutions
        }
      }
    `,
  }),
];
