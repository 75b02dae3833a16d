import { auditResource } from '../../kernel/audit';
import { pageInfo, type PageInfo } from '../../kernel/graphql-types';
import { withTransaction } from '../../kernel/db/transaction';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { hasPermission, type Principal } from '../../kernel/auth/principal';
import { errors, type FieldError } from '../../kernel/errors';
import type { LlmProvider } from '../../kernel/llm/types';
import type { Queue } from '../../kernel/queue';
import type { RateLimiter } from '../../kernel/rate-limit';
import type { StoredStep } from './chain.types';
import * as store from './chain.store';
import * as executions from './chain-execution.store';
import type { ExecutionView } from './chain-execution.store';
import { orderCount, validateSteps, type StepInput } from './chain-steps';
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

export class ChainService {
  constructor(
    private readonly db: DataSource,
    private readonly prompts: PromptService,
    private readonly llm: LlmProvider,
    private readonly limiter: RateLimiter,
    private readonly queue: Queue,
  ) {}

  async get(chainId: string, version?: number | null): Promise<ChainView> {
    const row = await store.viewRow(this.db, chainId, version ?? null);
    if (!row) {
      const exists = await store.exists(this.db, chainId);
      throw exists && version != null ? errors.notFound('chain_version', `${chainId}:${version}`) : errors.notFound('chain', chainId);
    }
    const stats = await executions.statsOf(this.db, chainId);
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

  async list(filter: { domain?: string | null; limit: number; offset: number }): Promise<{ chains: ChainListItemView[]; pagination: PageInfo }> {
    const { total, rows } = await store.list(this.db, filter.domain ?? null, { limit: filter.limit, offset: filter.offset });
    const chains = rows.map((r): ChainListItemView => {
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
    return { chains, pagination: pageInfo(total, filter.limit, filter.offset) };
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
      await withTransaction(this.db, async ({ manager: m }) => {
        await store.insertChain(m, input.name);
        auditResource('Chain', input.name);
        await store.insertVersion(m, { chainId: input.name, version: 1, description: input.description, steps, metadata });
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
    await withTransaction(this.db, async ({ manager: m }) => {
      const parent = await store.lockForUpdate(m, chainId);
      if (!parent) throw errors.notFound('chain', chainId);
      const latest = (await store.versionRow(m, chainId, parent.latest_version))!;
      const next = { chainId, description: input.description ?? latest.description, steps: steps ?? latest.steps, metadata: metadata ?? latest.metadata };
      if (input.createNewVersion) {
        const version = parent.version_seq + 1;
        await store.insertVersion(m, { ...next, version });
        await store.advanceLatest(m, chainId, version);
      } else {
        await store.updateVersion(m, { ...next, version: latest.version });
        await store.touch(m, chainId);
      }
    });
    return this.get(chainId);
  }

  /** Deletes the chain, every version and every execution of it. */
  async delete(chainId: string): Promise<{ chainId: string; deletedAt: Date }> {
    if (!(await store.deleteById(this.db, chainId))) throw errors.notFound('chain', chainId);
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
        if (!Object.hasOwn(step.inputMapping, name) && (!Object.hasOwn(vars, name) || vars[name] === null)) {
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
      await executions.insert(tx.manager, {
        executionId,
        chainId,
        chainVersion: chain.version,
        totalSteps,
        initialVariables: vars,
        model,
        temperature: input.temperature ?? DEFAULT_TEMPERATURE,
        maxTokens: input.maxTokens ?? DEFAULT_MAX_TOKENS,
        keyId,
      });
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
    return executions.byId(this.db, executionId);
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
}
