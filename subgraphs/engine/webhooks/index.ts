/** Webhook triggers: registration, their own authentication, the inbound requests on /webhook/<path>, and their logs. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { webhookDoor, WebhookInbound } from './inbound';
export {
  CreateWorkflowWebhookInput,
  TestWorkflowWebhookInput,
  UpdateWorkflowWebhookInput,
  WorkflowWebhookListArgs,
  WorkflowWebhookLogArgs,
  WorkflowWebhookRegistrationInput,
  WorkflowWebhookRequestInput,
} from './inputs';
export { type TriggerView, WebhookTriggerService } from './service';
export {
  WorkflowWebhook,
  WorkflowWebhookDeletion,
  WorkflowWebhookLogPage,
  WorkflowWebhookPage,
  WorkflowWebhookReply,
  WorkflowWebhookStatistics,
  WorkflowWebhookTest,
} from './types';
