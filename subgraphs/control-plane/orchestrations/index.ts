/** Multi-stage orchestrations of agent tasks, with their gates, as the control plane's index.ts registers them. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { buildOrchestrations, orchestrationResolvers, orchestrationSubscription, orchestrationsSubscription } from './orchestration.module';
