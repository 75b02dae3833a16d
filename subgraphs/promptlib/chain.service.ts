import { rowsOf } from '../../kernel/db/rows';
import { withTransaction } from '../../kernel/db/transaction';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { hasPermission, type Principal } from '../../kernel/auth/principal';
import { errors, type FieldError } from '../../kernel/errors';
import type { LlmProvider } from '../../kernel/llm/types';
import type { Queue } from '../../kernel/queue';
import type { RateLimiter } from '../../kernel/rate-limit';
import type { CompletedStep, ExecutionFailure, ExecutionStatus, StoredStep } from './chain.types';
import { orderCount, validateSteps, type StepInput } from './chain-steps';
import type { Page } from './prompt.reads';
import type { PromptService } from './prompt.service';
import {
  callerKey,
  CHAIN_EXECUTIONS_PER_MINUTE,
  checkMetadata,
  checkModelParams,
  checkSlug,
  checkText,
  DEFAULT_MAX_TOKENS,
  DEFAULT_TEMPERATURE,
  isUniqueViolation,
  round2,
  seconds,
  throwIf,
  UUID,
  type ModelParams,
} from './shared';
import { JOB } from '../../kernel/topics';

/**
 * Chains: ordered steps, each running a prompt; outputs feed later steps through
 * `inputMapping`. An execution is a row plus a `promptlib.chain` job (chain-runner.ts).
 * Versions behave as for prompts: in-place updates touch the latest version only.
 */

export interface ChainView {
  chainId: string;
  name: string;
  description: string;
  version: number;
  latestVersion: number;
  steps: StoredStep[];
  stepsCount: number;
  metadata: Record<string, unknown>;
  performance: { totalExecutions: number; averageTokens: number; averageLatency: number; successRate: number };
  createdAt: Date;
  updatedAt: Date;
}

export interface ChainListItemView {
  chainId: string;
  name: string;
  description: string;
  domain: string | null;
  version: number;
  stepsCount: number;
  executions: number;
  successRate: number;
  createdAt: Date;
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

export interface CreateChainData {
  name: string;
  description: string;
  steps: StepInput[];
  metadata?: Record<string, unknown> | null;
}

export interface UpdateChainData {
  steps?: StepInput[] | null;
  description?: string | null;
  metadata?: Record<string, unknown> | null;
  createNewVersion?: boolean | null;
}

export interface ExecuteChainData extends ModelParams {
  initialVariables: Record<string, unknown>;
}

export function toExecution(r: any): ExecutionView {
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

export class ChainService {
  constructor(
    private readonly db: DataSource,
    private readonly prompts: PromptService,
    private readonly llm: LlmProvider,
    private readonly limiter: RateLimiter,
    private readonly queue: Queue,
  ) {}

  async get(chainId: string, version?: number | null): Promise<ChainView> {
    const [row] = await this.db.query(
      `SELECT c.latest_version, c.created_at AS chain_created_at, cv.*
         FROM promptlib.chains c
         JOIN promptlib.chain_versions cv ON cv.chain_id = c.chain_id AND cv.version = coalesce($2::int, c.latest_version)
        WHERE c.chain_id = $1`,
      [chainId, version ?? null],
    );
    if (!row) {
      const exists = (await this.db.query(`SELECT 1 FROM promptlib.chains WHERE chain_id = $1`, [chainId])).length > 0;
      throw exists && version != null ? errors.notFound('chain_version', `${chainId}:${version}`) : errors.notFound('chain', chainId);
    }
    const [stats] = await this.db.query(
      `SELECT count(*)::int AS total,
              count(*) FILTER (WHERE status = 'completed')::int AS completed,
              count(*) FILTER (WHERE status = 'failed')::int AS failed,
              avg(total_tokens) FILTER (WHERE status = 'completed') AS tokens,
              avg(total_latency_ms) FILTER (WHERE status = 'completed') AS latency
         FROM promptlib.chain_executions WHERE chain_id = $1`,
      [chainId],
    );
    const finished = stats.completed + stats.failed;
    return {
      chainId: row.chain_id,
      name: row.chain_id,
      description: row.description,
      version: row.version,
      latestVersion: row.latest_version,
      steps: row.steps,
      stepsCount: row.steps.length,
      metadata: row.metadata,
      performance: {
        totalExecutions: stats.total,
        averageTokens: round2(stats.tokens),
        averageLatency: seconds(stats.latency),
        successRate: finished ? round2((stats.completed / finished) * 100) : 0,
      },
      createdAt: row.chain_created_at,
      updatedAt: row.updated_at,
    };
  }

  async list(filter: { domain?: string | null; limit: number; offset: number }): Promise<{ chains: ChainListItemView[]; pagination: Page }> {
    const from = `FROM promptlib.chains c JOIN promptlib.chain_versions cv ON cv.chain_id = c.chain_id AND cv.version = c.latest_version
      WHERE ($1::text IS NULL OR cv.metadata->>'domain' = $1)`;
    const [[{ total }], rows] = await Promise.all([
      this.db.query(`SELECT count(*)::int AS total ${from}`, [filter.domain ?? null]),
      this.db.query(
        `SELECT c.chain_id, c.created_at, cv.version, cv.description, cv.metadata, jsonb_array_length(cv.steps) AS steps_count,
                (SELECT count(*)::int FROM promptlib.chain_executions e WHERE e.chain_id = c.chain_id) AS executions,
                (SELECT count(*)::int FROM promptlib.chain_executions e WHERE e.chain_id = c.chain_id AND e.status = 'completed') AS completed,
                (SELECT count(*)::int FROM promptlib.chain_executions e WHERE e.chain_id = c.chain_id AND e.status = 'failed') AS failed
         ${from} ORDER BY c.created_at DESC, c.chain_id LIMIT $2 OFFSET $3`,
        [filter.domain ?? null, filter.limit, filter.offset],
      ),
    ]);
    const chains = rows.map((r: any): ChainListItemView => {
      const finished = r.completed + r.failed;
      return {
        chainId: r.chain_id,
        name: r.chain_id,
        description: r.description,
        domain: typeof r.metadata?.domain === 'string' ? r.metadata.domain : null,
        version: r.version,
        stepsCount: r.steps_count,
        executions: r.executions,
        successRate: finished ? round2((r.completed / finished) * 100) : 0,
        createdAt: r.created_at,
      };
    });
    return { chains, pagination: { total, limit: filter.limit, offset: filter.offset, hasMore: filter.offset + chains.length < total } };
  }

  async create(input: CreateChainData): Promise<ChainView> {
    const problems: FieldError[] = [];
    checkSlug(problems, 'name', input.name);
    checkText(problems, 'description', input.description, { required: true, max: 10_000 });
    const metadata = checkMetadata(problems, 'metadata', input.metadata);
    const { steps, problems: stepProblems } = validateSteps(input.steps);
    throwIf([...problems, ...stepProblems]);
    await this.checkPrompts(steps);
    try {
      await this.db.transaction(async (m) => {
        await m.query(`INSERT INTO promptlib.chains (chain_id, latest_version, version_seq) VALUES ($1, 1, 1)`, [input.name]);
        await this.insertVersion(m, input.name, 1, input.description, steps, metadata);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw errors.alreadyExists('name', input.name, input.name);
      throw err;
    }
    return this.get(input.name);
  }

  async update(chainId: string, input: UpdateChainData): Promise<ChainView> {
    const problems: FieldError[] = [];
    checkText(problems, 'description', input.description, { required: input.description != null, max: 10_000 });
    const metadata = input.metadata != null ? checkMetadata(problems, 'metadata', input.metadata) : null;
    let steps: StoredStep[] | null = null;
    if (input.steps != null) {
      const checked = validateSteps(input.steps);
      problems.push(...checked.problems);
      steps = checked.steps;
    }
    throwIf(problems);
    if (steps) await this.checkPrompts(steps);
    await this.db.transaction(async (m) => {
      const [parent] = await m.query(`SELECT latest_version, version_seq FROM promptlib.chains WHERE chain_id = $1 FOR UPDATE`, [chainId]);
      if (!parent) throw errors.notFound('chain', chainId);
      const [latest] = await m.query(`SELECT * FROM promptlib.chain_versions WHERE chain_id = $1 AND version = $2`, [chainId, parent.latest_version]);
      const next = { description: input.description ?? latest.description, steps: steps ?? latest.steps, metadata: metadata ?? latest.metadata };
      if (input.createNewVersion) {
        const version = parent.version_seq + 1;
        await this.insertVersion(m, chainId, version, next.description, next.steps, next.metadata);
        await m.query(`UPDATE promptlib.chains SET latest_version = $2, version_seq = $2, updated_at = now() WHERE chain_id = $1`, [chainId, version]);
      } else {
        await m.query(
          `UPDATE promptlib.chain_versions SET description = $3, steps = $4, metadata = $5, prompt_ids = $6, updated_at = now()
            WHERE chain_id = $1 AND version = $2`,
          [chainId, latest.version, next.description, JSON.stringify(next.steps), JSON.stringify(next.metadata), promptIds(next.steps)],
        );
        await m.query(`UPDATE promptlib.chains SET updated_at = now() WHERE chain_id = $1`, [chainId]);
      }
    });
    return this.get(chainId);
  }

  /** Deletes the chain, every version and every execution of it. */
  async delete(chainId: string): Promise<{ chainId: string; deletedAt: Date }> {
    const deleted = rowsOf(await this.db.query(`DELETE FROM promptlib.chains WHERE chain_id = $1 RETURNING chain_id`, [chainId]));
    if (!deleted.length) throw errors.notFound('chain', chainId);
    return { chainId, deletedAt: new Date() };
  }

  /**
   * Starts an execution of the latest version: a row in `running` at step 1 and its job, in one
   * transaction. Every step's prompt variables must be covered by `initialVariables` or by the
   * step's `inputMapping` (each step sees initialVariables overlaid with its mapped outputs).
   */
  async execute(principal: Principal, chainId: string, input: ExecuteChainData): Promise<ExecutionView> {
    const problems: FieldError[] = [];
    const vars = input.initialVariables;
    if (vars === null || typeof vars !== 'object' || Array.isArray(vars))
      problems.push({ field: 'initialVariables', message: 'is required and must be an object' });
    checkModelParams(problems, input);
    throwIf(problems);
    const { limitKey, tier, keyId } = callerKey(principal);
    if (limitKey !== null) await this.limiter.consumeNamed('chain-execute', limitKey, CHAIN_EXECUTIONS_PER_MINUTE, 60, tier);
    const model = this.llm.resolveModel(input.model ?? undefined);
    const chain = await this.get(chainId);
    const missing: FieldError[] = [];
    for (const step of chain.steps) {
      const version = await this.prompts.loadVersion(step.promptId, step.version);
      for (const name of version.variables) {
        if (!(name in step.inputMapping) && (!Object.hasOwn(vars, name) || vars[name] === null)) {
          missing.push({
            field: `initialVariables.${name}`,
            message: `is required by step ${step.order} (prompt ${step.promptId}), which does not map it from an earlier step`,
          });
        }
      }
    }
    throwIf(missing.filter((p, i) => missing.findIndex((q) => q.field === p.field) === i));
    const executionId = randomUUID();
    const totalSteps = orderCount(chain.steps);
    await withTransaction(this.db, async (tx) => {
      await tx.manager.query(
        `INSERT INTO promptlib.chain_executions
           (execution_id, chain_id, chain_version, status, current_step, total_steps, initial_variables, model, temperature, max_tokens, key_id)
         VALUES ($1, $2, $3, 'running', 1, $4, $5, $6, $7, $8, $9)`,
        [
          executionId,
          chainId,
          chain.version,
          totalSteps,
          JSON.stringify(vars),
          model,
          input.temperature ?? DEFAULT_TEMPERATURE,
          input.maxTokens ?? DEFAULT_MAX_TOKENS,
          keyId,
        ],
      );
      await this.queue.enqueue(JOB.chain, { executionId }, { maxAttempts: 1, timeoutMs: Math.min(60 * 60_000, totalSteps * 120_000 + 60_000) }, tx);
    });
    return this.getExecution(principal, executionId);
  }

  /** Readable with prompt:read, or chain:execute (whoever may run a chain may poll it). */
  async getExecution(principal: Principal, executionId: string): Promise<ExecutionView> {
    if (principal.kind === 'anonymous') throw errors.missingAuthorization();
    const granted = 'permissions' in principal ? principal.permissions : ['*']; // else: the platform itself
    if (!hasPermission(granted, 'prompt:read') && !hasPermission(granted, 'chain:execute')) {
      throw errors.insufficientPermissions(['prompt:read', 'chain:execute'], granted);
    }
    const [row] = UUID.test(executionId) ? await this.db.query(`SELECT * FROM promptlib.chain_executions WHERE execution_id = $1`, [executionId]) : [];
    if (!row) throw errors.notFound('chain_execution', executionId);
    return toExecution(row);
  }

  /** Every step's prompt (and pinned version) exists; mapped variables are variables of that prompt. */
  private async checkPrompts(steps: StoredStep[]): Promise<void> {
    const problems: FieldError[] = [];
    for (const [index, step] of steps.entries()) {
      const version = await this.prompts.loadVersion(step.promptId, step.version).catch((err) => {
        if (err?.code === 'PROMPT_NOT_FOUND') {
          throw Object.assign(err, { details: { ...err.details, field: `steps.${index}.promptId` } });
        }
        throw err;
      });
      for (const variable of Object.keys(step.inputMapping)) {
        if (!version.variables.includes(variable)) {
          problems.push({
            field: `steps.${index}.inputMapping.${variable}`,
            message: `prompt ${step.promptId} (version ${version.version}) has no variable "${variable}" (its variables: ${version.variables.join(', ') || 'none'})`,
          });
        }
      }
    }
    throwIf(problems);
  }

  private async insertVersion(m: EntityManager, chainId: string, version: number, description: string, steps: StoredStep[], metadata: Record<string, unknown>) {
    await m.query(`INSERT INTO promptlib.chain_versions (chain_id, version, description, steps, metadata, prompt_ids) VALUES ($1, $2, $3, $4, $5, $6)`, [
      chainId,
      version,
      description,
      JSON.stringify(steps),
      JSON.stringify(metadata),
      promptIds(steps),
    ]);
  }
}

function promptIds(steps: StoredStep[]): string[] {
  return [...new Set(steps.map((s) => s.promptId))];
}
