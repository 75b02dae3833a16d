/** Webhook triggers: registration, their own authentication, the inbound requests on /webhook/<path>, and their logs. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { WebhookInbound, webhookDoor } from './inbound';
export { WorkflowWebhookRegistrationInput } from './inputs';
export { toWebhook, WebhookTriggerResolver } from './resolver';
export { WebhookTriggerService } from './service';
export { WorkflowWebhook } from './types';
