import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A step as stored (chain_versions.steps): the validated input, sorted by order. */
export interface StoredStep {
  order: number;
  promptId: string;
  /** Absent: the prompt's latest version at the time the step runs. */
  version?: number;
  inputMapping: Record<string, string>;
  outputKey: string;
  agentId?: string;
  parallel?: boolean;
}

export interface CompletedStep {
  step: number;
  promptId: string;
  version: number;
  outputKey: string;
  output: string;
  tokensUsed: number;
  /** Seconds. */
  latency: number;
  completedAt: string;
}

export interface ExecutionFailure {
  step: number;
  promptId: string | null;
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export const EXECUTION_STATUSES = ['running', 'completed', 'failed'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

@Entity({ schema: 'promptlib', name: 'chains' })
export class ChainEntity {
  @PrimaryColumn('text', { name: 'chain_id' }) chainId: string;
  @Column('int', { name: 'latest_version' }) latestVersion: number;
  @Column('int', { name: 'version_seq' }) versionSeq: number;
  @Column('timestamptz', { name: 'created_at', default: () => 'now()' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' }) updatedAt: Date;
}

@Entity({ schema: 'promptlib', name: 'chain_versions' })
export class ChainVersionEntity {
  @PrimaryColumn('text', { name: 'chain_id' }) chainId: string;
  @PrimaryColumn('int') version: number;
  @Column('text') description: string;
  @Column('jsonb') steps: StoredStep[];
  @Column('jsonb') metadata: Record<string, unknown>;
  @Column('text', { name: 'prompt_ids', array: true }) promptIds: string[];
  @Column('timestamptz', { name: 'created_at', default: () => 'now()' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' }) updatedAt: Date;
}

/** One run of a chain version, advanced by the `promptlib.chain` job. */
@Entity({ schema: 'promptlib', name: 'chain_executions' })
export class ChainExecutionEntity {
  @PrimaryColumn('uuid', { name: 'execution_id' }) executionId: string;
  @Column('text', { name: 'chain_id' }) chainId: string;
  @Column('int', { name: 'chain_version' }) chainVersion: number;
  @Column('text') status: ExecutionStatus;
  @Column('int', { name: 'current_step' }) currentStep: number;
  @Column('int', { name: 'total_steps' }) totalSteps: number;
  @Column('jsonb', { name: 'initial_variables' }) initialVariables: Record<string, unknown>;
  @Column('text') model: string;
  @Column('real') temperature: number;
  @Column('int', { name: 'max_tokens' }) maxTokens: number;
  @Column('jsonb', { name: 'completed_steps' }) completedSteps: CompletedStep[];
  @Column('jsonb', { nullable: true }) result: Record<string, Record<string, string>> | null;
  @Column('jsonb', { nullable: true }) error: ExecutionFailure | null;
  @Column('int', { name: 'total_tokens' }) totalTokens: number;
  @Column('int', { name: 'total_latency_ms' }) totalLatencyMs: number;
  @Column('uuid', { name: 'key_id', nullable: true }) keyId: string | null;
  @Column('timestamptz', { name: 'started_at', default: () => 'now()' }) startedAt: Date;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  @Column('timestamptz', { name: 'failed_at', nullable: true }) failedAt: Date | null;
  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' }) updatedAt: Date;
}
