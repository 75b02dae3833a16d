import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Directive, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { PageInfo } from '../../../kernel/graphql-types';

@ObjectType({ description: 'How callers authenticate to the webhook. Secrets are never returned.' })
export class WorkflowWebhookAuthentication {
  @Field({ description: 'none, apiKey, hmac, basic or oauth (bearer token).' }) type: string;
  @Field(() => String, { nullable: true }) apiKeyHeader?: string;
  @Field(() => String, { nullable: true }) hmacHeader?: string;
  @Field(() => String, { nullable: true }) hmacAlgorithm?: string;
  @Field(() => String, { nullable: true }) username?: string;
}

@ObjectType()
export class WorkflowWebhookRateLimit {
  @Field(() => Int) windowMs: number;
  @Field(() => Int) maxRequests: number;
  @Field({ description: 'ip, global or header:<name>.' }) keyBy: string;
}

@ObjectType({ description: 'From the request logs (test calls excluded).' })
export class WorkflowWebhookStatistics {
  @Field(() => Int) totalRequests: number;
  @Field(() => Int) successfulRequests: number;
  @Field(() => Int, { description: 'Failed and rejected requests.' }) failedRequests: number;
  @Field(() => Int) rejectedRequests: number;
  @Field(() => Float, { description: 'Milliseconds.' }) averageResponseTime: number;
  @Field(() => Date, { nullable: true }) lastTriggered: Date | null;
}

@ObjectType({ description: 'An inbound webhook that starts a workflow: /webhook/<path>.' })
@Directive('@key(fields: "webhookId")')
export class WorkflowWebhook {
  @Field(() => ID) webhookId: string;
  @Field(() => ID) workflowId: string;
  @Field() workflowName: string;
  @Field({ description: 'The registered path, with a leading slash.' }) path: string;
  @Field({ description: 'Where callers send requests, relative to the platform address: /webhook/<path>.' }) url: string;
  @Field() method: string;
  @Field(() => WorkflowWebhookAuthentication) authentication: WorkflowWebhookAuthentication;
  @Field({ description: 'onReceived (answer at once with the execution id) or lastNode (answer with the workflow’s result).' })
  responseMode: string;
  @Field(() => WorkflowWebhookRateLimit, { nullable: true }) rateLimit: WorkflowWebhookRateLimit | null;
  @Field() active: boolean;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
}

@ObjectType()
export class WorkflowWebhookPage {
  @Field(() => [WorkflowWebhook]) webhooks: WorkflowWebhook[];
  @Field(() => PageInfo) pagination: PageInfo;
}

@ObjectType()
export class WorkflowWebhookDeletion {
  @Field(() => ID) webhookId: string;
  @Field() deletedAt: Date;
}

@ObjectType()
export class WorkflowWebhookLog {
  @Field() timestamp: Date;
  @Field() method: string;
  @Field(() => String, { nullable: true }) sourceIp: string | null;
  @Field({ description: 'success, failed or rejected.' }) status: string;
  @Field(() => String, { nullable: true, description: 'Why a request was rejected or failed (missing_credentials, invalid_signature, rate_limited, …).' })
  reason: string | null;
  @Field(() => Int, { description: 'The HTTP status answered.' }) statusCode: number;
  @Field(() => Int, { description: 'Milliseconds.' }) responseTime: number;
  @Field(() => ID, { nullable: true }) executionId: string | null;
  @Field({ description: 'Made by the test operation.' }) test: boolean;
}

@ObjectType()
export class WorkflowWebhookLogPage {
  @Field(() => ID) webhookId: string;
  @Field(() => [WorkflowWebhookLog]) logs: WorkflowWebhookLog[];
  @Field(() => PageInfo) pagination: PageInfo;
}

@ObjectType({ description: 'An HTTP answer: what /webhook/<path> sends back.' })
export class WorkflowWebhookReply {
  @Field(() => Int) status: number;
  @Field(() => GraphQLJSONObject) headers: Record<string, string>;
  @Field(() => GraphQLJSON, { nullable: true, description: 'JSON, or a string sent as is (a file: its bytes in base64, see bodyEncoding).' }) body: unknown;
  @Field(() => String, { nullable: true, description: '"base64" when the body is a file, its bytes base64-encoded; else null.' })
  bodyEncoding?: 'base64' | null;
}

@ObjectType()
export class WorkflowWebhookTestResult {
  @Field() status: string;
  @Field(() => Int, { nullable: true }) duration: number | null;
}

@ObjectType()
export class WorkflowWebhookTest {
  @Field(() => ID, { nullable: true }) testExecutionId: string | null;
  @Field(() => WorkflowWebhookReply) webhookResponse: WorkflowWebhookReply;
  @Field(() => WorkflowWebhookTestResult, { nullable: true }) workflowResult: WorkflowWebhookTestResult | null;
}
