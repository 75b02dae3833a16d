import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

export const EXECUTION_STATUSES = ['running', 'success', 'error', 'waiting', 'canceled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];
export const EXECUTION_MODES = ['manual', 'webhook', 'schedule', 'retry', 'subworkflow', 'test', 'error'] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

/** One execution of a workflow version (engine.executions). */
@Entity({ schema: 'engine', name: 'executions' })
export class ExecutionEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'workflow_id' }) workflowId: string;
  @Column('integer', { name: 'workflow_version' }) workflowVersion: number;
  @Column('text') status: ExecutionStatus;
  @Column('text') mode: ExecutionMode;
  @Column('jsonb') input: unknown;
  @Column('text', { name: 'start_node', nullable: true }) startNode: string | null;
  @Column('integer', { name: 'nodes_total' }) nodesTotal: number;
  @Column('integer', { name: 'nodes_completed' }) nodesCompleted: number;
  @Column('text', { name: 'current_node', nullable: true }) currentNode: string | null;
  @Column('jsonb', { nullable: true }) result: unknown;
  @Column('jsonb', { nullable: true }) error: unknown;
  @Column('jsonb', { name: 'resume_state', nullable: true }) resumeState: unknown;
  @Column('timestamptz', { name: 'wait_till', nullable: true }) waitTill: Date | null;
  @Column('uuid', { name: 'job_id', nullable: true }) jobId: string | null;
  @Column('uuid', { name: 'original_execution_id', nullable: true }) originalExecutionId: string | null;
  @Column('uuid', { name: 'parent_execution_id', nullable: true }) parentExecutionId: string | null;
  @Column('uuid', { name: 'webhook_id', nullable: true }) webhookId: string | null;
  /** A control-plane trigger's webhook subscription (execution.notify.ts). */
  @Column('jsonb', { nullable: true }) notify: unknown;
  @Column('timestamptz', { name: 'started_at' }) startedAt: Date;
  @Column('timestamptz', { name: 'finished_at', nullable: true }) finishedAt: Date | null;
  @Column('timestamptz', { name: 'failed_at', nullable: true }) failedAt: Date | null;
  @Column('timestamptz', { name: 'canceled_at', nullable: true }) canceledAt: Date | null;
  @Column('integer', { name: 'duration_ms', nullable: true }) durationMs: number | null;
  @Column('timestamptz', { name: 'heartbeat_at' }) heartbeatAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}

/** Run data: one row per run of a node in an execution (v1 workflows may run a node several times). */
@Entity({ schema: 'engine', name: 'execution_nodes' })
export class ExecutionNodeEntity {
  @PrimaryColumn('uuid', { name: 'execution_id' }) executionId: string;
  @PrimaryColumn('text', { name: 'node_name' }) nodeName: string;
  /** The node's run in the execution, from 0. */
  @PrimaryColumn('integer', { name: 'run_index' }) runIndex: number;
  @Column('integer') seq: number;
  @Column('text', { name: 'node_type' }) nodeType: string;
  @Column('text') status: 'success' | 'error';
  @Column('timestamptz', { name: 'started_at' }) startedAt: Date;
  @Column('integer', { name: 'duration_ms' }) durationMs: number;
  @Column('integer') tries: number;
  @Column('boolean') reused: boolean;
  @Column('jsonb', { nullable: true }) output: unknown;
  @Column('jsonb', { nullable: true }) error: unknown;
  /** The node's context after this run (NodeContext.state), restored when the execution is replayed. */
  @Column('jsonb', { nullable: true }) state: unknown;
}

@Entity({ schema: 'engine', name: 'execution_logs' })
export class ExecutionLogEntity {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' }) id: string;
  @Column('uuid', { name: 'execution_id' }) executionId: string;
  @Column('timestamptz') at: Date;
  @Column('text') level: 'debug' | 'info' | 'warn' | 'error';
  @Column('text', { nullable: true }) node: string | null;
  @Column('text') message: string;
}
