import type { DataSource, EntityManager } from 'typeorm';
import type { EventBus } from '../../../kernel/events';
import type { Logger } from '../../../kernel/logger';
import type { OutboundPolicy } from '../../../kernel/outbound';
import type { Clock } from '../../../kernel/clock';
import type { Priority, Queue } from '../../../kernel/queue';
import { type Tx } from '../../../kernel/db/transaction';
import type { BinaryStore } from './binary.store';

import type { ExecutionMode, ExecutionStatus, ExecutionView, KnownJson, RequestLog, StoreTarget } from './writes.store';
import type { StoredRun } from '../executor';
import type { BudgetExceeded, ExecutionBudgets } from '../nodes';
import type { Item } from '../expressions';
import type { NodeCredentials, WebhookReply } from '../nodes';
import type { ExecutionNotifier } from './notify';
import type { NotifyConfig } from './types';
import type { OperationsLike } from './platform';
import type { WorkflowService, WorkflowVersion, KeyLookup } from '../workflows';
import { TOPIC } from '../../../kernel/topics';
import { executionReads } from './reads.store';

/*
 * What the parts of the execution runner share (runner.ts and the files it is built
 * from: .run, .children, .resume, .reads): the job and event names, the options and context of a
 * run, and the two announcements every part makes. It imports no other part, so none of them has
 * to import another to speak of a run.
 */

export const MAX_DEPTH = 10;

export interface StartOptions {
  version: WorkflowVersion;
  /** The execution's id (default: a new one); given when something must be bound to it first. */
  id?: string;
  /** Queued runs: enqueue inside this transaction (the workers are woken after its COMMIT). */
  tx?: Tx;
  /** Queued runs: the job's priority. */
  priority?: Priority;
  /** A control-plane trigger's webhook subscription (execution.started|completed|failed|waiting). */
  notify?: NotifyConfig | null;
  mode: ExecutionMode;
  input: Item[];
  /** The API key whose permissions its agent and prompt nodes need (null: the platform itself; workflows/authority.ts). */
  runAs: string | null;
  /** JSON texts of its input already made (the payload's, when its size was checked). */
  known?: KnownJson;
  /** Run now in this process (and return `done`) rather than as a queued job. */
  inline: boolean;
  startNode?: string | null;
  webhookId?: string | null;
  parentExecutionId?: string | null;
  originalExecutionId?: string | null;
  /** Node outputs copied from another execution (retry): those nodes do not run again. */
  reuse?: { executionId: string; nodes: string[] };
  onReply?: (reply: WebhookReply) => void;
  parentSignal?: AbortSignal;
  depth?: number;
  /** The webhook request that started it: its log entry is written with the execution's (one statement). */
  requestLog?: RequestLog;
}

export interface Started {
  view: ExecutionView;
  /** Inline runs: the execution once it stops running (success, error, waiting, canceled). */
  done?: Promise<ExecutionView>;
}

/** One run of an execution in this process (StoreTarget: what its writes need). */
export interface RunContext extends StoreTarget {
  done: Map<string, Item[][]>;
  /** v1 workflows: the stored runs, by node and run index (the execution is replayed through them). */
  storedRuns?: Map<string, StoredRun[]>;
  seq: number;
  inline: boolean;
  depth: number;
  signal?: AbortSignal;
  onReply?: (reply: WebhookReply) => void;
  /** Milliseconds it ran before this run (earlier stretches between waits): its time budget goes on from there. */
  ranMs: number;
  /** Bytes of run data stored so far, as its budget counts them (nodes/budgets.ts). */
  runDataBytes: number;
  /** Per node, the run whose context is stored and that context's bytes: a later context replaces it. */
  storedStates: Map<string, { runIndex: number; bytes: number }>;
}

/** Why an execution's signal was aborted (`budget`: the time budget that ran out). */
export class ExecutionStop extends Error {
  constructor(
    readonly code: 'canceled' | 'timeout',
    message: string,
    readonly budget?: BudgetExceeded,
  ) {
    super(message);
    this.name = 'ExecutionStop';
  }
}

export interface RunnerDeps {
  db: DataSource;
  queue: Queue;
  events: EventBus;
  logger: Logger;
  workflows: WorkflowService;
  policy: OutboundPolicy;
  /** Signs resume URLs. */
  secret: string;
  /** Webhooks of executions started by the control plane's trigger. */
  notifier?: ExecutionNotifier;
  /** Other services' public operations (agent and prompt nodes). */
  operations?: OperationsLike;
  /** The platform's API keys as they stand now: the run-time check of agent and prompt nodes (workflows/authority.ts). */
  keys: KeyLookup;
  /** What one execution may use (ENGINE_EXECUTION_MAX_*). */
  budgets: ExecutionBudgets;
  /** Sandbox processes per pool (SANDBOX_PROCESSES): code nodes and expressions each have one pool. */
  sandboxProcesses?: number;
  /** When a Wait node's timer ends (the kernel's clock); the wall clock when absent. */
  clock?: Clock;
  /** n8n's variables (`$vars`) as they stand now, read as each run starts or resumes; none when absent. */
  variables?: () => Promise<Record<string, string>>;
  /** The stored credentials nodes use (credentials/, given by the engine's module). */
  credentials?: NodeCredentials;
  /** The folder n8n's Read/Write Files from Disk may touch (FILES_DIR). */
  filesDir?: string;
  /** Where binary data's bytes are kept (BINARY_DATA_MODE); absent: run data keeps them inline (unit tests). */
  binaries?: BinaryStore;
}

/**
 * Announces an execution's new status (subscriptions, waiters) with its workflow (what list
 * subscribers filter on) and its row's version (`known` where the write returned them, else read);
 * a failure to announce is logged, not thrown.
 */
export async function publishUpdate(
  deps: Pick<RunnerDeps, 'db' | 'events' | 'logger'>,
  executionId: string,
  status: ExecutionStatus,
  known?: { workflowId: string; version: number },
): Promise<void> {
  const announce = async () => {
    const row = known ?? (await executionReads.announced(deps.db, executionId));
    await deps.events.publish(TOPIC.executionUpdated, { executionId, status, ...row });
  };
  await announce().catch((err) => deps.logger.warn('execution event not published', { err }));
}
