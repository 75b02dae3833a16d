import 'reflect-metadata';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { startFakeLlm } from '../test/support/fake-llm';
import { startLocalPlatform } from '../test/support/platform';
import { spawnServer } from './child';
import { jsonClient } from './load';

/**
 * Prompt test runs through the platform (POST /v1/promptlib/prompts/{id}/test: authentication,
 * rate limits, REST adapter, gateway, render, model call, stored run) against the same model
 * call made directly through kernel/llm, both against one local fake model, in one process: a
 * child of its own, started with the node flags of `npm start` (bench/child.ts), so the platform
 * runs as it does in production and not in the driver's heap (which holds every latency of the
 * load phases). Overhead = platform p50 − direct p50 (aim: under 1.5 ms, issue #15), from calls
 * made one at a time with the two alternating, so the machine's drift reaches both alike.
 */
export interface PromptBenchFigures {
  platform: { p50Ms: number; p99Ms: number; runsPerSecond: number };
  direct: { p50Ms: number; p99Ms: number; callsPerSecond: number };
  overheadP50Ms: number;
  sequentialCalls: number;
  concurrentCalls: number;
}

const SEQUENTIAL = 1_000;
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
  try {
    // A lean HTTP client (jsonClient): the client runs in this process too.
    const client = jsonClient(platform.url, CONCURRENCY);
    const call = async (method: string, p: string, key: string, body?: unknown) => {
      const res = await client(method, p, key, body);
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
      const created = await call('POST', '/control-plane/api/v1/auth/api-keys', admin, {
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
    const directOnce = () =>
      platform.kernel.llm.complete({ model: 'bench-model', messages: [{ role: 'user', content: rendered }], temperature: 0.7, maxTokens: 4096 });

    // Warm-up, as the other phases discard their first 2 s.
    for (let i = 0; i < WARMUP; i++) await Promise.all([testOnce(), directOnce()]);
    // One at a time, the two alternating: the machine's drift within the phase reaches both alike.
    const [platformSeq, directSeq] = await alternating(testOnce, directOnce, SEQUENTIAL);
    const platformRate = await concurrent(testOnce, CONCURRENT, CONCURRENCY);
    const directRate = await concurrent(directOnce, CONCURRENT, CONCURRENCY);
    return {
      platform: { p50Ms: pct(platformSeq, 50), p99Ms: pct(platformSeq, 99), runsPerSecond: platformRate },
      direct: { p50Ms: pct(directSeq, 50), p99Ms: pct(directSeq, 99), callsPerSecond: directRate },
      overheadP50Ms: round(pct(platformSeq, 50) - pct(directSeq, 50)),
      sequentialCalls: SEQUENTIAL,
      concurrentCalls: CONCURRENT,
    };
  } finally {
    await local.stop();
    await fake.close();
  }
}

/** `n` timed calls of each, one at a time, alternating `a` and `b` (each first in turn). */
async function alternating(a: () => Promise<unknown>, b: () => Promise<unknown>, n: number): Promise<[number[], number[]]> {
  const calls = [a, b];
  const samples: [number[], number[]] = [[], []];
  for (let i = 0; i < 2 * n; i++) {
    const which = (i + (i >> 1)) % 2; // a b, b a, a b, …
    const t = performance.now();
    await calls[which]!();
    samples[which]!.push(performance.now() - t);
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
