import { IsOptional, Max, Min } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { ArgsType, Field, ID, InputType, Int } from 'type-graphql';

@InputType({ description: 'How callers authenticate. Secrets are stored hashed (HMAC: encrypted) and never returned.' })
export class WorkflowWebhookAuthenticationInput {
  @Field({ description: 'none, apiKey, hmac, basic or oauth (bearer token).' }) type: string;
  @Field(() => String, { nullable: true, description: 'apiKey: the header carrying the key (default X-API-Key).' }) apiKeyHeader?: string;
  @Field(() => String, { nullable: true, description: 'apiKey: the key callers must send (8+ characters).' }) apiKeyValue?: string;
  @Field(() => String, { nullable: true, description: 'hmac: the shared secret (8+ characters).' }) hmacSecret?: string;
  @Field(() => String, { nullable: true, description: 'hmac: the header carrying the hex signature (default X-Signature).' }) hmacHeader?: string;
  @Field(() => String, { nullable: true, description: 'hmac: sha256 (default), sha1 or sha512.' }) hmacAlgorithm?: string;
  @Field(() => String, { nullable: true, description: 'basic: the user name.' }) username?: string;
  @Field(() => String, { nullable: true, description: 'basic: the password (8+ characters).' }) password?: string;
  @Field(() => String, { nullable: true, description: 'oauth: the bearer token callers must send (16+ characters).' }) token?: string;
}

@InputType()
export class WorkflowWebhookRateLimitInput {
  @Field(() => Int, { description: 'Window in milliseconds (1000 to 86400000).' }) windowMs: number;
  @Field(() => Int) maxRequests: number;
  @Field(() => String, { nullable: true, description: 'ip (default), global, or header:<name>.' }) keyBy?: string;
}

@InputType()
export class CreateWorkflowWebhookInput {
  @Field(() => ID) workflowId: string;
  @Field({ description: 'e.g. /orders/new: served at /webhook/orders/new.' }) path: string;
  @Field({ description: 'GET, POST, PUT, PATCH or DELETE.' }) method: string;
  @Field(() => WorkflowWebhookAuthenticationInput, { nullable: true }) authentication?: WorkflowWebhookAuthenticationInput;
  @Field(() => String, { nullable: true, description: 'onReceived (default) or lastNode.' }) responseMode?: string;
  @Field(() => WorkflowWebhookRateLimitInput, { nullable: true }) rateLimit?: WorkflowWebhookRateLimitInput;
  @Field(() => Boolean, { nullable: true, description: 'Default true.' }) active?: boolean;
}

@InputType({ description: 'The control plane’s POST /workflows/{workflowId}/webhooks (the workflow is the path’s).' })
export class WorkflowWebhookRegistrationInput {
  @Field({ description: 'e.g. /orders/new: served at /webhook/orders/new.' }) path: string;
  @Field({ description: 'GET, POST, PUT, PATCH or DELETE.' }) method: string;
  @Field(() => WorkflowWebhookAuthenticationInput, { nullable: true, description: 'type none, apiKey (header: apiKeyHeader), hmac (hmacSecret) or oauth.' })
  authentication?: WorkflowWebhookAuthenticationInput;
  @Field(() => String, { nullable: true, description: 'onReceived (default) or lastNode.' }) responseMode?: string;
  @Field(() => WorkflowWebhookRateLimitInput, { nullable: true }) rateLimit?: WorkflowWebhookRateLimitInput;
  @Field(() => Boolean, { nullable: true, description: 'Default true.' }) active?: boolean;
}

@InputType()
export class UpdateWorkflowWebhookInput {
  @Field(() => WorkflowWebhookAuthenticationInput, {
    nullable: true,
    description: 'Replaces the authentication; the same type without a secret keeps the stored secret.',
  })
  authentication?: WorkflowWebhookAuthenticationInput;
  @Field(() => Boolean, { nullable: true }) active?: boolean;
  @Field(() => String, { nullable: true }) responseMode?: string;
  @Field(() => WorkflowWebhookRateLimitInput, { nullable: true, description: 'null removes the rate limit.' }) rateLimit?: WorkflowWebhookRateLimitInput | null;
  @Field(() => String, { nullable: true }) path?: string;
  @Field(() => String, { nullable: true }) method?: string;
}

@InputType({ description: 'A made-up request to a trigger: data is sent as the JSON body.' })
export class TestWorkflowWebhookInput {
  @Field(() => GraphQLJSONObject, { nullable: true }) data?: Record<string, unknown>;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Request headers, authentication headers included.' }) headers?: Record<string, unknown>;
  @Field(() => GraphQLJSONObject, { nullable: true }) query?: Record<string, unknown>;
}

@InputType({ description: 'An inbound request on /webhook/<path>, as the webhook surface hands it over.' })
export class WorkflowWebhookRequestInput {
  @Field({ description: 'The path after /webhook/.' }) path: string;
  @Field() method: string;
  @Field(() => GraphQLJSONObject, { nullable: true }) headers?: Record<string, unknown>;
  @Field(() => GraphQLJSONObject, { nullable: true }) query?: Record<string, unknown>;
  @Field(() => String, { nullable: true, description: 'The raw body, base64 (bodyEncoding base64, default) or text (utf8).' }) body?: string;
  @Field(() => String, { nullable: true }) bodyEncoding?: string;
  @Field(() => Boolean, { nullable: true, description: 'The body was over 5 MB and was not read.' }) bodyTooLarge?: boolean;
}

@ArgsType()
export class WorkflowWebhookListArgs {
  @Field(() => ID, { nullable: true }) workflowId?: string;
  @Field(() => Boolean, { nullable: true }) active?: boolean;
  @Field(() => Int, { defaultValue: 20, description: '1 to 100.' }) @Min(1) @Max(100) limit: number;
  @Field(() => Int, { defaultValue: 0 }) @Min(0) offset: number;
}

@ArgsType()
export class WorkflowWebhookLogArgs {
  @Field(() => ID) webhookId: string;
  @Field(() => Int, { defaultValue: 50, description: '1 to 500.' }) @Min(1) @Max(500) limit: number;
  @Field(() => Int, { defaultValue: 0 }) @Min(0) offset: number;
  @Field(() => String, { nullable: true, description: 'success, failed or rejected.' }) @IsOptional() status?: string;
}
