/** Executions: the API, the jobs and inline runs that drive the executor, their rows, run data and logs, notifications, maintenance and metrics. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { ControlPlaneExecutionListArgs, TriggerWorkflowInput } from './inputs';
export { ExecutionMaintenance } from './maintenance';
export { WorkflowMetricsResolver, WorkflowMetricsService } from './metrics';
export { ExecutionNotifier } from './notify';
export { EXECUTION_TALLY } from './reads.store';
export { ExecutionResolver, toExecution } from './resolver';
export { ExecutionRunner, type ExecutionView } from './runner';
export { checkPayload, ExecutionService, MAX_PAYLOAD_BYTES } from './service';
export { fromControlPlaneStatus } from './status';
export { WorkflowExecution, WorkflowExecutionPage } from './types';
