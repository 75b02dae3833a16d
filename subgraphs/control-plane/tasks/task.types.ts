import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { PageInfo } from '../../../kernel/graphql-types';

@ObjectType({ description: 'How far a task is: percentage 0 to 100 and the step it is on.' })
export class TaskProgress {
  @Field(() => Float) percentage: number;
  @Field() currentStep: string;
  @Field(() => Int) stepsCompleted: number;
  @Field(() => Int) stepsTotal: number;
}

@ObjectType({ description: 'What a completed task produced.' })
export class TaskResult {
  @Field(() => GraphQLJSONObject, { description: 'The agent domain’s output fields (see the agent’s `outputs`), always with `summary`.' })
  output: Record<string, unknown>;
  @Field(() => [String]) filesCreated: string[];
  @Field(() => [String]) filesModified: string[];
  @Field(() => Int) linesWritten: number;
  @Field({ description: 'The model that answered ("offline:<model>" for the offline provider).' }) model: string;
  @Field(() => Int) tokensUsed: number;
  @Field({ description: 'The prompt-library prompt the task ran (`<agentId>-<taskType>`).' }) promptId: string;
  @Field(() => Int) promptVersion: number;
}

@ObjectType({ description: 'Why a task failed: TASK_TIMEOUT, GATE_VALIDATION_FAILED, PROMPT_NOT_FOUND, upstream_error, agent_execution_failed…' })
export class TaskError {
  @Field() code: string;
  @Field() message: string;
  @Field(() => GraphQLJSONObject) details: Record<string, unknown>;
}

@ObjectType({ description: 'A file a task wrote.' })
export class TaskArtifact {
  @Field() path: string;
  @Field({ description: 'created or modified.' }) kind: string;
  @Field(() => Int) lines: number;
  @Field(() => Int) bytes: number;
  @Field() content: string;
  @Field() createdAt: Date;
}

@ObjectType({ description: 'An agent task (one execution of an agent).' })
export class Task {
  @Field(() => ID) taskId: string;
  @Field({ description: 'queued, running, completed, failed or cancelled.' }) status: string;
  @Field() agentId: string;
  @Field() taskType: string;
  @Field({ description: 'low, normal, high or critical.' }) priority: string;
  @Field({ description: 'async or sync.' }) mode: string;
  @Field(() => Int, { description: 'execution.timeout in seconds.' }) timeout: number;
  @Field(() => GraphQLJSONObject) context: Record<string, unknown>;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'stage, validateGates, outputs as given.' }) forge: Record<string, unknown> | null;
  @Field(() => TaskProgress, { nullable: true, description: 'Set once the task runs; kept afterwards to show how far it got.' })
  progress: TaskProgress | null;
  @Field(() => TaskResult, { nullable: true, description: 'When completed.' }) result: TaskResult | null;
  @Field(() => TaskError, { nullable: true, description: 'When failed.' }) error: TaskError | null;
  @Field() createdAt: Date;
  @Field(() => Date, { nullable: true }) startedAt: Date | null;
  @Field(() => Date, { nullable: true }) completedAt: Date | null;
  @Field(() => Date, { nullable: true }) failedAt: Date | null;
  @Field(() => Date, { nullable: true }) cancelledAt: Date | null;
  @Field(() => String, { nullable: true }) cancelReason: string | null;
  @Field(() => Float, { description: 'Seconds, from the history of this agent and task type at creation.' }) estimatedDuration: number;
  @Field(() => Date, { nullable: true, description: 'While queued or running: start (or creation) plus estimatedDuration.' })
  estimatedCompletionAt: Date | null;
  @Field(() => Float, { nullable: true, description: 'Seconds from start to end.' }) duration: number | null;
  @Field(() => ID, { nullable: true, description: 'The orchestration that runs the task, if any.' }) orchestrationId: string | null;
  @Field(() => String, { nullable: true, description: 'Its stage in that orchestration.' }) stage: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'The trace (OpenTelemetry trace id) of the request that created the task, its job and model calls; null when tracing was off.',
  })
  traceId: string | null;
  @Field(() => Int, { description: 'Raised by every change of the task: of two states, the higher version is the newer.' }) version: number;
}

@ObjectType()
export class TaskList {
  @Field(() => [Task]) tasks: Task[];
  @Field(() => PageInfo) pagination: PageInfo;
}
