import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { PageInfo } from '../../../kernel/graphql-types';
import { GateValidationResultType as GateValidationResult } from '../gates';

@ObjectType({ description: 'How far an orchestration is.' })
export class OrchestrationProgress {
  @Field(() => Int) stagesCompleted: number;
  @Field(() => Int) stagesTotal: number;
  @Field(() => Int) tasksCompleted: number;
  @Field(() => Int) tasksTotal: number;
  @Field(() => Float, { description: 'Percent: completed stages plus the completed share of the current stage, over all stages.' })
  overallPercentage: number;
}

@ObjectType({ description: 'The exit gate of a stage.' })
export class StageGateValidation {
  @Field({ description: 'Whether the exit gate is validated when the stage’s tasks are done (gateValidation given, or forge_validation on).' })
  enabled: boolean;
  @Field(() => [String], { nullable: true, description: 'gateValidation.exit.required as given; absent: the catalogue’s required criteria.' })
  required: string[] | null;
  @Field(() => Boolean, { nullable: true, description: 'Set once the gate was validated; absent while the stage runs or when it is not gated.' })
  exitGatePassed: boolean | null;
  @Field(() => [String], { description: 'Names of the outputs the stage’s tasks produced.' }) outputs: string[];
  @Field(() => GateValidationResult, { nullable: true, description: 'The full validation result.' })
  validation: GateValidationResult | null;
}

@ObjectType({ description: 'A task of an orchestration stage.' })
export class OrchestrationTask {
  @Field({ description: 'The name dependencies use: the task’s id as given, else its agentId.' }) key: string;
  @Field(() => ID, { nullable: true, description: 'The control-plane task, once started (GET /v1/control-plane/agents/tasks/{taskId}).' })
  taskId: string | null;
  @Field() agentId: string;
  @Field() taskType: string;
  @Field({ description: 'pending (not started), running (queued or running), completed, failed or cancelled.' }) status: string;
  @Field(() => [String]) dependencies: string[];
  @Field(() => Float, { description: 'Percent.' }) progress: number;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'The task’s result once completed.' }) result: Record<string, unknown> | null;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'The task’s error once failed.' }) error: Record<string, unknown> | null;
  @Field(() => Date, { nullable: true }) startedAt: Date | null;
  @Field(() => Date, { nullable: true }) completedAt: Date | null;
}

@ObjectType({ description: 'A stage inside an orchestration.' })
export class OrchestrationStage {
  @Field({ description: 'RESEARCH, DESIGN, IMPLEMENT, VERIFY, DEPLOY or MONITOR.' }) stage: string;
  @Field({ description: 'pending, running, completed, failed (its exit gate or a task failed) or cancelled (running when the orchestration was cancelled).' })
  status: string;
  @Field() parallel: boolean;
  @Field(() => Int) tasksTotal: number;
  @Field(() => Int) tasksCompleted: number;
  @Field(() => Date, { nullable: true }) startedAt: Date | null;
  @Field(() => Date, { nullable: true }) completedAt: Date | null;
  @Field(() => Float, { nullable: true, description: 'Seconds, once completed.' }) duration: number | null;
  @Field(() => [OrchestrationTask], { nullable: true, description: 'Only with includeTaskDetails.' }) tasks: OrchestrationTask[] | null;
  @Field(() => StageGateValidation) gateValidation: StageGateValidation;
}

@ObjectType({ description: 'The outcome of a completed orchestration.' })
export class OrchestrationResult {
  @Field() success: boolean;
  @Field(() => Int) stagesCompleted: number;
  @Field(() => Int) tasksCompleted: number;
  @Field(() => GraphQLJSONObject, { description: 'The merged outputs of every stage.' }) outputs: Record<string, unknown>;
}

@ObjectType({ description: 'Why an orchestration failed: forge_gate_failure (details gate, failed_criteria) or the failed task’s error.' })
export class OrchestrationError {
  @Field() code: string;
  @Field() message: string;
  @Field(() => GraphQLJSONObject, { nullable: true }) details: Record<string, unknown> | null;
}

@ObjectType({ description: 'A multi-agent orchestration: ordered stages of the six-stage delivery model, each with tasks and an exit gate.' })
export class Orchestration {
  @Field(() => ID) orchestrationId: string;
  @Field() name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field({ description: 'running, paused, completed, failed or cancelled.' }) status: string;
  @Field(() => String, { nullable: true, description: 'The stage running (or the last one reached).' }) currentStage: string | null;
  @Field(() => OrchestrationProgress) progress: OrchestrationProgress;
  @Field(() => [OrchestrationStage]) stages: OrchestrationStage[];
  @Field(() => OrchestrationResult, { nullable: true, description: 'Once completed.' }) result: OrchestrationResult | null;
  @Field(() => OrchestrationError, { nullable: true, description: 'Once failed.' }) error: OrchestrationError | null;
  @Field(() => String, { nullable: true }) pauseReason: string | null;
  @Field(() => String, { nullable: true }) cancelReason: string | null;
  @Field(() => Int, { nullable: true, description: 'Running tasks cancelled with the orchestration.' }) tasksCancelled: number | null;
  @Field() createdAt: Date;
  @Field(() => Date, { nullable: true }) pausedAt: Date | null;
  @Field(() => Date, { nullable: true }) resumedAt: Date | null;
  @Field(() => Date, { nullable: true }) completedAt: Date | null;
  @Field(() => Date, { nullable: true }) failedAt: Date | null;
  @Field(() => Date, { nullable: true }) cancelledAt: Date | null;
  @Field(() => Date, { nullable: true, description: 'While running or paused.' }) estimatedCompletionAt: Date | null;
  @Field(() => Float, { nullable: true, description: 'Seconds from creation to completion, failure or cancellation.' }) duration: number | null;
  @Field() updatedAt: Date;
  @Field(() => String, {
    nullable: true,
    description: 'The trace (OpenTelemetry trace id) of the request that created it, where each stage is a span; null when tracing was off.',
  })
  traceId: string | null;
  @Field(() => Int, { description: 'Raised by every change of the orchestration row: of two states, the higher version is the newer.' }) version: number;
}

@ObjectType()
export class OrchestrationList {
  @Field(() => [Orchestration]) orchestrations: Orchestration[];
  @Field(() => PageInfo) pagination: PageInfo;
}
