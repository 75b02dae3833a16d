/** Executions: the API, the jobs and inline runs that drive the executor, their rows, run data and logs, notifications, maintenance and metrics. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { ControlPlaneExecutionListArgs, ExecuteWorkflowInput, ExecutionListArgs, TriggerWorkflowInput } from './inputs';
export { BinaryStore } from './binary.store';
export { registerBinaryDownloads } from './download';
export { ExecutionMaintenance } from './maintenance';
export { ENGINE_METRICS, EngineHealth, WorkflowMetrics, WorkflowMetricsService, WorkflowUsage } from './metrics';
export { ExecutionNotifier } from './notify';
export { EXECUTION_TALLY } from './reads.store';
export { ExecutionRunner, type ExecutionView } from './runner';
export { checkPayload, type ExecutionDetail, ExecutionService, MAX_PAYLOAD_BYTES } from './service';
export { controlPlaneStatus, engineExecutionUrl, fromControlPlaneStatus } from './status';
export { ExecutionBinary, ExecutionBudget, ExecutionDeletion, ExecutionLogEntry, ExecutionNodeData, WorkflowExecution, WorkflowExecutionPage } from './types';
