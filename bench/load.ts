import autocannon from 'autocannon';
import { Pool, type Dispatcher } from 'undici';
import type { JsonAnswer } from '../test/support/platform';

/** One autocannon run against one target, with every accepted answer's latency. */
export interface Slice {
  durationS: number;
  latencies: number[];
  non2xx: number;
  errors: number;
  mismatches: number;
  statusCodes: Record<string, number>;
}

export interface LoadFigures {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  durationS: number;
  sliceRequestsPerSecond: number[];
  non2xx: number;
  errors: number;
  mismatches: number;
  statusCodes: Record<string, number>;
}

export interface Target {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  verifyBody?: (body: string) => boolean;
  /** The answers that count (default 2xx). */
  accept?: (status: number) => boolean;
  connections?: number;
}

export async function slice(target: Target, seconds: number): Promise<Slice> {
  const latencies: number[] = [];
  const accept = target.accept ?? ((s: number) => s >= 200 && s < 300);
  const instance = autocannon({
    url: target.url,
    connections: target.connections ?? 32,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    method: target.method ?? 'GET',
    headers: target.headers,
    body: target.body,
    ...(target.verifyBody && { verifyBody: target.verifyBody }),
  });
  let rejected = 0;
  instance.on('response', (_c: unknown, status: number, _b: number, ms: number) => {
    if (accept(status)) latencies.push(ms);
    else rejected++;
  });
  const result = await instance;
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(count);
  return { durationS: result.duration, latencies, non2xx: rejected, errors: result.errors, mismatches: result.mismatches, statusCodes };
}

export function percentile(samples: number[], p: number): number {
  if (!samples.length) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const round = (n: number, d: number) => Math.round(n * 10 ** d) / 10 ** d;

export function figures(slices: Slice[]): LoadFigures {
  const latencies = slices.flatMap((s) => s.latencies);
  const durationS = slices.reduce((a, s) => a + s.durationS, 0);
  const statusCodes: Record<string, number> = {};
  for (const s of slices) for (const [c, n] of Object.entries(s.statusCodes)) statusCodes[c] = (statusCodes[c] ?? 0) + n;
  return {
    requestsPerSecond: round(latencies.length / durationS, 0),
    latencyP50Ms: round(percentile(latencies, 50), 2),
    latencyP99Ms: round(percentile(latencies, 99), 2),
    requests: latencies.length,
    durationS: round(durationS, 2),
    sliceRequestsPerSecond: slices.map((s) => round(s.latencies.length / s.durationS, 0)),
    non2xx: slices.reduce((a, s) => a + s.non2xx, 0),
    errors: slices.reduce((a, s) => a + s.errors, 0),
    mismatches: slices.reduce((a, s) => a + s.mismatches, 0),
    statusCodes,
  };
}

/**
 * How every load phase (reads, workflow executions, short links) is timed, from the environment:
 * BENCH_WARMUP seconds of discarded warm-up per target, then BENCH_DURATION seconds measured per
 * target, cut into BENCH_ROUNDS interleaved slices (bench/README.md says why 10 of 1 s).
 */
export const LOAD_PHASE = {
  warmupS: Number(process.env.BENCH_WARMUP ?? 2),
  durationS: Number(process.env.BENCH_DURATION ?? 10),
  rounds: Number(process.env.BENCH_ROUNDS ?? 10),
};

/**
 * Warm-up, then the measured time cut into `rounds` slices per target, run in rounds whose order
 * rotates, so the machine's drift falls on every target alike.
 */
export async function interleaved<K extends string>(
  targets: Record<K, Target>,
  opts: { warmupS: number; durationS: number; rounds: number; onSlice?: (name: K, s: Slice) => void },
): Promise<Record<K, LoadFigures>> {
  const names = Object.keys(targets) as K[];
  for (const name of names) opts.onSlice?.(name, await slice(targets[name], opts.warmupS));
  const measured = Object.fromEntries(names.map((n) => [n, [] as Slice[]])) as Record<K, Slice[]>;
  for (let r = 0; r < opts.rounds; r++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length]!;
      const s = await slice(targets[name], opts.durationS / opts.rounds);
      opts.onSlice?.(name, s);
      measured[name].push(s);
    }
  }
  return Object.fromEntries(names.map((n) => [n, figures(measured[n])])) as Record<K, LoadFigures>;
}

/**
 * A JSON client for drivers that make many requests from their own process, which shares the
 * machine's cores with the platform it measures: undici's Pool (its `request`, not fetch), whose
 * CPU a request is about 32 µs against 70 µs for node's keep-alive `http.Agent` and more for
 * fetch, on this kind of machine (64 connections, a 600-byte answer). Resolves with the status and
 * the parsed body.
 */
export function jsonClient(baseUrl: string, connections: number) {
  const pool = new Pool(baseUrl, { connections });
  return async <T = unknown>(method: string, path: string, key: string, body?: unknown): Promise<JsonAnswer<T>> => {
    const res = await pool.request({
      method: method as Dispatcher.HttpMethod,
      path,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as T };
  };
}
