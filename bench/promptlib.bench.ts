import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Queryable } from '../kernel/db/rows';
import type { CompletionResult } from '../kernel/llm/types';
import { insertRun } from '../subgraphs/promptlib/prompt-test.store';
import { DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE } from '../subgraphs/promptlib/shared';
import { startFakeLlm } from '../test/support/fake-llm';
import type { Platform } from '../test/support/answers';
import { startLocalPlatform } from '../test/support/platform';
import { startBareServer, type BareServer } from './bare';
import { spawnServer } from './child';
import { jsonClient } from './load';

/**
 * Prompt test runs through the platform (POST /v1/promptlib/prompts/{id}/test) against the same
 * model call made directly through kernel/llm, and a bare `node:http` handler doing only what a
 * test cannot do without (the model call, one committed insert, a JSON answer): what the platform
 * adds is platform p50 − direct p50, and the bare handler shows what a hop and an insert cost here.
 * One local fake model; the platform runs in a child started as `npm start` runs it (bench/child.ts)
 * so the driver's heap stays out of it; calls alternate one at a time so drift reaches all three alike.
 */
export interface PromptBenchFigures {
  platform: { p50Ms: number; p99Ms: number; runsPerSecond: number };
  direct: { p50Ms: number; p99Ms: number; callsPerSecond: number };
  bare: { p50Ms: number; p99Ms: number };
  overheadP50Ms: number;
  /** bare p50 − direct p50: the hop and the committed insert alone. */
  bareOverheadP50Ms: number;
  sequentialCalls: number;
  concurrentCalls: number;
}

export const SEQUENTIAL = 1_000;
const CONCURRENT = 1_000;
const CONCURRENCY = 16;
const WARMUP = 1_000; // about 3 s: JIT, connection pools, caches
const KEYS = 40; // enterprise keys allow 200 prompt tests a minute each

/**
 * Runs the measurement in a child process (this file with `--measure`) and returns its figures.
 * The child ends by itself once it has printed them and stopped its platform; it is given the
 * time to, since a child stopped by a signal writes no BENCH_CPU_PROF profile.
 */
export async function benchPromptTests(databaseUrl: string): Promise<PromptBenchFigures> {
  const child = await spawnServer<PromptBenchFigures>(
    'prompt bench',
    __filename,
    ['--measure'],
    { ...process.env, DATABASE_URL: databaseUrl },
    (figures) => typeof figures.overheadP50Ms === 'number',
  );
  if (child.child.exitCode === null && child.child.signalCode === null) {
    await Promise.race([once(child.child, 'exit'), new Promise((r) => setTimeout(r, 30_000).unref())]);
  }
  await child.stop();
  return child.info;
}

async function measure(databaseUrl: string): Promise<PromptBenchFigures> {
  const fake = await startFakeLlm({ models: ['bench-model'] });
  const local = await startLocalPlatform(
    { DATABASE_URL: databaseUrl, LLM_BASE_URL: fake.url, LLM_MODELS: 'bench-model', LOG_LEVEL: 'error' },
    { label: 'bench-promptlib' },
  );
  const { platform, adminKey: admin } = local;
  let bare: BareServer | undefined;
  try {
    // A lean HTTP client (jsonClient): the client runs in this process too.
    const client = jsonClient(platform.url, CONCURRENCY);
    const call = async <T>(method: string, p: string, key: string, body?: unknown) => {
      const res = await client<T>(method, p, key, body);
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    await call('POST', '/v1/promptlib/prompts', admin, {
      name: 'bench-prompt',
      description: 'benchmark prompt',
      template: 'Summarise {{topic}} for {{audience}} in one line.',
      variables: ['topic', 'audience'],
    });
    const keys: string[] = [];
    for (let i = 0; i < KEYS; i++) {
      const created = await call<Platform<{ api_key: string }>>('POST', '/control-plane/api/v1/auth/api-keys', admin, {
        name: `bench ${i}`,
        service: 'promptlib',
        permissions: ['prompt:test'],
        tier: 'enterprise',
      });
      keys.push(created.data.api_key);
    }
    let next = 0;
    const variables = { topic: 'federated GraphQL', audience: 'operators' };
    const testOnce = () => call('POST', '/v1/promptlib/prompts/bench-prompt/test', keys[next++ % keys.length]!, { variables, model: 'bench-model' });
    const rendered = 'Summarise federated GraphQL for operators in one line.';
    // What a test run that names only its model sends (the service's defaults), sent alike by the direct call and the bare reference.
    const params = { temperature: DEFAULT_TEMPERATURE, maxTokens: DEFAULT_MAX_TOKENS };
    const directOnce = () => platform.kernel.llm.complete({ model: 'bench-model', messages: [{ role: 'user', content: rendered }], ...params });
    bare = await startBareTest(databaseUrl, directOnce, params);
    const bareClient = jsonClient(bare.url, CONCURRENCY);
    const bareOnce = async () => {
      const res = await bareClient('POST', '/test', '', { variables, model: 'bench-model' });
      if (res.status !== 200) throw new Error(`bare reference: ${res.status} ${JSON.stringify(res.body)}`);
    };

    // Warm-up, as the other phases discard their first 2 s.
    for (let i = 0; i < WARMUP; i++) await Promise.all([testOnce(), directOnce(), bareOnce()]);
    // One at a time, the three in rotating order: the machine's drift within the phase reaches them alike.
    const [platformSeq, directSeq, bareSeq] = await alternating([testOnce, directOnce, bareOnce], SEQUENTIAL);
    const platformRate = await concurrent(testOnce, CONCURRENT, CONCURRENCY);
    const directRate = await concurrent(directOnce, CONCURRENT, CONCURRENCY);
    return {
      platform: { p50Ms: pct(platformSeq, 50), p99Ms: pct(platformSeq, 99), runsPerSecond: platformRate },
      direct: { p50Ms: pct(directSeq, 50), p99Ms: pct(directSeq, 99), callsPerSecond: directRate },
      bare: { p50Ms: pct(bareSeq, 50), p99Ms: pct(bareSeq, 99) },
      overheadP50Ms: round(pct(platformSeq, 50) - pct(directSeq, 50)),
      bareOverheadP50Ms: round(pct(bareSeq, 50) - pct(directSeq, 50)),
      sequentialCalls: SEQUENTIAL,
      concurrentCalls: CONCURRENT,
    };
  } finally {
    await bare?.close();
    await local.stop();
    await fake.close();
  }
}

/**
 * The physical reference of a prompt test: `POST /test` makes the direct model call (`complete`,
 * the one measured beside it), inserts the run with the store's own statement on a `pg` pool
 * (committed before the answer, as the platform's is), and answers the output as JSON.
 */
function startBareTest(
  databaseUrl: string,
  complete: () => Promise<CompletionResult>,
  params: { temperature: number; maxTokens: number },
): Promise<BareServer> {
  return startBareServer(databaseUrl, CONCURRENCY, (pool) => {
    const db: Queryable = { query: async (sql, values) => (await pool.query(sql, values)).rows };
    return (req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        void (async () => {
          const { variables } = JSON.parse(body) as { variables: Record<string, unknown> };
          const result = await complete();
          const testId = randomUUID();
          const createdAt = await insertRun(db, {
            testId,
            promptId: 'bench-prompt',
            version: 1,
            source: 'test',
            abTestId: null,
            executionId: null,
            variables,
            model: result.model,
            ...params,
            output: result.output,
            tokensUsed: result.tokens.total,
            latencyMs: Math.round(result.latencyMs),
            success: true,
            error: null,
            keyId: null,
          });
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, data: { testId, output: result.output, createdAt } }));
        })().catch((err: unknown) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err) })));
      });
    };
  });
}

/** `n` timed calls of each, one at a time, the order rotating (a b c, b c a, c a b, …). */
async function alternating(calls: (() => Promise<unknown>)[], n: number): Promise<number[][]> {
  const samples = calls.map(() => [] as number[]);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < calls.length; j++) {
      const which = (i + j) % calls.length;
      const t = performance.now();
      await calls[which]!();
      samples[which]!.push(performance.now() - t);
    }
  }
  return samples;
}

async function concurrent(fn: () => Promise<unknown>, n: number, width: number): Promise<number> {
  let started = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (started < n) {
        started++;
        await fn();
      }
    }),
  );
  return round((n / (performance.now() - t)) * 1000);
}

function pct(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

if (require.main === module) {
  // A rejection is left unhandled on purpose: Node prints it and exits non-zero, as a failed script should.
  if (process.argv.includes('--measure')) {
    void measure(process.env.DATABASE_URL!).then((f) => process.stdout.write(JSON.stringify(f) + '\n'));
  } else {
    void benchPromptTests(process.env.DATABASE_URL!).then((f) => process.stdout.write(JSON.stringify(f, null, 2) + '\n'));
  }
}
