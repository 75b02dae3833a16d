/**
 * The engine's GraphQL resolvers, thin: each calls its folder's service. The module loads them in
 * this order, which is the order of their fields in the schema.
 */

export { ExecutionResolver, toExecution } from './executions';
export { toWorkflow, WorkflowResolver } from './workflows';
export { ControlPlaneWorkflowResolver } from './control-plane';
export { WorkflowMetricsResolver } from './metrics';
export { ScheduleResolver } from './schedules';
export { toWebhook, WebhookTriggerResolver } from './webhooks';
export { CredentialResolver } from './credentials';
export { toVariable, VariableResolver } from './variables';
