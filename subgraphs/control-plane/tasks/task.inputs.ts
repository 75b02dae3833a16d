import { ArgsType, Field, Float, ID, InputType, Int } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

/** Shapes only: the rules are TaskService's (it is called directly too, by orchestrations). */

@InputType('TaskForgeInput')
export class TaskForgeInput {
  @Field(() => String, { nullable: true, description: 'RESEARCH, DESIGN, IMPLEMENT, VERIFY, DEPLOY or MONITOR.' }) stage?: string;
  @Field(() => Boolean, { nullable: true, description: 'Check the entry gate of `stage` against `outputs` first (GATE_VALIDATION_FAILED).' })
  validateGates?: boolean;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Outputs of previous stages (criterion name -> value).' })
  outputs?: Record<string, unknown>;
}

@InputType('TaskExecutionInput')
export class TaskExecutionInput {
  @Field(() => String, { nullable: true, description: 'async (default: answer at once) or sync (wait for the end, at most 300 s).' })
  mode?: 'async' | 'sync';
  @Field(() => Int, { nullable: true, description: 'Seconds, 5 to 3600 (default 300): past it the task fails with TASK_TIMEOUT.' })
  timeout?: number;
  @Field(() => String, { nullable: true, description: 'low, normal (default), high or critical.' }) priority?: 'low' | 'normal' | 'high' | 'critical';
}

@InputType('TaskWebhookInput')
export class TaskWebhookInput {
  @Field({ description: 'HTTPS endpoint for the task events.' }) url: string;
  @Field(() => [String], { nullable: true, description: 'task.started, task.completed, task.failed (default all).' }) events?: string[];
  @Field(() => String, { nullable: true, description: 'Signs each delivery: X-SVC-Signature sha256=<hex HMAC-SHA256 of the body>.' })
  secret?: string;
}

@InputType('TaskModelConfigInput')
export class TaskModelConfigInput {
  @Field(() => String, { nullable: true, description: 'One of LLM_MODELS (default the first).' }) model?: string;
  @Field(() => Float, { nullable: true, description: '0.0 to 1.0 (default 0.2).' }) temperature?: number;
  @Field(() => Int, { nullable: true, description: '1 to 128000.' }) maxTokens?: number;
}

@InputType('ExecuteTaskInput')
export class ExecuteTaskInputType {
  @Field() agentId: string;
  @Field({ description: 'One of the agent’s capabilities.' }) taskType: string;
  @Field(() => GraphQLJSONObject, { description: 'Task-specific fields; the task type’s required inputs must be present.' })
  context: Record<string, unknown>;
  @Field(() => TaskForgeInput, { nullable: true }) forge?: TaskForgeInput;
  @Field(() => TaskExecutionInput, { nullable: true }) execution?: TaskExecutionInput;
  @Field(() => TaskWebhookInput, { nullable: true }) webhook?: TaskWebhookInput;
  @Field(() => TaskModelConfigInput, { nullable: true }) config?: TaskModelConfigInput;
}

@ArgsType()
export class TaskListArgs {
  @Field(() => String, { nullable: true }) agentId?: string;
  @Field(() => String, { nullable: true, description: 'queued, running, completed, failed or cancelled.' }) status?: string;
  @Field(() => String, { nullable: true }) taskType?: string;
  @Field(() => ID, { nullable: true }) orchestrationId?: string;
  @Field(() => Int, { nullable: true, description: '1 to 100, default 20.' }) limit?: number;
  @Field(() => Int, { nullable: true, description: 'Default 0.' }) offset?: number;
  @Field(() => String, { nullable: true, description: 'createdAt (default), completedAt or duration.' }) sortBy?: string;
  @Field(() => String, { nullable: true, description: 'asc or desc (default).' }) sortOrder?: string;
}
