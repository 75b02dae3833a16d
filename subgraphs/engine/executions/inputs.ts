import { IsIn, IsOptional, Max, Min } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { ArgsType, Field, ID, InputType, Int } from 'type-graphql';
import { EXECUTION_STATUSES } from './writes.store';
import { CONTROL_PLANE_STATUSES } from './status';

@InputType()
export class ExecuteWorkflowInput {
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'What the start node emits (at most 5 MB).' }) data?: Record<string, unknown>;
  @Field(() => String, { nullable: true, description: 'async (default): answer at once; sync: wait for the result.' })
  @IsOptional()
  @IsIn(['sync', 'async'])
  mode?: string;
  @Field(() => Int, { nullable: true, description: 'sync: seconds to wait (default 300); past it the answer is the running execution.' })
  @IsOptional()
  @Min(1)
  @Max(3600)
  timeout?: number;
}

@InputType({ description: 'The execution part of POST /v1/control-plane/workflows/trigger.' })
export class TriggerExecutionInput {
  @Field(() => String, { nullable: true, description: 'async (default): answer at once; sync: wait for the end.' }) mode?: string;
  @Field(() => Int, { nullable: true, description: 'sync: seconds to wait, 1 to 300 (default 300).' }) timeout?: number;
  @Field(() => String, { nullable: true, description: 'low, normal (default), high or critical (the queued run’s priority).' }) priority?: string;
}

@InputType({ description: 'Signed notifications of the execution (X-SVC-Signature: sha256=<hex HMAC-SHA256 of the body>).' })
export class TriggerWebhookInput {
  @Field(() => String, { nullable: true, description: 'HTTPS URL (http:// only with WEBHOOK_ALLOW_HTTP).' }) url?: string;
  @Field(() => [String], { nullable: true, description: 'execution.started, execution.completed, execution.failed, execution.waiting (default all).' })
  events?: string[];
  @Field(() => String, { nullable: true, description: 'Signing secret; without one deliveries are unsigned.' }) secret?: string;
}

@InputType({ description: 'The body of POST /v1/control-plane/workflows/trigger.' })
export class TriggerWorkflowInput {
  @Field(() => String, { nullable: true, description: 'Required: the workflow’s id, or its name as a slug (Order intake: order-intake).' })
  workflowId?: string;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Required: what the start node emits (at most 5 MB).' })
  payload?: Record<string, unknown>;
  @Field(() => TriggerExecutionInput, { nullable: true }) execution?: TriggerExecutionInput;
  @Field(() => TriggerWebhookInput, { nullable: true }) webhook?: TriggerWebhookInput;
  @Field(() => String, { nullable: true, description: 'Accepted and ignored (the key says live or test).' }) environment?: string;
}

@ArgsType()
export class ControlPlaneExecutionListArgs {
  @Field(() => ID, { nullable: true, description: 'An id or a slug.' }) workflowId?: string;
  @Field(() => String, { nullable: true, description: 'running, completed, failed, waiting or cancelled.' })
  @IsOptional()
  @IsIn(CONTROL_PLANE_STATUSES)
  status?: string;
  @Field(() => Date, { nullable: true, description: 'Started at or after.' }) startDate?: Date;
  @Field(() => Date, { nullable: true, description: 'Started at or before.' }) endDate?: Date;
  @Field(() => Int, { defaultValue: 20, description: '1 to 100.' }) @Min(1) @Max(100) limit: number;
  @Field(() => Int, { defaultValue: 0 }) @Min(0) offset: number;
}

@ArgsType()
export class ExecutionListArgs {
  @Field(() => ID, { nullable: true }) workflowId?: string;
  @Field(() => String, { nullable: true, description: 'running, success, error, waiting or canceled.' })
  @IsOptional()
  @IsIn(EXECUTION_STATUSES)
  status?: string;
  @Field(() => Date, { nullable: true, description: 'Started at or after.' }) startDate?: Date;
  @Field(() => Date, { nullable: true, description: 'Started at or before.' }) endDate?: Date;
  @Field(() => Int, { defaultValue: 20, description: '1 to 100.' }) @Min(1) @Max(100) limit: number;
  @Field(() => Int, { defaultValue: 0 }) @Min(0) offset: number;
}
