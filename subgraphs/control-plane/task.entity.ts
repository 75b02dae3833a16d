import { rowsOf } from '../../kernel/db/rows';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Agent tasks (control_plane.tasks): one row per execution, moved by task.service.ts and task.runtime.ts. */

export const TASK_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const FINISHED_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];
export const TASK_PRIORITIES = ['low', 'normal', 'high', 'critical'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];
export const TASK_MODES = ['async', 'sync'] as const;
export type TaskMode = (typeof TASK_MODES)[number];
export const TASK_EVENTS = ['task.started', 'task.completed', 'task.failed'] as const;
export type TaskEvent = (typeof TASK_EVENTS)[number];

export interface TaskProgress {
  /** 0 to 100. */
  percentage: number;
  currentStep: string;
  stepsCompleted: number;
  stepsTotal: number;
}

export interface TaskResult {
  output: Record<string, unknown>;
  filesCreated: string[];
  filesModified: string[];
  linesWritten: number;
  /** The model that answered ("offline:<model>" for the offline provider). */
  model: string;
  tokensUsed: number;
  /** The prompt-library prompt and version the task ran. */
  promptId: string;
  promptVersion: number;
}

export interface TaskError {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

export interface TaskForge {
  stage?: string;
  validateGates?: boolean;
  outputs?: Record<string, unknown>;
}

export interface TaskModelConfig {
  model?: string;
  temperature?: number;
  maxTokens?: number;
}

@Entity({ schema: 'control_plane', name: 'tasks' })
export class TaskEntity {
  /** The taskId. */
  @PrimaryColumn('uuid') id: string;
  @Column('text', { name: 'agent_id' }) agentId: string;
  @Column('text', { name: 'task_type' }) taskType: string;
  @Column('text') status: TaskStatus;
  @Column('text') priority: TaskPriority;
  @Column('text') mode: TaskMode;
  /** Seconds, 5 to 3600. */
  @Column('int', { name: 'timeout_seconds' }) timeoutSeconds: number;
  @Column('jsonb') context: Record<string, unknown>;
  @Column('jsonb', { nullable: true }) forge: TaskForge | null;
  @Column('jsonb', { name: 'model_config', nullable: true }) modelConfig: TaskModelConfig | null;
  @Column('text', { name: 'webhook_url', nullable: true }) webhookUrl: string | null;
  @Column('text', { name: 'webhook_events', array: true, nullable: true }) webhookEvents: TaskEvent[] | null;
  /** The webhook secret, AES-256-GCM (kernel/crypto.ts) with the task id as additional data. */
  @Column('bytea', { name: 'webhook_secret_enc', nullable: true, select: false }) webhookSecretEnc: Buffer | null;
  @Column('jsonb', { nullable: true }) progress: TaskProgress | null;
  @Column('jsonb', { nullable: true }) result: TaskResult | null;
  @Column('jsonb', { nullable: true }) error: TaskError | null;
  @Column('uuid', { name: 'job_id', nullable: true }) jobId: string | null;
  /** The API key that created the task (per-key concurrency); null for the platform itself. */
  @Column('uuid', { name: 'created_by_key', nullable: true }) createdByKey: string | null;
  /** Set for tasks an orchestration runs (they skip the per-key concurrency limit). */
  @Column('uuid', { name: 'orchestration_id', nullable: true }) orchestrationId: string | null;
  @Column('text', { nullable: true }) stage: string | null;
  /** Seconds, from the history of the agent and task type at creation. */
  @Column('real', { name: 'estimated_duration' }) estimatedDuration: number;
  @Column('int', { name: 'duration_ms', nullable: true }) durationMs: number | null;
  @Column('text', { name: 'cancel_reason', nullable: true }) cancelReason: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'started_at', nullable: true }) startedAt: Date | null;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  @Column('timestamptz', { name: 'failed_at', nullable: true }) failedAt: Date | null;
  @Column('timestamptz', { name: 'cancelled_at', nullable: true }) cancelledAt: Date | null;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}

/** Columns every read selects (the secret is never read outside the runtime). */
export const TASK_COLUMNS = `id, agent_id, task_type, status, priority, mode, timeout_seconds, context, forge, model_config,
  webhook_url, webhook_events, progress, result, error, job_id, created_by_key, orchestration_id, stage,
  estimated_duration, duration_ms, cancel_reason, created_at, started_at, completed_at, failed_at, cancelled_at, updated_at`;

export function toTaskEntity(r: any): TaskEntity {
  return Object.assign(new TaskEntity(), {
    id: r.id,
    agentId: r.agent_id,
    taskType: r.task_type,
    status: r.status,
    priority: r.priority,
    mode: r.mode,
    timeoutSeconds: r.timeout_seconds,
    context: r.context,
    forge: r.forge,
    modelConfig: r.model_config,
    webhookUrl: r.webhook_url,
    webhookEvents: r.webhook_events,
    progress: r.progress,
    result: r.result,
    error: r.error,
    jobId: r.job_id,
    createdByKey: r.created_by_key,
    orchestrationId: r.orchestration_id,
    stage: r.stage,
    estimatedDuration: Number(r.estimated_duration),
    durationMs: r.duration_ms,
    cancelReason: r.cancel_reason,
    createdAt: r.created_at,
    startedAt: r.started_at,
    completedAt: r.completed_at,
    failedAt: r.failed_at,
    cancelledAt: r.cancelled_at,
    updatedAt: r.updated_at,
  });
}
