/** The node contract (what a node gets and returns), the shapes of a workflow definition, cron, and the engine's own `engine.*` nodes. */

import './codes';
export { code } from './code';
export { filter, ifNode, isExpression, manualTrigger, merge, noOp, scheduleTrigger, set, switchNode, webhook } from './core';
export { countRuns, cronProblem, isoWithOffset, nextRun, validTimezone } from './cron';
export { misfireProblem, misfireRuns, n8nIntervalSpec, n8nScheduleSpec, SCHEDULE_TRIGGER_TYPES, ScheduleRuleError, triggerSchedule } from './schedule-rules';
export {
  type Connection,
  type Connections,
  ON_ERROR,
  versionOf,
  type WorkflowDefinition,
  workflowInvalid,
  type WorkflowNode,
  type WorkflowSettings,
} from './definition';
export { executeWorkflow, respondToWebhook, wait } from './flow';
export { HTTP_AUTH_TYPES, httpRequest } from './http-request';
export { binaryBuffer, DEFAULT_BINARY_KEY, prepareBinary, WebhookFile, webhookFile } from './binary';
export { WorkflowStaticData } from './static-data';
export { LAST_NODE_DATA, RESPONSE_MODES, webhookAnswerOptions } from './webhook-answer';
export { agent, prompt } from './platform';
export {
  type CredentialRef,
  isPlainObject,
  type Item,
  isOneOf,
  listOf,
  objectOf,
  type ItemLineage,
  type NodeContext,
  type NodeCredentials,
  type NodeDefinition,
  NodeError,
  type NodeResult,
  type NodeServices,
  type PairedItemData,
  type LastNodeData,
  type PromptTestRequest,
  type ResponseMode,
  type ResumeWebhookOptions,
  type SourceData,
  type TaskRequest,
  toItems,
  type WebhookAnswerOptions,
  type WebhookReply,
} from './types';
export {
  BUDGET_DESCRIPTIONS,
  BUDGET_VARIABLES,
  BudgetExceeded,
  type BudgetName,
  checkBinary,
  checkItems,
  checkRunData,
  durationLimit,
  type ExecutionBudgets,
  UNLIMITED,
  Yielder,
} from './budgets';
