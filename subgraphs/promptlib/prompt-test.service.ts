import { randomUUID } from 'node:crypto';
import { withTransaction } from '../../kernel/db/transaction';
import type { DataSource } from 'typeorm';
import type { Queryable } from '../../kernel/db/rows';
import type { Principal } from '../../kernel/auth/principal';
import { errors, type FieldError } from '../../kernel/errors';
import type { LlmProvider } from '../../kernel/llm/types';
import type { RateLimiter } from '../../kernel/rate-limit';
import { recommend } from './ab-rule';
import type { PromptVersion } from './prompt.store';
import * as store from './prompt-test.store';
import type { AbArmResultView, AbTestView } from './prompt-test.store';
import type { PromptService } from './prompt.service';
import { renderExpansion, type Expansion, checkDeclaredVariables } from './render';
import {
  callerKey,
  checkModelParams,
  checkText,
  DEFAULT_MAX_TOKENS,
  DEFAULT_TEMPERATURE,
  describeFailure,
  mapBounded,
  PROMPT_TESTS_PER_MINUTE,
  round2,
  seconds,
  throwIf,
  type ModelParams,
} from './shared';

/**
 * Test runs and A/B tests. Every model run of a stored prompt version is recorded in
 * promptlib.prompt_tests (success or failure), which is what `performance` is computed from.
 * Both count against the per-minute prompt-test limit of the caller's tier.
 */

export interface TestPromptData extends ModelParams {
  variables: Record<string, unknown>;
  version?: number | null;
}

export interface TestRunView {
  testId: string;
  promptId: string;
  version: number;
  output: string;
  metadata: { model: string; tokensUsed: number; latency: number; temperature: number };
  createdAt: Date;
}

export interface AbArmData {
  promptId?: string | null;
  version?: number | null;
  template?: string | null;
  variables?: string[] | null;
}

export interface AbTestData extends ModelParams {
  promptA: AbArmData;
  promptB: AbArmData;
  testCases: Record<string, unknown>[];
}

/** Model calls of one A/B test running at once. */
export const AB_CONCURRENCY = 4;
export const AB_MAX_TEST_CASES = 50;

interface ModelRun {
  ok: boolean;
  output: string | null;
  model: string;
  tokens: number;
  latencyMs: number;
  error: { code: string; message: string; details?: Record<string, unknown> } | null;
  raw?: unknown;
}

interface ResolvedArm {
  label: 'promptA' | 'promptB';
  promptId: string | null;
  version: number | null;
  template: string;
  expansion: Expansion;
}

export class PromptTestService {
  constructor(
    private readonly db: DataSource,
    private readonly prompts: PromptService,
    private readonly llm: LlmProvider,
    private readonly limiter: RateLimiter,
  ) {}

  async test(principal: Principal, promptId: string, input: TestPromptData): Promise<TestRunView> {
    const problems: FieldError[] = [];
    if (input.variables === null || typeof input.variables !== 'object' || Array.isArray(input.variables)) {
      problems.push({ field: 'variables', message: 'is required and must be an object' });
    }
    checkModelParams(problems, input);
    throwIf(problems);
    await this.consumeTest(principal);
    const model = this.llm.resolveModel(input.model ?? undefined);
    const version = await this.prompts.loadVersion(promptId, input.version);
    const expansion = await this.prompts.expand(version.template);
    const rendered = renderExpansion(expansion, input.variables);
    const temperature = input.temperature ?? DEFAULT_TEMPERATURE;
    const maxTokens = input.maxTokens ?? DEFAULT_MAX_TOKENS;
    const run = await this.runModel(rendered.text, { model, temperature, maxTokens });
    const testId = randomUUID();
    // Through the DataSource, so the run's row commits with the call's audit entry (kernel/db/rows.ts).
    const createdAt = await this.record(this.db, {
      testId,
      version,
      source: 'test',
      variables: input.variables,
      params: { model, temperature, maxTokens },
      run,
      keyId: callerKey(principal).keyId,
    });
    if (!run.ok) throw run.raw;
    return {
      testId,
      promptId,
      version: version.version,
      output: run.output!,
      metadata: { model: run.model, tokensUsed: run.tokens, latency: seconds(run.latencyMs), temperature },
      createdAt,
    };
  }

  async abTest(principal: Principal, input: AbTestData): Promise<AbTestView> {
    const problems: FieldError[] = [];
    checkArm(problems, 'promptA', input.promptA);
    checkArm(problems, 'promptB', input.promptB);
    if (!Array.isArray(input.testCases) || input.testCases.length === 0) {
      problems.push({ field: 'testCases', message: 'must list at least one test case (an object of variables)' });
    } else if (input.testCases.length > AB_MAX_TEST_CASES) {
      problems.push({ field: 'testCases', message: `must list at most ${AB_MAX_TEST_CASES} test cases` });
    } else {
      input.testCases.forEach((c, i) => {
        if (c === null || typeof c !== 'object' || Array.isArray(c)) problems.push({ field: `testCases.${i}`, message: 'must be an object of variables' });
      });
    }
    checkModelParams(problems, input);
    throwIf(problems);
    await this.consumeTest(principal);
    const model = this.llm.resolveModel(input.model ?? undefined);
    const temperature = input.temperature ?? DEFAULT_TEMPERATURE;
    const maxTokens = input.maxTokens ?? DEFAULT_MAX_TOKENS;
    const arms = await Promise.all([this.resolveArm('promptA', input.promptA), this.resolveArm('promptB', input.promptB)]);

    // Every test case must render on both arms before any model is called.
    const missing: FieldError[] = [];
    const texts = input.testCases.map((values, i) =>
      arms.map((arm) => {
        const lacking = arm.expansion.variables.filter((n) => !Object.hasOwn(values, n) || values[n] === null);
        for (const name of lacking) missing.push({ field: `testCases.${i}.${name}`, message: `is required by ${arm.label}` });
        return lacking.length ? '' : renderExpansion(arm.expansion, values).text;
      }),
    );
    throwIf(missing);

    const jobs = texts.flatMap((pair, testCase) => pair.map((text, arm) => ({ testCase, arm, text })));
    const runs = await mapBounded(jobs, AB_CONCURRENCY, (job) => this.runModel(job.text, { model, temperature, maxTokens }));
    const armResult = (arm: number): AbArmResultView => {
      const mine = runs.filter((_, i) => jobs[i]!.arm === arm);
      const ok = mine.filter((r) => r.ok);
      return {
        successfulTests: ok.length,
        failedTests: mine.length - ok.length,
        successRate: round2((ok.length / mine.length) * 100),
        averageTokens: ok.length ? round2(ok.reduce((n, r) => n + r.tokens, 0) / ok.length) : 0,
        averageLatency: ok.length ? seconds(ok.reduce((n, r) => n + r.latencyMs, 0) / ok.length) : 0,
        runs: mine.map((r, testCase) => ({
          testCase,
          success: r.ok,
          output: r.output,
          tokensUsed: r.tokens,
          latency: seconds(r.latencyMs),
          error: r.error ? { code: r.error.code, message: r.error.message } : null,
        })),
      };
    };
    const a = armResult(0);
    const b = armResult(1);
    const { recommendation, reason } = recommend(a, b);
    const testId = randomUUID();
    const armOut = (arm: ResolvedArm) => ({ promptId: arm.promptId, version: arm.version, template: arm.template });
    const results = { promptA: a, promptB: b, recommendation, reason };
    const keyId = callerKey(principal).keyId;
    const createdAt: Date = await withTransaction(this.db, async ({ manager: m }) => {
      const stored = await store.insertAbTest(m, {
        testId,
        promptA: armOut(arms[0]),
        promptB: armOut(arms[1]),
        testCases: input.testCases,
        model,
        temperature,
        maxTokens,
        results,
        keyId,
      });
      for (const [i, job] of jobs.entries()) {
        const arm = arms[job.arm]!;
        if (arm.promptId === null) continue; // inline templates have no version to record against
        await this.record(m, {
          testId: randomUUID(),
          version: { promptId: arm.promptId, version: arm.version! },
          source: 'ab',
          abTestId: testId,
          variables: input.testCases[job.testCase]!,
          params: { model, temperature, maxTokens },
          run: runs[i]!,
          keyId,
        });
      }
      return stored;
    });
    return { testId, promptA: armOut(arms[0]), promptB: armOut(arms[1]), testCases: input.testCases, model, temperature, maxTokens, results, createdAt };
  }

  async getAbTest(testId: string): Promise<AbTestView> {
    return store.abTestById(this.db, testId);
  }

  /** The A/B tests one of whose arms is a version of `promptId`, newest first. */
  async abTestsOf(promptId: string, limit: number): Promise<AbTestView[]> {
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw errors.field('limit', 'must be an integer from 1 to 100');
    return store.abTestsOf(this.db, promptId, limit);
  }

  /** Calls the model; a failure is returned (to be recorded), never thrown, unless the call was aborted. */
  async runModel(text: string, params: { model: string; temperature: number; maxTokens: number }, signal?: AbortSignal): Promise<ModelRun> {
    const started = performance.now();
    try {
      const result = await this.llm.complete({
        model: params.model,
        messages: [{ role: 'user', content: text }],
        temperature: params.temperature,
        maxTokens: params.maxTokens,
        signal,
      });
      return { ok: true, output: result.output, model: result.model, tokens: result.tokens.total, latencyMs: Math.round(result.latencyMs), error: null };
    } catch (err) {
      if (signal?.aborted && err === signal.reason) throw err;
      return {
        ok: false,
        output: null,
        model: params.model,
        tokens: 0,
        latencyMs: Math.round(performance.now() - started),
        error: describeFailure(err),
        raw: err,
      };
    }
  }

  /** Stores one run against its prompt version; when it was stored. */
  async record(
    q: Queryable,
    r: {
      testId: string;
      version: Pick<PromptVersion, 'promptId' | 'version'>;
      source: 'test' | 'ab' | 'chain';
      abTestId?: string;
      executionId?: string;
      variables: Record<string, unknown>;
      params: { model: string; temperature: number; maxTokens: number };
      run: ModelRun;
      keyId: string | null;
    },
  ): Promise<Date> {
    return store.insertRun(q, {
      testId: r.testId,
      promptId: r.version.promptId,
      version: r.version.version,
      source: r.source,
      abTestId: r.abTestId ?? null,
      executionId: r.executionId ?? null,
      variables: r.variables,
      model: r.run.model,
      temperature: r.params.temperature,
      maxTokens: r.params.maxTokens,
      output: r.run.output,
      tokensUsed: r.run.tokens,
      latencyMs: r.run.latencyMs,
      success: r.run.ok,
      error: r.run.error,
      keyId: r.keyId,
    });
  }

  /** The per-minute prompt-test limit of the caller's tier: 429 with retryAfter. */
  async consumeTest(principal: Principal): Promise<void> {
    const { limitKey, tier } = callerKey(principal);
    if (limitKey === null) return;
    await this.limiter.consumeNamed('prompt-test', limitKey, PROMPT_TESTS_PER_MINUTE[tier ?? 'free'], 60, tier);
  }

  private async resolveArm(label: 'promptA' | 'promptB', arm: AbArmData): Promise<ResolvedArm> {
    if (arm.promptId != null) {
      const version = await this.prompts.loadVersion(arm.promptId, arm.version);
      return {
        label,
        promptId: version.promptId,
        version: version.version,
        template: version.template,
        expansion: await this.prompts.expand(version.template),
      };
    }
    const template = arm.template!;
    const expansion = await this.prompts.expand(template, `${label}.template`);
    if (arm.variables != null) checkDeclaredVariables(arm.variables, expansion.variables, `${label}.variables`);
    return { label, promptId: null, version: null, template, expansion };
  }
}

function checkArm(problems: FieldError[], field: string, arm: AbArmData | undefined): void {
  if (!arm || typeof arm !== 'object') {
    problems.push({ field, message: 'is required: {promptId, version} or {template}' });
    return;
  }
  const hasId = arm.promptId != null;
  const hasTemplate = arm.template != null;
  if (hasId === hasTemplate) problems.push({ field, message: 'must give either promptId (with an optional version) or an inline template' });
  if (!hasId && arm.version != null) problems.push({ field: `${field}.version`, message: 'only applies with promptId' });
  if (hasId && arm.variables != null)
    problems.push({ field: `${field}.variables`, message: 'only applies with an inline template (a stored prompt declares its own)' });
  if (hasTemplate) checkText(problems, `${field}.template`, arm.template, { required: true, max: 100_000 });
}
