import { performance } from 'node:perf_hooks';
import { createLlmProvider } from '../kernel/llm';
import { createLogger } from '../kernel/logger';

/**
 * The raw model call through our provider (kernel/llm, the `openai` SDK, HTTP keep-alive) against
 * the local fake OpenAI-compatible server (test/support/fake-llm.ts): the baseline the prompt
 * library's benchmark compares its prompt tests with. Two phases after a short warm-up:
 *  - 500 calls one after another: the unloaded latency, `p50Ms` / `p99Ms`;
 *  - 2,000 calls 16 at a time: the throughput, `callsPerSecond` (its latencies are in
 *    `concurrentP50Ms` / `concurrentP99Ms`).
 * The fake answers with usage, so no tokenizer time is included.
 */

export interface DirectModelCallFigures {
  /** Calls per second with 16 in flight. */
  callsPerSecond: number;
  /** Latency of one call at a time. */
  p50Ms: number;
  p99Ms: number;
  sequentialCallsPerSecond: number;
  concurrentP50Ms: number;
  concurrentP99Ms: number;
}

const WARMUP_CALLS = 50;
const SEQUENTIAL_CALLS = 500;
const CONCURRENT_CALLS = 2000;
const CONCURRENCY = 16;

function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, index)] * 100) / 100;
}

/** Runs `fn` for 0..n-1 with at most `width` calls in flight. */
async function inParallel(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

export async function benchDirectModelCall(fakeUrl: string): Promise<DirectModelCallFigures> {
  const llm = createLlmProvider({ baseUrl: fakeUrl, models: ['default'] }, createLogger('warn'));
  const call = async (i: number, latencies: number[]) => {
    const started = performance.now();
    await llm.complete({
      messages: [
        { role: 'system', content: 'You are a benchmark.' },
        { role: 'user', content: `Summarise item ${i}: the quick brown fox jumps over the lazy dog.` },
      ],
      temperature: 0.7,
      maxTokens: 256,
    });
    latencies.push(performance.now() - started);
  };

  await inParallel(WARMUP_CALLS, 4, (i) => call(i, []));

  const sequential: number[] = [];
  let started = performance.now();
  for (let i = 0; i < SEQUENTIAL_CALLS; i++) await call(i, sequential);
  const sequentialMs = performance.now() - started;

  const concurrent: number[] = [];
  started = performance.now();
  await inParallel(CONCURRENT_CALLS, CONCURRENCY, (i) => call(i, concurrent));
  const concurrentMs = performance.now() - started;

  return {
    callsPerSecond: Math.round((CONCURRENT_CALLS / (concurrentMs / 1000)) * 10) / 10,
    p50Ms: percentile(sequential, 50),
    p99Ms: percentile(sequential, 99),
    sequentialCallsPerSecond: Math.round((SEQUENTIAL_CALLS / (sequentialMs / 1000)) * 10) / 10,
    concurrentP50Ms: percentile(concurrent, 50),
    concurrentP99Ms: percentile(concurrent, 99),
  };
}
