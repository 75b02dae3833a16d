import type { Surface } from './surface';
import { agentExecuteRoutes, apiKeyRoutes, orchestrationWorkflowRoutes, overviewWorkflowRoutes } from './surfaces/control-plane-api.routes';
import { controlPlaneRoutes } from './surfaces/control-plane.routes';
import { controlPlaneWorkflowRoutes } from './surfaces/control-plane-workflows.routes';
import { engineNativeRoutes, engineRoutes } from './surfaces/engine.routes';
import { orchestrationRoutes } from './surfaces/orchestration.routes';
import { promptlibRoutes } from './surfaces/promptlib.routes';
import { promptlibPlatformRoutes } from './surfaces/promptlib-platform.routes';
import { rateLimitRoutes } from './surfaces/rate-limits.routes';
import { linkRoutes } from './surfaces/links.routes';
import { feedbackRoutes } from './surfaces/feedback.routes';
import { infraRoutes } from './surfaces/infra.routes';
import { metricsRoutes } from './surfaces/metrics.routes';
import { auditRoutes } from './surfaces/audit.routes';

/** Every REST surface with its prefix and the name of the envelope it answers in. */
export const surfaces: Surface[] = [
  {
    name: 'v1',
    prefix: '/v1',
    envelope: 'v1',
    routes: [
      ...rateLimitRoutes,
      ...auditRoutes,
      ...controlPlaneRoutes,
      ...metricsRoutes,
      ...controlPlaneWorkflowRoutes,
      ...orchestrationRoutes,
      ...promptlibRoutes,
      ...engineRoutes,
    ],
  },
  {
    name: 'control-plane-api',
    prefix: '/control-plane/api/v1',
    envelope: 'platform',
    routes: [...apiKeyRoutes, ...agentExecuteRoutes, ...orchestrationWorkflowRoutes, ...overviewWorkflowRoutes],
    snakeCase: true,
  },
  {
    name: 'promptlib-api',
    prefix: '/promptlib/api/v1',
    envelope: 'platform',
    routes: [...promptlibPlatformRoutes],
    snakeCase: true,
  },
  {
    name: 'engine-api',
    prefix: '/engine/api/v1',
    envelope: 'platform',
    routes: [...engineNativeRoutes],
    engineKeyHeader: true,
  },
  { name: 'links', prefix: '/links', envelope: 'links', routes: linkRoutes, snakeCase: true },
  { name: 'feedback', prefix: '/feedback/api/v1', envelope: 'feedback', routes: feedbackRoutes, snakeCase: true },
  { name: 'infra', prefix: '/infra/api/v1', envelope: 'infra', routes: infraRoutes },
];
