import { ArrayMaxSize, IsIn, IsInt, IsOptional, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, InputType, Int } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { ORCHESTRATION_STATUSES } from './orchestration.store';

@InputType()
export class OrchestrationExitGateInput {
  @Field(() => [String], { nullable: true, description: 'Criterion names the stage’s outputs must carry; absent: the catalogue’s required criteria.' })
  required?: string[] | null;
}

@InputType({ description: 'Turns on the exit gate of the stage.' })
export class OrchestrationGateInput {
  @Field(() => OrchestrationExitGateInput, { nullable: true }) exit?: OrchestrationExitGateInput | null;
}

@InputType()
export class OrchestrationTaskInput {
  @Field(() => String, { nullable: true, description: 'A name for dependencies to use (default: the agentId).' }) id?: string | null;
  @Field() agentId: string;
  @Field() taskType: string;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Task-specific input; default {}.' }) context?: Record<string, unknown> | null;
  @Field(() => [String], { nullable: true, description: 'stage:<STAGE> of an earlier stage, or a task id / agentId; empty: none.' })
  dependencies?: string[] | null;
}

@InputType()
export class OrchestrationStageInput {
  @Field({ description: 'RESEARCH, DESIGN, IMPLEMENT, VERIFY, DEPLOY or MONITOR; stages are given in that order.' }) stage: string;
  @Field(() => [OrchestrationTaskInput]) tasks: OrchestrationTaskInput[];
  @Field(() => Boolean, { nullable: true, description: 'Run the tasks at once (still honouring dependencies); default false: in order.' })
  parallel?: boolean | null;
  @Field(() => OrchestrationGateInput, {
    nullable: true,
    description: 'Validate the exit gate when the tasks are done; a failed gate fails the orchestration.',
  })
  gateValidation?: OrchestrationGateInput | null;
}

@InputType()
export class OrchestrationWebhookInput {
  @Field({ description: 'HTTPS callback URL.' }) url: string;
  @Field(() => [String], { nullable: true, description: 'orchestration.stage_completed, orchestration.completed, orchestration.failed; default all.' })
  events?: string[] | null;
  @Field(() => String, { nullable: true, description: 'Signs deliveries: X-SVC-Signature sha256=<HMAC-SHA256 of the body>.' }) secret?: string | null;
}

@InputType()
export class CreateOrchestrationInput {
  @Field() @Length(1, 200) name: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 10_000) description?: string | null;
  @Field(() => [OrchestrationStageInput], { description: 'Executed in sequence.' }) stages: OrchestrationStageInput[];
  @Field(() => OrchestrationWebhookInput, { nullable: true }) webhook?: OrchestrationWebhookInput | null;
}

@InputType()
export class OrchestrationWorkflowAgentInput {
  @Field() agentId: string;
  @Field({ description: 'The stage the agent works in.' }) stage: string;
  @Field(() => String, { nullable: true, description: 'Default: the agent’s first capability.' }) taskType?: string | null;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Default: the workflow’s context, else {}.' }) context?: Record<string, unknown> | null;
}

@InputType({ description: 'The alternate layout’s workflow: agents grouped by stage into an orchestration.' })
export class CreateOrchestrationWorkflowInput {
  @Field() @Length(1, 200) name: string;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(0, 10_000) description?: string | null;
  @Field(() => [OrchestrationWorkflowAgentInput]) @ArrayMaxSize(100) agents: OrchestrationWorkflowAgentInput[];
  @Field(() => Boolean, { nullable: true, description: 'Validate every stage’s exit gate (the catalogue’s required criteria); default true.' })
  forgeValidation?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: 'Run a stage’s agents at once; default true.' }) parallel?: boolean | null;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Context given to every agent that has none of its own.' })
  context?: Record<string, unknown> | null;
  @Field(() => OrchestrationWebhookInput, { nullable: true }) webhook?: OrchestrationWebhookInput | null;
}

@ArgsType()
export class OrchestrationListArgs {
  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsIn(ORCHESTRATION_STATUSES, { message: `must be one of ${ORCHESTRATION_STATUSES.join(', ')}` })
  status?: string | null;
  @Field(() => String, { nullable: true, description: 'The current stage.' }) stage?: string | null;
  @Field(() => Int, { nullable: true, defaultValue: 20 }) @IsOptional() @IsInt() @Min(1) @Max(100) limit?: number;
  @Field(() => Int, { nullable: true, defaultValue: 0 }) @IsOptional() @IsInt() @Min(0) offset?: number;
}

@ArgsType()
export class OrchestrationArgs {
  @Field(() => ID) orchestrationId: string;
  @Field(() => Boolean, { nullable: true, defaultValue: false, description: 'Include each stage’s tasks.' }) includeTaskDetails?: boolean | null;
}
