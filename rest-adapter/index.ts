import { envelopes } from './envelopes';
import type { Surface } from './surface';
import { apiKeyRoutes } from './surfaces/control-plane-api.routes';
import { rateLimitRoutes } from './surfaces/rate-limits.routes';

/** Every REST surface with its prefix (CONTRACT.md section 2) and envelope (section 6). */
export const surfaces: Surface[] = [
  { name: 'v1', prefix: '/v1', envelope: envelopes.v1, routes: [...rateLimitRoutes] },
  {
    name: 'control-plane-api',
    prefix: '/control-plane/api/v1',
    envelope: envelopes.platform,
    routes: [...apiKeyRoutes],
    snakeCase: true,
  },
];
