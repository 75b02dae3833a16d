import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Principal } from '../../kernel/auth/principal';
import type { GateValidationResult, StageName } from './gate.catalog';

export const ORCHESTRATION_STATUSES = ['running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type OrchestrationStatus = (typeof ORCHESTRATION_STATUSES)[number];
/** `failed`: the stage's exit gate failed or one of its tasks failed; `cancelled`: it was running when the orchestration was cancelled. */
export const STAGE_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type StageStatus = (typeof STAGE_STATUSES)[number];
/** `running` covers a task that is queued or running in the task service. */
export const ORCHESTRATION_TASK_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type OrchestrationTaskStatus = (typeof ORCHESTRATION_TASK_STATUSES)[number];

export const ORCHESTRATION_EVENTS = ['orchestration.stage_completed', 'orchestration.completed', 'orchestration.failed'] as const;

export interface OrchestrationFailure {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export interface OrchestrationOutcome {
  success: boolean;
  stagesCompleted: number;
  tasksCompleted: number;
  outputs: Record<string, unknown>;
}

@Entity({ schema: 'control_plane', name: 'orchestrations' })
export class OrchestrationEntity {
  @PrimaryColumn('uuid', { name: 'orchestration_id' }) orchestrationId: string;
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text') status: OrchestrationStatus;
  @Column('text', { name: 'current_stage', nullable: true }) currentStage: StageName | null;
  @Column('smallint', { name: 'stages_total' }) stagesTotal: number;
  @Column('smallint', { name: 'stages_completed' }) stagesCompleted: number;
  @Column('int', { name: 'tasks_total' }) tasksTotal: number;
  @Column('int', { name: 'tasks_completed' }) tasksCompleted: number;
  @Column('jsonb', { nullable: true }) result: OrchestrationOutcome | null;
  @Column('jsonb', { nullable: true }) error: OrchestrationFailure | null;
  @Column('text', { name: 'webhook_url', nullable: true }) webhookUrl: string | null;
  @Column('text', { name: 'webhook_events', array: true, nullable: true }) webhookEvents: string[] | null;
  @Column('bytea', { name: 'webhook_secret_enc', nullable: true, select: false }) webhookSecretEnc: Buffer | null;
  /** Who created it: the tasks it starts run on that caller's behalf. */
  @Column('jsonb') principal: Principal;
  @Column('uuid', { name: 'key_id', nullable: true }) keyId: string | null;
  @Column('text', { name: 'pause_reason', nullable: true }) pauseReason: string | null;
  @Column('text', { name: 'cancel_reason', nullable: true }) cancelReason: string | null;
  @Column('int', { name: 'tasks_cancelled', nullable: true }) tasksCancelled: number | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'paused_at', nullable: true }) pausedAt: Date | null;
  @Column('timestamptz', { name: 'resumed_at', nullable: true }) resumedAt: Date | null;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  @Column('timestamptz', { name: 'failed_at', nullable: true }) failedAt: Date | null;
  @Column('timestamptz', { name: 'cancelled_at', nullable: true }) cancelledAt: Date | null;
  @Column('timestamptz', { name: 'estimated_completion_at', nullable: true }) estimatedCompletionAt: Date | null;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}

@Entity({ schema: 'control_plane', name: 'orchestration_stages' })
export class OrchestrationStageEntity {
  @PrimaryColumn('uuid', { name: 'orchestration_id' }) orchestrationId: string;
  @PrimaryColumn('smallint') position: number;
  @Column('text') stage: StageName;
  @Column('text') status: StageStatus;
  @Column('boolean') parallel: boolean;
  /** Whether the exit gate is validated when the stage's tasks are done. */
  @Column('boolean', { name: 'gate_enabled' }) gateEnabled: boolean;
  /** gateValidation.exit.required as given; null: the catalogue's required criteria. */
  @Column('text', { name: 'gate_required', array: true, nullable: true }) gateRequired: string[] | null;
  @Column('smallint', { name: 'tasks_total' }) tasksTotal: number;
  @Column('smallint', { name: 'tasks_completed' }) tasksCompleted: number;
  /** The merged outputs of the stage's completed tasks, set when its tasks are done. */
  @Column('jsonb', { nullable: true }) outputs: Record<string, unknown> | null;
  @Column('jsonb', { name: 'gate_result', nullable: true }) gateResult: GateValidationResult | null;
  @Column('timestamptz', { name: 'started_at', nullable: true }) startedAt: Date | null;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  @Column('timestamptz', { name: 'failed_at', nullable: true }) failedAt: Date | null;
}

@Entity({ schema: 'control_plane', name: 'orchestration_tasks' })
export class OrchestrationTaskEntity {
  @PrimaryColumn('uuid', { name: 'orchestration_id' }) orchestrationId: string;
  @PrimaryColumn('smallint', { name: 'stage_position' }) stagePosition: number;
  @PrimaryColumn('smallint') position: number;
  /** The name dependencies use: the task's `id` as given, else its agentId (made unique). */
  @Column('text', { name: 'task_key' }) taskKey: string;
  @Column('text', { name: 'agent_id' }) agentId: string;
  @Column('text', { name: 'task_type' }) taskType: string;
  @Column('jsonb') context: Record<string, unknown>;
  /** As given by the caller. */
  @Column('text', { array: true }) dependencies: string[];
  /** Keys of the tasks of the same stage this one waits for (dependencies resolved at create). */
  @Column('text', { name: 'depends_on', array: true }) dependsOn: string[];
  @Column('uuid', { name: 'task_id', nullable: true }) taskId: string | null;
  @Column('text') status: OrchestrationTaskStatus;
  @Column('real') progress: number;
  @Column('jsonb', { nullable: true }) result: Record<string, unknown> | null;
  @Column('jsonb', { nullable: true }) error: Record<string, unknown> | null;
  @Column('timestamptz', { name: 'started_at', nullable: true }) startedAt: Date | null;
  @Column('timestamptz', { name: 'finished_at', nullable: true }) finishedAt: Date | null;
}
