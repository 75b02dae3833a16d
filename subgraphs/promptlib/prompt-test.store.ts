import { one, prepared, rowById, rows, type Queryable } from '../../kernel/db/rows';
import type { ArmSummary } from './ab-rule';

/**
 * How model runs are kept: every run of a stored prompt version (a test, an arm of an A/B test
 * case, a chain step) in promptlib.prompt_tests, which the prompts' performance is computed
 * from; every A/B test, with its results, in promptlib.ab_tests.
 */

/** One run to record. `error` null exactly when it succeeded (a CHECK of the table). */
export interface NewRun {
  testId: string;
  promptId: string;
  version: number;
  source: 'test' | 'ab' | 'chain';
  abTestId: string | null;
  executionId: string | null;
  variables: Record<string, unknown>;
  model: string;
  temperature: number;
  maxTokens: number;
  output: string | null;
  tokensUsed: number;
  latencyMs: number;
  success: boolean;
  error: Record<string, unknown> | null;
  keyId: string | null;
}

/** Runs of one version of a prompt, summed (tokens and latency of the successful ones). */
export interface RunStatsRow {
  version: number;
  total: number;
  ok: number;
  /** sum() of integers: a bigint, which the driver reads as a string; null when none succeeded. */
  tokens: string | null;
  latency: string | null;
}

/** A row of promptlib.ab_tests. */
export interface AbTestRow {
  test_id: string;
  prompt_a: AbTestView['promptA'];
  prompt_b: AbTestView['promptB'];
  test_cases: Record<string, unknown>[];
  model: string;
  temperature: number;
  max_tokens: number;
  results: AbTestView['results'];
  recommendation: 'promptA' | 'promptB';
  reason: string;
  key_id: string | null;
  created_at: Date;
}

export interface AbRunView {
  testCase: number;
  success: boolean;
  output: string | null;
  tokensUsed: number;
  latency: number;
  error: { code: string; message: string } | null;
}

export interface AbArmResultView extends ArmSummary {
  successRate: number;
  runs: AbRunView[];
}

export interface AbTestView {
  testId: string;
  promptA: { promptId: string | null; version: number | null; template: string };
  promptB: { promptId: string | null; version: number | null; template: string };
  testCases: Record<string, unknown>[];
  model: string;
  temperature: number;
  maxTokens: number;
  results: { promptA: AbArmResultView; promptB: AbArmResultView; recommendation: 'promptA' | 'promptB'; reason: string };
  createdAt: Date;
}

/** The A/B test as stored, without the key it ran under. */
export function toAbTest(row: AbTestRow): AbTestView {
  return {
    testId: row.test_id,
    promptA: row.prompt_a,
    promptB: row.prompt_b,
    testCases: row.test_cases,
    model: row.model,
    temperature: Number(row.temperature),
    maxTokens: row.max_tokens,
    results: row.results,
    createdAt: row.created_at,
  };
}

// ---- runs ---------------------------------------------------------------------------------------

/** Records one run; when it was recorded. */
export async function insertRun(q: Queryable, r: NewRun): Promise<Date> {
  const row = await one<{ created_at: Date }>(
    q,
    prepared(`INSERT INTO promptlib.prompt_tests
       (test_id, prompt_id, version, source, ab_test_id, execution_id, variables, model, temperature, max_tokens, output, tokens_used, latency_ms, success, error, key_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING created_at`),
    [
      r.testId,
      r.promptId,
      r.version,
      r.source,
      r.abTestId,
      r.executionId,
      JSON.stringify(r.variables),
      r.model,
      r.temperature,
      r.maxTokens,
      r.output,
      r.tokensUsed,
      r.latencyMs,
      r.success,
      r.error ? JSON.stringify(r.error) : null,
      r.keyId,
    ],
  );
  return row!.created_at;
}

/** The prompt's runs summed per version, by version. */
export function statsByVersion(q: Queryable, promptId: string): Promise<RunStatsRow[]> {
  return rows<RunStatsRow>(
    q,
    `SELECT version, count(*)::int AS total, count(*) FILTER (WHERE success)::int AS ok,
            sum(tokens_used) FILTER (WHERE success) AS tokens, sum(latency_ms) FILTER (WHERE success) AS latency
       FROM promptlib.prompt_tests WHERE prompt_id = $1 GROUP BY version ORDER BY version`,
    [promptId],
  );
}

/** How many runs each of the prompts had, and how many succeeded (prompts without runs are absent). */
export function countsByPrompt(q: Queryable, promptIds: string[]): Promise<{ prompt_id: string; total: number; ok: number }[]> {
  return rows(
    q,
    `SELECT prompt_id, count(*)::int AS total, count(*) FILTER (WHERE success)::int AS ok
       FROM promptlib.prompt_tests WHERE prompt_id = ANY($1::text[]) GROUP BY prompt_id`,
    [promptIds],
  );
}

// ---- A/B tests ----------------------------------------------------------------------------------

/** Stores an A/B test (its runs are recorded after it, in the same transaction); when it was stored. */
export async function insertAbTest(q: Queryable, t: Omit<AbTestView, 'createdAt'> & { keyId: string | null }): Promise<Date> {
  const row = await one<{ created_at: Date }>(
    q,
    `INSERT INTO promptlib.ab_tests (test_id, prompt_a, prompt_b, test_cases, model, temperature, max_tokens, results, recommendation, reason, key_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING created_at`,
    [
      t.testId,
      JSON.stringify(t.promptA),
      JSON.stringify(t.promptB),
      JSON.stringify(t.testCases),
      t.model,
      t.temperature,
      t.maxTokens,
      JSON.stringify(t.results),
      t.results.recommendation,
      t.results.reason,
      t.keyId,
    ],
  );
  return row!.created_at;
}

/** The A/B test, or 404 ab_test (also for an id that is not a UUID). */
export async function abTestById(q: Queryable, testId: string): Promise<AbTestView> {
  return toAbTest(await rowById<AbTestRow>(q, 'ab_test', testId, `SELECT * FROM promptlib.ab_tests WHERE test_id = $1`));
}

/** The A/B tests one of whose arms is a version of `promptId`, newest first. */
export async function abTestsOf(q: Queryable, promptId: string, limit: number): Promise<AbTestView[]> {
  const found = await rows<AbTestRow>(
    q,
    `SELECT * FROM promptlib.ab_tests WHERE prompt_a->>'promptId' = $1 OR prompt_b->>'promptId' = $1 ORDER BY created_at DESC, test_id LIMIT $2`,
    [promptId, limit],
  );
  return found.map(toAbTest);
}
