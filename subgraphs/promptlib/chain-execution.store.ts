import { exec, one, rowById, type Queryable } from '../../kernel/db/rows';
import type { CompletedStep, ExecutionFailure, ExecutionStatus, StoredStep } from './chain.types';
import { seconds } from './shared';

/**
 * How chain executions are kept: one row of promptlib.chain_executions per run, advanced by the
 * `promptlib.chain` job (chain-runner.ts). Every write after the start applies only while the
 * row is `running`, so the first outcome to land (completion, failure) is the one that stays.
 * The end times are stamped by a trigger (migration chain-run-clock).
 */

/** A row of promptlib.chain_executions. */
export interface ExecutionRow {
  execution_id: string;
  chain_id: string;
  chain_version: number;
  status: ExecutionStatus;
  current_step: number;
  total_steps: number;
  initial_variables: Record<string, unknown>;
  model: string;
  temperature: number;
  max_tokens: number;
  completed_steps: CompletedStep[];
  result: Record<string, Record<string, string>> | null;
  error: ExecutionFailure | null;
  total_tokens: number;
  total_latency_ms: number;
  key_id: string | null;
  started_at: Date;
  completed_at: Date | null;
  failed_at: Date | null;
  updated_at: Date;
}

/** What the runner reads of an execution: its settings, the steps done, and the version's steps. */
export type RunRow = Pick<
  ExecutionRow,
  'execution_id' | 'status' | 'initial_variables' | 'model' | 'temperature' | 'max_tokens' | 'completed_steps' | 'key_id'
> & {
  steps: StoredStep[];
};

/** A chain's executions counted, and averaged over the completed ones (avg() of integers: numeric, read as a string). */
export interface ExecutionStatsRow {
  total: number;
  completed: number;
  failed: number;
  tokens: string | null;
  latency: string | null;
}

export interface ExecutionView {
  executionId: string;
  chainId: string;
  chainVersion: number;
  status: ExecutionStatus;
  currentStep: number;
  totalSteps: number;
  completedSteps: (Omit<CompletedStep, 'completedAt'> & { completedAt: Date })[];
  result: Record<string, Record<string, string>> | null;
  error: ExecutionFailure | null;
  totalTokens: number;
  /** Seconds: the sum of the steps' model latencies. */
  totalLatency: number;
  /** Seconds from start to completion or failure (so far, while running). */
  duration: number;
  model: string;
  temperature: number;
  startedAt: Date;
  completedAt: Date | null;
  failedAt: Date | null;
}

export function toExecution(r: ExecutionRow): ExecutionView {
  const end = r.completed_at ?? r.failed_at ?? new Date();
  return {
    executionId: r.execution_id,
    chainId: r.chain_id,
    chainVersion: r.chain_version,
    status: r.status,
    currentStep: r.current_step,
    totalSteps: r.total_steps,
    completedSteps: r.completed_steps.map((c: CompletedStep) => ({ ...c, completedAt: new Date(c.completedAt) })),
    result: r.result,
    error: r.error,
    totalTokens: r.total_tokens,
    totalLatency: seconds(r.total_latency_ms),
    duration: seconds(new Date(end).getTime() - new Date(r.started_at).getTime()),
    model: r.model,
    temperature: Number(r.temperature),
    startedAt: r.started_at,
    completedAt: r.completed_at,
    failedAt: r.failed_at,
  };
}

// ---- reads ------------------------------------------------------------------------------------

/** The execution, or 404 chain_execution (also for an id that is not a UUID). */
export async function byId(q: Queryable, executionId: string): Promise<ExecutionView> {
  return toExecution(await rowById<ExecutionRow>(q, 'chain_execution', executionId, `SELECT * FROM promptlib.chain_executions WHERE execution_id = $1`));
}

/** The chain's executions counted by outcome, with the averages of the completed ones. */
export async function statsOf(q: Queryable, chainId: string): Promise<ExecutionStatsRow> {
  const row = await one<ExecutionStatsRow>(
    q,
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'completed')::int AS completed,
            count(*) FILTER (WHERE status = 'failed')::int AS failed,
            avg(total_tokens) FILTER (WHERE status = 'completed') AS tokens,
            avg(total_latency_ms) FILTER (WHERE status = 'completed') AS latency
       FROM promptlib.chain_executions WHERE chain_id = $1`,
    [chainId],
  );
  return row!;
}

/** What the runner needs of the execution; undefined when it is gone (deleted with its chain). */
export function runRow(q: Queryable, executionId: string): Promise<RunRow | undefined> {
  return one<RunRow>(
    q,
    `SELECT e.execution_id, e.status, e.initial_variables, e.model, e.temperature, e.max_tokens, e.completed_steps, e.key_id, cv.steps
       FROM promptlib.chain_executions e
       JOIN promptlib.chain_versions cv ON cv.chain_id = e.chain_id AND cv.version = e.chain_version
      WHERE e.execution_id = $1`,
    [executionId],
  );
}

// ---- writes -------------------------------------------------------------------------------------

/** A new execution of `chainVersion`, `running` at step 1 (its job is enqueued in the same transaction). */
export async function insert(
  q: Queryable,
  e: {
    executionId: string;
    chainId: string;
    chainVersion: number;
    totalSteps: number;
    initialVariables: Record<string, unknown>;
    model: string;
    temperature: number;
    maxTokens: number;
    keyId: string | null;
  },
): Promise<void> {
  await exec(
    q,
    `INSERT INTO promptlib.chain_executions
       (execution_id, chain_id, chain_version, status, current_step, total_steps, initial_variables, model, temperature, max_tokens, key_id)
     VALUES ($1, $2, $3, 'running', 1, $4, $5, $6, $7, $8, $9)`,
    [e.executionId, e.chainId, e.chainVersion, e.totalSteps, JSON.stringify(e.initialVariables), e.model, e.temperature, e.maxTokens, e.keyId],
  );
}

/** The order now running. */
export async function setCurrentStep(q: Queryable, executionId: string, order: number): Promise<void> {
  await exec(q, `UPDATE promptlib.chain_executions SET current_step = $2, updated_at = now() WHERE execution_id = $1 AND status = 'running'`, [
    executionId,
    order,
  ]);
}

/** Appends a finished step and adds its tokens and latency to the totals. */
export async function appendStep(q: Queryable, executionId: string, completed: CompletedStep, latencyMs: number): Promise<void> {
  await exec(
    q,
    `UPDATE promptlib.chain_executions
        SET completed_steps = completed_steps || $2::jsonb, total_tokens = total_tokens + $3,
            total_latency_ms = total_latency_ms + $4, updated_at = now()
      WHERE execution_id = $1 AND status = 'running'`,
    [executionId, JSON.stringify([completed]), completed.tokensUsed, latencyMs],
  );
}

export async function complete(q: Queryable, executionId: string, result: Record<string, Record<string, string>>): Promise<void> {
  await exec(
    q,
    `UPDATE promptlib.chain_executions SET status = 'completed', result = $2, updated_at = now()
      WHERE execution_id = $1 AND status = 'running'`,
    [executionId, JSON.stringify(result)],
  );
}

export async function fail(q: Queryable, executionId: string, error: ExecutionFailure): Promise<void> {
  await exec(
    q,
    `UPDATE promptlib.chain_executions SET status = 'failed', error = $2, updated_at = now()
      WHERE execution_id = $1 AND status = 'running'`,
    [executionId, JSON.stringify(error)],
  );
}

/** Fails the execution at whatever step it reached (the job itself failed: timeout, lost worker). */
export async function failAtCurrentStep(q: Queryable, executionId: string, error: { code: string; message: string }): Promise<void> {
  await exec(
    q,
    `UPDATE promptlib.chain_executions
        SET status = 'failed', updated_at = now(),
            error = jsonb_build_object('step', current_step, 'promptId', NULL, 'code', $2::text, 'message', $3::text)
      WHERE execution_id = $1 AND status = 'running'`,
    [executionId, error.code, error.message],
  );
}
