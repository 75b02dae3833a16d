/** Metrics and costs, system health, the resource sampler and GET /metrics (Prometheus). */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { HealthService } from './health.service';
export { MetricsResolver } from './metrics.resolver';
export { ResourceSampler } from './metrics.sampler';
export { MetricsService } from './metrics.service';
export { TASK_ROLLUP, metricsStore } from './metrics.store';
export { PRICES } from './pricing';
export { registerPrometheus } from './prometheus';
