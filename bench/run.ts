import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { benchQueue, type QueueBench } from './queue.bench';
import { benchPromptTests, SEQUENTIAL as PROMPT_CALLS, type PromptBenchFigures } from './promptlib.bench';
import { benchEngine, type EngineBenchFigures } from './engine.bench';
import { benchScaleOut, type ScaleOutFigures, type TopologyFigures } from './scaleout.bench';
import { benchTasks, type TaskBenchFigures } from './tasks.bench';
import { benchLinks, type LinksBenchFigures } from './links.bench';
import { benchScale, scaleMarkdown } from './scale.bench';
import { benchStart, type StartFigures } from './start.bench';
import { spawnServer, type ServerChild } from './child';
import { createScratchDatabase, resolveBenchServer } from './scratch-db';
import { LOAD_PHASE } from './load';
import { startOtlpSink, taskRounds, type TaskRoundFigures, type TaskSide } from './tracing.bench';

/**
 * `npm run bench`: every figure the platform promises beside a baseline measured in the same run,
 * written to bench/results/ (see bench/README.md). Knobs: DATABASE_URL (else an embedded server),
 * BENCH_DURATION / BENCH_WARMUP (s, default 10 / 2), BENCH_ROUNDS (10), BENCH_KEYS (300),
 * BENCH_ONLY=rest,graphql,subscription,queue,promptlib,engine,tasks,links,start,scaleout,scale,tracing (a
 * partial run writes no result files; scale and tracing run only when named), BENCH_CPU_PROF=<dir>.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const RESULTS_DIR = path.join(ROOT, 'bench', 'results');
const CONNECTIONS = 32;
const PIPELINING = 1;
/** Each target's warm-up and measured seconds, and the interleaved slices the latter is cut into. */
const { durationS: DURATION_S, warmupS: WARMUP_S, rounds: ROUNDS } = LOAD_PHASE;
const KEYS = Number(process.env.BENCH_KEYS ?? 300);
const SUBSCRIPTION_EVENTS = 100;
const SUBSCRIPTION_WARMUP = 10;
/** How long the read phase's server is left with nothing to do before its idle memory is read. */
const IDLE_SETTLE_MS = 30_000;
const ONLY = new Set((process.env.BENCH_ONLY ?? 'rest,graphql,subscription,queue,promptlib,engine,tasks,links,start,scaleout').split(',').map((s) => s.trim()));
const FULL_RUN = ['rest', 'graphql', 'subscription', 'queue'].every((p) => ONLY.has(p));
/** The whole run is cut off here, whatever happens (about 7 minutes; the scale phase takes longer). */
const MAX_RUN_MS = Number(process.env.BENCH_MAX_SECONDS ?? (ONLY.has('scale') ? 1800 : 720)) * 1000;

const GRAPHQL_QUERY = 'query($id: ID!){ apiKey(id:$id){ id name tier permissions status } }';
const REST_PATH = (id: string) => `/control-plane/api/v1/auth/api-keys/${id}`;
const BASELINE_PATH = (id: string) => `/bench/baseline/api-keys/${id}`;

interface ServerInfo {
  url: string;
  /** The bare node:http + pg reference in the same process (bench/server.ts). */
  bareUrl: string;
  keys: string[];
  ids: string[];
  keyId: string;
}

interface LoadFigures {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMeanMs: number;
  /** Answers received in the measured slices, and the slices' total length. */
  requests: number;
  durationS: number;
  /** Requests per second of each measured slice, in order (shows the machine's drift). */
  sliceRequestsPerSecond: number[];
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  statusCodes: Record<string, number>;
  warmup: { requests: number; non2xx: number; errors: number; mismatches: number };
}

interface LatencyFigures {
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  samples: number;
  missed: number;
}

interface Figure {
  id: string;
  figure: string;
  unit: string;
  ours: number | null;
  baseline: number | null;
  ratio: number | null;
  /** Reads: the bare node:http + pg reference, and ours as a share of it. */
  reference?: number | null;
  referenceRatio?: number | null;
  /** When there is no number: why. */
  note?: string;
}

// ---------------------------------------------------------------------------------------------
// The server child

let running: ServerChild<ServerInfo> | undefined;

async function startServer(serverUrl: string): Promise<ServerInfo> {
  running = await spawnServer<ServerInfo>(
    'bench server',
    path.join(__dirname, 'server.js'),
    [],
    { ...process.env, DATABASE_URL: serverUrl, BENCH_KEYS: String(KEYS), LOG_LEVEL: 'error' },
    (info) => typeof info.url === 'string' && Array.isArray(info.keys),
  );
  return running.info;
}

async function stopServer(): Promise<void> {
  await running?.stop();
}

// ---------------------------------------------------------------------------------------------
// Load: autocannon, one key per request in rotation (rate limits are per key)

interface Target {
  title: string;
  /** Sent to the bare reference server instead of the platform. */
  bare?: boolean;
  /** Sent to this server (its keys) instead of the one `loads` is given (the tracing phase's two platforms). */
  server?: ServerInfo;
  method: 'GET' | 'POST';
  path: (id: string) => string;
  body?: (id: string) => string;
  verify: (body: string) => boolean;
}

interface Slice {
  durationS: number;
  latencies: number[];
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  statusCodes: Record<string, number>;
}

/** One autocannon run of `seconds` on one target; every answer's latency is kept. */
async function slice(server: ServerInfo, target: Target, seconds: number): Promise<Slice> {
  // keys[0] is kept out of the load: the subscription figure uses it.
  const pool = server.keys.slice(1).map((key, i) => {
    const id = server.ids[i + 1]!;
    return { authorization: `Bearer ${key}`, path: target.path(id), body: target.body?.(id) };
  });
  let next = 0;
  const latencies: number[] = [];
  const instance = autocannon({
    url: target.bare ? server.bareUrl : server.url,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration: seconds,
    timeout: 10,
    method: target.method,
    headers: target.body ? { 'content-type': 'application/json' } : {},
    verifyBody: target.verify,
    requests: [
      {
        method: target.method,
        setupRequest(req) {
          const item = pool[next++ % pool.length]!;
          req.headers = { ...req.headers, authorization: item.authorization };
          req.path = item.path;
          if (item.body !== undefined) req.body = item.body;
          return req;
        },
      },
    ],
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const result = await instance;
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(count);
  return {
    durationS: result.duration,
    latencies,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    statusCodes,
  };
}

/**
 * The targets' load phases, interleaved: a discarded warm-up of WARMUP_S per target, then ROUNDS
 * rounds in which every target gets DURATION_S / ROUNDS seconds, the order rotating each round.
 * This machine's speed drifts by tens of percent over a minute (other work, CPU steal): back-to-back
 * 10 s runs would put that drift into the ratios, interleaved slices spread it over every target.
 */
async function loads<K extends string>(server: ServerInfo, which: Partial<Record<K, Target>>): Promise<Record<K, LoadFigures>> {
  const names = (Object.keys(which) as K[]).filter((n) => which[n]);
  const warm = new Map<K, Slice>();
  for (const name of names) warm.set(name, await slice(which[name]!.server ?? server, which[name]!, WARMUP_S));
  const measured = new Map<K, Slice[]>(names.map((n) => [n, []]));
  const sliceS = DURATION_S / ROUNDS;
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length]!;
      measured.get(name)!.push(await slice(which[name]!.server ?? server, which[name]!, sliceS));
    }
  }
  const out = {} as Record<K, LoadFigures>;
  for (const name of names) {
    const slices = measured.get(name)!;
    const latencies = slices.flatMap((s) => s.latencies);
    const durationS = slices.reduce((a, s) => a + s.durationS, 0);
    const sum = (f: (s: Slice) => number) => slices.reduce((a, s) => a + f(s), 0);
    const statusCodes: Record<string, number> = {};
    for (const s of slices) for (const [code, n] of Object.entries(s.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
    const w = warm.get(name)!;
    out[name] = {
      requestsPerSecond: round(latencies.length / durationS, 0),
      latencyP50Ms: round(percentile(latencies, 50), 2),
      latencyP99Ms: round(percentile(latencies, 99), 2),
      latencyMeanMs: round(latencies.reduce((a, b) => a + b, 0) / (latencies.length || 1), 2),
      requests: latencies.length,
      durationS: round(durationS, 2),
      sliceRequestsPerSecond: slices.map((s) => round(s.latencies.length / s.durationS, 0)),
      non2xx: sum((s) => s.non2xx),
      errors: sum((s) => s.errors),
      timeouts: sum((s) => s.timeouts),
      mismatches: sum((s) => s.mismatches),
      statusCodes,
      warmup: { requests: w.latencies.length + w.non2xx, non2xx: w.non2xx, errors: w.errors, mismatches: w.mismatches },
    };
  }
  return out;
}

const targets: Record<'bare' | 'baseline' | 'rest' | 'graphql', Target> = {
  bare: {
    title: 'bare node:http + pg',
    bare: true,
    method: 'GET',
    path: (id) => `/api-keys/${id}`,
    verify: (body) => body.startsWith('{"success":true,"data":{"id":'),
  },
  baseline: {
    title: 'baseline',
    method: 'GET',
    path: BASELINE_PATH,
    verify: (body) => body.startsWith('{"success":true,"data":{"id":'),
  },
  rest: {
    title: 'REST',
    method: 'GET',
    path: REST_PATH,
    verify: (body) => body.startsWith('{"success":true,"data":{"id":'),
  },
  graphql: {
    title: 'GraphQL',
    method: 'POST',
    path: () => '/graphql',
    body: (id) => JSON.stringify({ query: GRAPHQL_QUERY, variables: { id } }),
    verify: (body) => body.startsWith('{"data":{"apiKey":{"id":') && !body.includes('"errors"'),
  },
};

// ---------------------------------------------------------------------------------------------
// Tracing: the same platform twice, tracing off and tracing on (every span sampled, exported over
// OTLP/HTTP protobuf to a local collector that only counts), measured side by side

const TRACING_TASKS = {
  n: Number(process.env.TRACING_TASKS_N ?? 1000),
  rounds: Number(process.env.TRACING_TASKS_ROUNDS ?? 2),
  warmup: Number(process.env.TRACING_TASKS_WARMUP ?? 1000),
};

export interface TracingFigures {
  reads: { off: LoadFigures; on: LoadFigures };
  tasks: { off: TaskRoundFigures; on: TaskRoundFigures };
  /** What the traced platform exported during the phase. */
  exported: { requests: number; bytes: number };
}

async function benchTracing(serverUrl: string): Promise<TracingFigures> {
  const sink = await startOtlpSink();
  type Info = ServerInfo & TaskSide;
  const start = (name: string, env: Record<string, string>) =>
    spawnServer<Info>(
      name,
      path.join(__dirname, 'server.js'),
      [],
      { ...process.env, DATABASE_URL: serverUrl, BENCH_KEYS: String(KEYS), BENCH_TASK_KEYS: '16', LOG_LEVEL: 'error', ...env },
      (info) => typeof info.url === 'string' && Array.isArray(info.taskKeys),
    );
  const off = await start('bench server (tracing off)', {});
  try {
    const on = await start('bench server (tracing on)', {
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_TRACES_SAMPLER: 'always_on',
      OTEL_SERVICE_NAME: 'bench-traced',
    });
    try {
      await checkAnswers(on.info);
      const reads = await loads(off.info, { off: { ...targets.rest, server: off.info }, on: { ...targets.rest, server: on.info } });
      const tasks = await taskRounds({ off: off.info, on: on.info }, TRACING_TASKS.n, TRACING_TASKS.rounds, TRACING_TASKS.warmup);
      return { reads, tasks, exported: { ...sink.received } };
    } finally {
      await on.stop();
    }
  } finally {
    await off.stop();
    await sink.close();
  }
}

/** One request of each kind outside the load: the full path and the baseline answer the same data. */
async function checkAnswers(server: ServerInfo): Promise<void> {
  const key = server.keys[1]!;
  const id = server.ids[1]!;
  const get = async (p: string) => {
    const res = await fetch(server.url + p, { headers: { authorization: `Bearer ${key}` } });
    const body = (await res.json()) as { data?: Record<string, unknown>; metadata?: Record<string, unknown> };
    if (res.status !== 200) throw new Error(`GET ${p} answered ${res.status}: ${JSON.stringify(body)}`);
    if (!res.headers.get('x-ratelimit-limit')) throw new Error(`GET ${p} carries no rate-limit headers`);
    return body;
  };
  const full = await get(REST_PATH(id));
  const base = await get(BASELINE_PATH(id));
  const shape = (b: { data?: Record<string, unknown>; metadata?: Record<string, unknown> }) =>
    JSON.stringify({ ...b, metadata: Object.keys(b.metadata ?? {}), data: { ...b.data, last_used_at: 'changes as the key is used' } });
  if (shape(full) !== shape(base)) {
    throw new Error(`the baseline answers differently from the full path:\n full:     ${JSON.stringify(full)}\n baseline: ${JSON.stringify(base)}`);
  }
  const res = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query: GRAPHQL_QUERY, variables: { id } }),
  });
  const gql = (await res.json()) as { errors?: unknown; data?: { apiKey?: { id?: string } } };
  if (res.status !== 200 || gql.errors || gql.data?.apiKey?.id !== id) throw new Error(`GraphQL apiKey answered ${res.status}: ${JSON.stringify(gql)}`);
}

// ---------------------------------------------------------------------------------------------
// Subscription event latency: PATCH the key's name, time the apiKeyUpdated event

async function subscriptionLatency(server: ServerInfo): Promise<{ event: LatencyFigures; patch: LatencyFigures }> {
  const key = server.keys[0]!;
  const id = server.keyId;
  const client = createClient({
    url: server.url.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${key}` },
    retryAttempts: 0,
    lazy: true,
  });
  const waiting = new Map<string, (at: number) => void>();
  let failure: unknown;
  const unsubscribe = client.subscribe<{ apiKeyUpdated: { id: string; name: string } }>(
    { query: 'subscription($id: ID!){ apiKeyUpdated(id:$id){ id name tier permissions status } }', variables: { id } },
    {
      next: (value) => {
        const at = performance.now();
        const name = value.data?.apiKeyUpdated?.name;
        if (name) waiting.get(name)?.(at);
      },
      error: (err) => (failure = err),
      complete: () => undefined,
    },
  );

  const patch = async (name: string, timeoutMs: number) => {
    const arrived = new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs);
      waiting.set(name, (at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
    const t0 = performance.now();
    const res = await fetch(server.url + REST_PATH(id), {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ name }),
    });
    await res.arrayBuffer();
    const answered = performance.now();
    if (res.status !== 200) throw new Error(`PATCH answered ${res.status}`);
    const eventAt = await arrived;
    waiting.delete(name);
    return { patchMs: answered - t0, eventMs: eventAt === null ? null : eventAt - t0 };
  };

  try {
    // Until the subscription is live (its first event arrives), then a few unrecorded rounds.
    const ready = performance.now() + 10_000;
    for (let i = 0; ; i++) {
      if (failure) throw new Error(`subscription failed: ${JSON.stringify(failure)}`);
      if ((await patch(`ready ${i}`, 500)).eventMs !== null) break;
      if (performance.now() > ready) throw new Error('the subscription delivered no event within 10 s');
    }
    for (let i = 0; i < SUBSCRIPTION_WARMUP; i++) await patch(`warm ${i}`, 2000);
    const events: number[] = [];
    const patches: number[] = [];
    let missed = 0;
    for (let i = 0; i < SUBSCRIPTION_EVENTS; i++) {
      const r = await patch(`bench ${i}`, 2000);
      patches.push(r.patchMs);
      if (r.eventMs === null) missed++;
      else events.push(r.eventMs);
    }
    return { event: latencyFigures(events, missed), patch: latencyFigures(patches, 0) };
  } finally {
    unsubscribe();
    await client.dispose();
  }
}

// ---------------------------------------------------------------------------------------------

function percentile(samples: number[], p: number): number {
  if (!samples.length) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function latencyFigures(samples: number[], missed: number): LatencyFigures {
  return {
    p50Ms: round(percentile(samples, 50), 2),
    p99Ms: round(percentile(samples, 99), 2),
    meanMs: round(samples.reduce((a, b) => a + b, 0) / (samples.length || 1), 2),
    samples: samples.length,
    missed,
  };
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

function ratio(ours: number | null, baseline: number | null): number | null {
  return ours === null || baseline === null || !baseline || !Number.isFinite(ours) ? null : round(ours / baseline, 2);
}

/** Resident set size of a process in MB (Linux /proc), or undefined. */
function rssMb(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return Number.isFinite(kb) ? round(kb / 1024, 1) : undefined;
  } catch {
    return undefined;
  }
}

function figure(id: string, name: string, unit: string, ours: number | null, baseline: number | null, note?: string): Figure {
  return { id, figure: name, unit, ours, baseline, ratio: ratio(ours, baseline), ...(note && { note }) };
}

function notYet(id: string, name: string, unit: string, arrives: string): Figure {
  return { id, figure: name, unit, ours: null, baseline: null, ratio: null, note: `not measured yet — arrives with ${arrives}` };
}

function gitCommit(): string | null {
  try {
    return (
      execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim() || null
    );
  } catch {
    return null;
  }
}

function machine() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpuCount: cpus.length,
    totalMemoryBytes: os.totalmem(),
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage1m: round(os.loadavg()[0]!, 2),
  };
}

function loadProblems(name: string, f: LoadFigures): string[] {
  const problems: string[] = [];
  if (f.non2xx) {
    const limited = f.statusCodes['429'] ? ' — 429s: the keys ran out of rate limit, raise BENCH_KEYS' : '';
    problems.push(`${name}: ${f.non2xx} non-2xx answers (${JSON.stringify(f.statusCodes)})${limited}`);
  }
  if (f.errors) problems.push(`${name}: ${f.errors} connection errors (${f.timeouts} timeouts)`);
  if (f.mismatches) problems.push(`${name}: ${f.mismatches} answers without the expected body`);
  if (f.warmup.non2xx || f.warmup.errors || f.warmup.mismatches) {
    problems.push(`${name} warm-up: ${f.warmup.non2xx} non-2xx, ${f.warmup.errors} errors, ${f.warmup.mismatches} unexpected bodies`);
  }
  return problems;
}

function fmt(n: number | null, unit: string): string {
  if (n === null || !Number.isFinite(n)) return '—';
  if (unit === 'req/s' || unit === 'jobs/s') return Math.round(n).toLocaleString('en-US');
  return n.toFixed(n >= 100 || Number.isInteger(n) ? 0 : n >= 10 ? 1 : 2);
}

function markdown(run: {
  startedAt: string;
  machine: ReturnType<typeof machine>;
  commit: string | null;
  figures: Figure[];
  problems: string[];
  totalMs: number;
  slices?: string;
  taskRounds?: string;
  queueRounds?: string;
  taskWarmUp?: TaskBenchFigures['warmUp'];
  taskCpu?: TaskBenchFigures['cpu'];
}): string {
  const m = run.machine;
  const restRatio = run.figures.find((f) => f.id === 'rest.rps')?.ratio;
  const lines = [
    '# Benchmark results',
    '',
    `Measured ${run.startedAt} on ${m.cpuModel} × ${m.cpuCount}, ${(m.totalMemoryBytes / 2 ** 30).toFixed(1)} GiB, ` +
      `Node ${m.node}, ${m.os}${run.commit ? `, commit ${run.commit}` : ''} (load average ${m.loadAverage1m} at the start); ` +
      `the run took ${Math.round(run.totalMs / 1000)} s.`,
    '',
    '| figure | ours | baseline | ratio | bare reference | ratio to bare |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const f of run.figures) {
    if (f.ours === null && f.note) {
      lines.push(`| ${f.figure} | ${f.note} | — | — | — | — |`);
      continue;
    }
    const ref = f.reference === undefined ? '— | —' : `${fmt(f.reference ?? null, f.unit)} | ${f.referenceRatio ?? '—'}`;
    lines.push(`| ${f.figure} (${f.unit}) | ${fmt(f.ours, f.unit)} | ${fmt(f.baseline, f.unit)}${f.note ? ` (${f.note})` : ''} | ${f.ratio ?? '—'} | ${ref} |`);
  }
  lines.push(
    '',
    'Ratio = ours / baseline: for throughput higher is better (REST and GraphQL aim ≥ 0.9), for latencies lower is better. ' +
      'Ratio to bare = ours / the bare reference (for the reads, a `node:http` handler doing one primary-key read with `pg`, no framework, in the same process, measured in the same interleaved run: the physical ceiling of a read on this machine, baseline aim ≥ 0.8; for prompt tests, the one described below).' +
      (restRatio !== undefined && restRatio !== null && restRatio < 0.8 ? ` **The REST read is at ${restRatio} of the baseline, below the 0.8 aim.**` : ''),
    '',
    `- REST and GraphQL reads: autocannon, ${CONNECTIONS} connections, pipelining ${PIPELINING}; per target ${WARMUP_S} s of warm-up ` +
      `discarded, then ${DURATION_S} s measured in ${ROUNDS} slices interleaved with the other targets' (order rotating each round); ` +
      `each request authenticated by the next of ${KEYS - 1} enterprise keys and reading that key. ` +
      'Baseline: `GET /bench/baseline/api-keys/:key_id` on the same server — same authentication, rate limiting, database read and ' +
      'envelope, without REST adapter → gateway → subgraph.' +
      (run.slices ? ` Requests/s per slice: ${run.slices}.` : ''),
    '- Subscription: `apiKeyUpdated(id)` over graphql-ws, time from sending `PATCH /control-plane/api/v1/auth/api-keys/:key_id` ' +
      `to the event's arrival, ${SUBSCRIPTION_EVENTS} sequential changes; baseline: the PATCH's own round trip.`,
    '- Queue: bench/queue.bench.ts, kernel/queue.ts (producer and worker on separate event buses) against graphile-worker 0.17 on the same server, ' +
      'with its defaults and with its batched local queue (`localQueue.size` 50), each in its own schema; throughput rounds back to back, order rotating.' +
      (run.queueRounds ? ` Jobs/s per round (ours / default / batched): ${run.queueRounds}.` : ''),
    `- Workflow executions: bench/engine.bench.ts, the platform in a child process on a scratch database; autocannon, 32 connections, ` +
      `${WARMUP_S} s warm-up then ${DURATION_S} s in ${ROUNDS} interleaved slices per target: \`POST /webhook/bench/orders\` (Webhook → Set, ` +
      'responseMode lastNode: the answer is the Set output, sent once the execution, its run data, logs and request log are stored) ' +
      'and `POST /webhook/bench/n8n-orders` (an n8n export imported as is: Webhook 2 → Set 3.4 → If 2.2 → Merge 3 → Code 2 → Respond to Webhook, ' +
      'run natively with the Code node in the sandbox, persisted the same way) ' +
      'against `POST /bench/baseline/orders`, a plain handler on the same server that builds the same answer and inserts the same rows in one statement.',
    `- Prompt tests: bench/promptlib.bench.ts, client, platform and fake model in one child process; ${PROMPT_CALLS.toLocaleString('en')} calls of each target one at a time, ` +
      'the order rotating: `POST /v1/promptlib/prompts/{id}/test`, the direct model call through `kernel/llm`, and the bare reference, a `node:http` ' +
      'handler making the same model call and inserting the run with the same statement on a `pg` pool of its own (committed before the answer, no ' +
      "framework, authentication, rate limit, validation or GraphQL). The reference's overhead over the direct call is the price of one more HTTP hop " +
      'and one committed insert on this machine, below which the platform cannot go.',
    ...(run.figures.some((f) => f.id === 'tracing.rest.rps')
      ? [
          '- Tracing (`BENCH_ONLY=…,tracing`): the platform twice in one run, each in its child process on its own scratch database: tracing off, ' +
            'and tracing on with every span sampled (`OTEL_TRACES_SAMPLER=always_on`) and exported over OTLP/HTTP protobuf to a local collector ' +
            'in the driver that only counts what it receives (bench/tracing.bench.ts). The REST read as above, the two platforms in interleaved ' +
            `slices; agent tasks end to end (offline model, 64 clients) in ${TRACING_TASKS.rounds} rounds of ${TRACING_TASKS.n} per side after a ` +
            `discarded warm-up of ${TRACING_TASKS.warmup}, order alternating.`,
        ]
      : []),
    ...(run.taskRounds
      ? [
          "- Agent tasks: bench/tasks.bench.ts; the end-to-end figures are over rounds interleaved with the raw queue's (order alternating), " +
            `each side's figure over all its rounds. Tasks/s against jobs/s per round: ${run.taskRounds}` +
            (run.taskWarmUp
              ? `, after a discarded warm-up round of ${run.taskWarmUp.tasks} tasks and as many jobs from a cold start: ${run.taskWarmUp.tasksPerSecond} / ${run.taskWarmUp.jobsPerSecond}.`
              : '.') +
            (run.taskCpu
              ? ` CPU per task in those rounds: platform process ${run.taskCpu.task.platformMs} ms, driver (HTTP clients) ${run.taskCpu.task.driverMs} ms, ` +
                `PostgreSQL ${run.taskCpu.task.postgresMs} ms; per raw job: driver (producers and worker) ${run.taskCpu.rawJob.driverMs} ms, PostgreSQL ${run.taskCpu.rawJob.postgresMs} ms.`
              : ''),
        ]
      : []),
    '',
    run.problems.length
      ? `**Problems in this run:**\n\n${run.problems.map((p) => `- ${p}`).join('\n')}`
      : 'No non-2xx answers, connection errors or unexpected bodies in any load phase.',
    '',
  );
  return lines.join('\n');
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const t0 = performance.now();
  const host = machine();
  const watchdog = setTimeout(() => {
    process.stderr.write(`bench: still running after ${MAX_RUN_MS / 1000} s, giving up\n`);
    process.exit(2); // the server child is killed on exit (spawnServer)
  }, MAX_RUN_MS);
  watchdog.unref();

  const durationsMs: Record<string, number> = {};
  const phase = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const s = performance.now();
    process.stderr.write(`bench: ${name}…\n`);
    try {
      return await fn();
    } finally {
      durationsMs[name] = Math.round(performance.now() - s);
    }
  };

  const dbServer = await phase('database', resolveBenchServer);
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  try {
    const measuredLoads: Partial<Record<'bare' | 'baseline' | 'rest' | 'graphql', LoadFigures>> = {};
    const memory: { startedMb?: number; idleMb?: number; loadMb?: number } = {};
    let subscription: { event: LatencyFigures; patch: LatencyFigures } | undefined;
    if (ONLY.has('rest') || ONLY.has('graphql') || ONLY.has('subscription')) {
      const server = await phase('server start', () => startServer(dbServer.url));
      try {
        await checkAnswers(server);
        const which: Partial<Record<'bare' | 'baseline' | 'rest' | 'graphql', Target>> = { bare: targets.bare, baseline: targets.baseline };
        if (ONLY.has('rest')) which.rest = targets.rest;
        if (ONLY.has('graphql')) which.graphql = targets.graphql;
        // Right after start, then once quiet long enough for the process to give memory back (kernel/memory.ts: rounds of full collections after 5 s quiet, scavenges 5 s later).
        memory.startedMb = rssMb(running?.child.pid);
        await phase('idle', () => new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS)));
        memory.idleMb = rssMb(running?.child.pid);
        if (ONLY.has('rest') || ONLY.has('graphql')) {
          // The server's resident memory, sampled through the load: its peak is the figure.
          let peak = 0;
          const sampler = setInterval(() => (peak = Math.max(peak, rssMb(running?.child.pid) ?? 0)), 250);
          try {
            Object.assign(measuredLoads, await phase('REST and GraphQL load', () => loads(server, which)));
          } finally {
            clearInterval(sampler);
          }
          memory.loadMb = peak || undefined;
        }
        if (ONLY.has('subscription')) subscription = await phase('subscription', () => subscriptionLatency(server));
      } finally {
        await phase('server stop', stopServer);
      }
      for (const [name, f] of Object.entries(measuredLoads)) problems.push(...loadProblems(name, f));
      if (subscription?.event.missed) problems.push(`subscription: ${subscription.event.missed} of ${SUBSCRIPTION_EVENTS} events did not arrive within 2 s`);
      raw.load = measuredLoads;
      raw.memory = memory;
      raw.subscription = subscription;
    }

    let queue: QueueBench | undefined;
    if (ONLY.has('queue')) {
      queue = await phase('queue', async () => {
        const db = await createScratchDatabase(dbServer.url, 'queue');
        try {
          return await benchQueue(db.url);
        } finally {
          await db.drop();
        }
      });
      raw.queue = queue;
    }

    let prompts: PromptBenchFigures | undefined;
    if (ONLY.has('promptlib')) {
      prompts = await phase('prompt tests', async () => {
        const db = await createScratchDatabase(dbServer.url, 'promptlib');
        try {
          return await benchPromptTests(db.url);
        } finally {
          await db.drop();
        }
      });
      raw.promptlib = prompts;
    }

    let tasks: TaskBenchFigures | undefined;
    if (ONLY.has('tasks')) {
      tasks = await phase('agent tasks', () => benchTasks());
      raw.tasks = tasks;
      if (tasks.endToEnd.failed) problems.push(`agent tasks: ${tasks.endToEnd.failed} failed (${JSON.stringify(tasks.endToEnd.errors)})`);
    }

    let engine: EngineBenchFigures | undefined;
    if (ONLY.has('engine')) {
      engine = await phase('workflow executions', () => benchEngine(dbServer.url));
      raw.engine = engine;
      for (const [name, f] of [
        ['engine webhook', engine.ours],
        ['engine n8n workflow', engine.n8n],
        ['engine baseline', engine.baseline],
      ] as const) {
        if (f.non2xx) problems.push(`${name}: ${f.non2xx} non-2xx answers (${JSON.stringify(f.statusCodes)})`);
        if (f.errors) problems.push(`${name}: ${f.errors} connection errors`);
        if (f.mismatches) problems.push(`${name}: ${f.mismatches} answers without the expected body`);
      }
      if (engine.persisted.executions < engine.persisted.answers) {
        problems.push(`engine: ${engine.persisted.answers} answers but only ${engine.persisted.executions} stored executions`);
      }
    }

    let links: LinksBenchFigures | undefined;
    if (ONLY.has('links')) {
      links = await phase('short links', () => benchLinks(dbServer.url));
      raw.links = links;
      for (const [name, f] of [
        ['link redirect', links.redirect],
        ['bare redirect', links.baseline],
        ['link verify', links.verify],
        ['locked-out verify', links.locked],
      ] as const) {
        if (f.non2xx) problems.push(`${name}: ${f.non2xx} unexpected answers (${JSON.stringify(f.statusCodes)})`);
        if (f.errors) problems.push(`${name}: ${f.errors} connection errors`);
      }
      if (links.persisted.visits < links.persisted.answers)
        problems.push(`links: ${links.persisted.answers} redirects but only ${links.persisted.visits} visits stored`);
    }

    let start: StartFigures | undefined;
    if (ONLY.has('start')) {
      start = await phase('start', benchStart);
      raw.start = start;
    }

    let scaleOut: ScaleOutFigures | undefined;
    if (ONLY.has('scaleout')) {
      scaleOut = await phase('scale-out', () => benchScaleOut(dbServer.url));
      raw.scaleOut = scaleOut;
      for (const t of scaleOut.topologies) {
        if (t.tasksFailed) problems.push(`scale-out ${t.topology}: ${t.tasksFailed} agent tasks did not complete`);
        if (t.executionsFailed) problems.push(`scale-out ${t.topology}: ${t.executionsFailed} webhook executions did not succeed`);
      }
    }

    let tracing: TracingFigures | undefined;
    if (ONLY.has('tracing')) {
      tracing = await phase('tracing', () => benchTracing(dbServer.url));
      raw.tracing = tracing;
      for (const [name, f] of Object.entries(tracing.reads)) problems.push(...loadProblems(`tracing ${name}`, f));
      for (const [name, t] of Object.entries(tracing.tasks)) if (t.failed) problems.push(`tracing ${name}: ${t.failed} agent tasks failed`);
      if (!tracing.exported.requests) problems.push('tracing on: nothing was exported to the collector');
    }

    if (ONLY.has('scale')) {
      // Not in the default run (a million rows twice): its own file, whatever else ran.
      const scale = await phase('scale', () => benchScale(dbServer.url));
      raw.scale = scale;
      mkdirSync(RESULTS_DIR, { recursive: true });
      writeFileSync(path.join(RESULTS_DIR, 'scale.md'), scaleMarkdown(scale));
      process.stderr.write(`bench: wrote bench/results/scale.md\n`);
      for (const [name, bySize] of Object.entries(scale.endpoints)) {
        const last = bySize[String(scale.sizes.at(-1))];
        if (last && last.p99Ms >= 100) problems.push(`scale: ${name} p99 ${last.p99Ms} ms at ${scale.sizes.at(-1)} rows (aim < 100 ms)`);
      }
    }

    const b = measuredLoads.baseline;
    const bare = measuredLoads.bare;
    const figures: Figure[] = [];
    /** A read figure also as a share of the bare reference. */
    const read = (f: Figure, ours: LoadFigures, pick: (l: LoadFigures) => number): Figure =>
      bare ? { ...f, reference: pick(bare), referenceRatio: ratio(pick(ours), pick(bare)) } : f;
    if (b && bare) {
      figures.push(
        read(
          figure('baseline.rps', 'Same-server baseline read (reference: bare node:http + pg)', 'req/s', b.requestsPerSecond, null),
          b,
          (l) => l.requestsPerSecond,
        ),
        read(figure('baseline.p50', 'Same-server baseline p50', 'ms', b.latencyP50Ms, null), b, (l) => l.latencyP50Ms),
      );
    }
    if (measuredLoads.rest && b) {
      const r = measuredLoads.rest;
      figures.push(
        read(
          figure('rest.rps', 'REST read `GET /control-plane/api/v1/auth/api-keys/:key_id`', 'req/s', r.requestsPerSecond, b.requestsPerSecond),
          r,
          (l) => l.requestsPerSecond,
        ),
        read(figure('rest.p50', 'REST read p50 latency', 'ms', r.latencyP50Ms, b.latencyP50Ms), r, (l) => l.latencyP50Ms),
        read(figure('rest.p99', 'REST read p99 latency', 'ms', r.latencyP99Ms, b.latencyP99Ms), r, (l) => l.latencyP99Ms),
      );
    }
    if (measuredLoads.graphql && b) {
      const g = measuredLoads.graphql;
      figures.push(
        read(figure('graphql.rps', 'GraphQL read `apiKey(id)`', 'req/s', g.requestsPerSecond, b.requestsPerSecond), g, (l) => l.requestsPerSecond),
        read(figure('graphql.p50', 'GraphQL read p50 latency', 'ms', g.latencyP50Ms, b.latencyP50Ms), g, (l) => l.latencyP50Ms),
        read(figure('graphql.p99', 'GraphQL read p99 latency', 'ms', g.latencyP99Ms, b.latencyP99Ms), g, (l) => l.latencyP99Ms),
      );
    }
    if (memory.idleMb !== undefined) {
      figures.push(
        figure(
          'memory.idle',
          'Resident memory of the platform process, idle after start',
          'MB',
          memory.idleMb,
          null,
          `the \`all\` role, as \`npm start\` runs it, ${IDLE_SETTLE_MS / 1000} s after start with nothing to do`,
        ),
        ...(memory.startedMb !== undefined
          ? [
              figure(
                'memory.started',
                'Resident memory of the platform process right after start',
                'MB',
                memory.startedMb,
                null,
                'before the process has been quiet long enough to give memory back',
              ),
            ]
          : []),
        ...(memory.loadMb !== undefined
          ? [figure('memory.load', 'Resident memory at its peak under the REST and GraphQL load', 'MB', memory.loadMb, memory.idleMb, 'baseline: idle')]
          : []),
      );
    }
    if (subscription) {
      figures.push(
        figure('subscription.p50', 'Subscription event latency p50 (baseline: PATCH round trip)', 'ms', subscription.event.p50Ms, subscription.patch.p50Ms),
        figure('subscription.p99', 'Subscription event latency p99 (baseline: PATCH round trip)', 'ms', subscription.event.p99Ms, subscription.patch.p99Ms),
      );
    }
    if (queue) {
      const gw = 'graphile-worker 0.17';
      const batched = `${gw}, local queue of 50`;
      figures.push(
        figure('queue.p50', `Queue enqueue → start p50 (baseline: ${gw})`, 'ms', queue.ours.enqueueToStartP50Ms, queue.graphile.enqueueToStartP50Ms),
        figure('queue.p99', `Queue enqueue → start p99 (baseline: ${gw})`, 'ms', queue.ours.enqueueToStartP99Ms, queue.graphile.enqueueToStartP99Ms),
        figure(
          'queue.jobs',
          `Queue throughput, 2,000 no-op jobs, concurrency 8 (baseline: ${gw})`,
          'jobs/s',
          queue.ours.jobsPerSecond,
          queue.graphile.jobsPerSecond,
        ),
        figure(
          'queue.batched.p50',
          `Queue enqueue → start p50 (baseline: ${batched})`,
          'ms',
          queue.ours.enqueueToStartP50Ms,
          queue.graphileBatched.enqueueToStartP50Ms,
        ),
        figure(
          'queue.batched.p99',
          `Queue enqueue → start p99 (baseline: ${batched})`,
          'ms',
          queue.ours.enqueueToStartP99Ms,
          queue.graphileBatched.enqueueToStartP99Ms,
        ),
        figure(
          'queue.batched.jobs',
          `Queue throughput, 2,000 no-op jobs, concurrency 8 (baseline: ${batched})`,
          'jobs/s',
          queue.ours.jobsPerSecond,
          queue.graphileBatched.jobsPerSecond,
        ),
      );
      if (queue.pgBoss) {
        const cut = queue.pgBoss.jobs < 2000 ? `completed ${queue.pgBoss.jobs} of 2,000 in its 15 s budget` : undefined;
        figures.push(
          figure(
            'queue.pgboss.jobs',
            'Queue throughput, 2,000 no-op jobs, concurrency 8 (baseline: pg-boss 10)',
            'jobs/s',
            queue.ours.jobsPerSecond,
            queue.pgBoss.jobsPerSecond,
            cut,
          ),
        );
      }
    }
    if (prompts) {
      figures.push(
        figure(
          'promptlib.rps',
          'Prompt test runs, concurrency 16 (baseline: the same model call made directly)',
          'runs/s',
          prompts.platform.runsPerSecond,
          prompts.direct.callsPerSecond,
        ),
        {
          ...figure(
            'promptlib.p50',
            'Prompt test p50, one at a time (baseline: direct model call; reference: bare node:http, same model call and insert)',
            'ms',
            prompts.platform.p50Ms,
            prompts.direct.p50Ms,
            `platform overhead at p50: ${prompts.overheadP50Ms} ms (aim: at most 1.2× the bare reference's); the bare reference's: ${prompts.bareOverheadP50Ms} ms`,
          ),
          reference: prompts.bare.p50Ms,
          referenceRatio: ratio(prompts.platform.p50Ms, prompts.bare.p50Ms),
        },
        {
          ...figure('promptlib.p99', 'Prompt test p99, one at a time (baseline: direct model call)', 'ms', prompts.platform.p99Ms, prompts.direct.p99Ms),
          reference: prompts.bare.p99Ms,
          referenceRatio: ratio(prompts.platform.p99Ms, prompts.bare.p99Ms),
        },
      );
    }
    if (engine) {
      figures.push(
        figure(
          'workflows.executions',
          'Workflow executions per second: webhook → Set, answered with the last node, persisted (baseline: plain handler, same insert)',
          'executions/s',
          engine.ours.requestsPerSecond,
          engine.baseline.requestsPerSecond,
        ),
        figure('workflows.p50', 'Webhook-triggered execution p50 latency', 'ms', engine.ours.latencyP50Ms, engine.baseline.latencyP50Ms),
        figure('workflows.p99', 'Webhook-triggered execution p99 latency', 'ms', engine.ours.latencyP99Ms, engine.baseline.latencyP99Ms),
        figure(
          'workflows.n8n',
          'n8n workflow executions per second: Webhook → Set → If → Merge → Code → Respond, imported from n8n, persisted (baseline: plain handler)',
          'executions/s',
          engine.n8n.requestsPerSecond,
          engine.baseline.requestsPerSecond,
        ),
        figure('workflows.n8n.p99', 'n8n workflow execution p99 latency', 'ms', engine.n8n.latencyP99Ms, engine.baseline.latencyP99Ms),
      );
    } else {
      figures.push(notYet('workflows.executions', 'Workflow executions per second', 'executions/s', 'BENCH_ONLY=engine'));
    }
    if (tasks) {
      figures.push(
        figure(
          'agents.tasks',
          `Agent tasks completed per second, end to end, offline model (baseline: the raw queue's no-op jobs)`,
          'tasks/s',
          tasks.endToEnd.tasksPerSecond,
          tasks.baseline.endToEndJobsPerSecond,
          'aim: ≥ 0.75 of the raw queue',
        ),
        figure(
          'agents.p50',
          'Agent task enqueue → start p50, unloaded (baseline: raw queue)',
          'ms',
          tasks.latency.enqueueToStartP50Ms,
          tasks.baseline.enqueueToStartP50Ms,
        ),
        figure(
          'agents.p99',
          'Agent task enqueue → start p99, unloaded (baseline: raw queue)',
          'ms',
          tasks.latency.enqueueToStartP99Ms,
          tasks.baseline.enqueueToStartP99Ms,
          'aim: under 50 ms',
        ),
      );
      if (tasks.cpu) {
        figures.push(
          figure(
            'agents.cpu',
            'Agent task CPU of every process: platform, driver, PostgreSQL (baseline: a raw queue job)',
            'ms',
            tasks.cpu.task.totalMs,
            tasks.cpu.rawJob.totalMs,
          ),
        );
      }
    } else {
      figures.push(notYet('agents.tasks', 'Agent tasks completed per second', 'tasks/s', 'BENCH_ONLY=tasks'));
    }
    if (links) {
      figures.push(
        figure(
          'links.redirects',
          'Short-link redirects `GET /links/{slug}`, visits recorded (baseline: a bare node:http 302 handler)',
          'req/s',
          links.redirect.requestsPerSecond,
          links.baseline.requestsPerSecond,
          'aim: ≥ 0.7',
        ),
        figure(
          'links.redirect.p99',
          'Short-link redirect p99 latency (baseline: bare node:http)',
          'ms',
          links.redirect.latencyP99Ms,
          links.baseline.latencyP99Ms,
        ),
        figure(
          'links.verify',
          'Password verifications per second, argon2id (baseline: a locked-out caller, answered without hashing)',
          'req/s',
          links.verify.requestsPerSecond,
          links.locked.requestsPerSecond,
        ),
      );
    } else {
      figures.push(notYet('links.redirects', 'Short-link redirects per second', 'req/s', 'BENCH_ONLY=links'));
    }
    if (start) {
      figures.push(
        figure(
          'start.first',
          'First start to `/health` 200: new data directory, embedded PostgreSQL created, migrated, seeded (baseline: a bare node:http server spawned alike)',
          'ms',
          start.firstMs,
          start.bareMs,
          'aim: ≤ 12,000 ms',
        ),
        figure(
          'start.second',
          'Second start to `/health` 200, same data directory (baseline: bare node:http)',
          'ms',
          start.secondMs,
          start.bareMs,
          'aim: ≤ 3,000 ms',
        ),
      );
    }

    if (scaleOut) {
      const [all, split] = [scaleOut.topologies.find((t) => t.topology === 'all-in-one'), scaleOut.topologies.find((t) => t.topology === 'split')];
      const pg = (t: TopologyFigures | undefined, what: 'Task' | 'Execution') => t?.[`postgresCpuMsPer${what}`];
      if (all && split) {
        const workers = `a gateway and ${scaleOut.workers} worker processes on one PostgreSQL and Redis`;
        figures.push(
          figure(
            'scaleout.tasks',
            `Agent tasks per second, split: ${workers} (baseline: the all-in-one process)`,
            'tasks/s',
            split.tasksPerSecond,
            all.tasksPerSecond,
          ),
          figure(
            'scaleout.executions',
            `Webhook executions per second (answered on receipt, run by the workers), split (baseline: all-in-one)`,
            'executions/s',
            split.executionsPerSecond,
            all.executionsPerSecond,
          ),
          figure('scaleout.pg.task', 'PostgreSQL CPU per agent task, split (baseline: all-in-one)', 'ms', pg(split, 'Task') ?? null, pg(all, 'Task') ?? null),
          figure(
            'scaleout.pg.execution',
            'PostgreSQL CPU per webhook execution, split (baseline: all-in-one)',
            'ms',
            pg(split, 'Execution') ?? null,
            pg(all, 'Execution') ?? null,
          ),
        );
      }
    }

    if (tracing) {
      const { reads, tasks, exported } = tracing;
      const note = `${exported.requests} exports, ${(exported.bytes / 2 ** 20).toFixed(1)} MiB`;
      figures.push(
        figure(
          'tracing.rest.rps',
          'REST read with tracing on, every span exported (baseline: tracing off, same run)',
          'req/s',
          reads.on.requestsPerSecond,
          reads.off.requestsPerSecond,
          note,
        ),
        figure('tracing.rest.p50', 'REST read p50 with tracing on (baseline: tracing off)', 'ms', reads.on.latencyP50Ms, reads.off.latencyP50Ms),
        figure('tracing.rest.p99', 'REST read p99 with tracing on (baseline: tracing off)', 'ms', reads.on.latencyP99Ms, reads.off.latencyP99Ms),
        figure('tracing.tasks', 'Agent tasks per second with tracing on (baseline: tracing off)', 'tasks/s', tasks.on.tasksPerSecond, tasks.off.tasksPerSecond),
      );
    }

    clearTimeout(watchdog);
    const totalMs = Math.round(performance.now() - t0);
    durationsMs.total = totalMs;
    const run = {
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      durationsMs,
      machine: host,
      commit: gitCommit(),
      settings: {
        connections: CONNECTIONS,
        pipelining: PIPELINING,
        warmupSeconds: WARMUP_S,
        durationSeconds: DURATION_S,
        rounds: ROUNDS,
        keys: KEYS,
        database: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded',
      },
      figures,
      problems,
      raw,
    };
    const slices = Object.entries(measuredLoads)
      .map(([name, f]) => `${name} ${f.sliceRequestsPerSecond.join(' / ')}`)
      .join('; ');
    const taskFigures = raw.tasks as TaskBenchFigures | undefined;
    const queueRounds = queue?.ours.rounds?.map((o, i) => `${o} / ${queue.graphile.rounds?.[i]} / ${queue.graphileBatched.rounds?.[i]}`).join('; ');
    const taskRounds = taskFigures?.rounds.map((r) => `${r.tasksPerSecond} / ${r.jobsPerSecond}`).join('; ');
    const md = markdown({ ...run, totalMs, slices, taskRounds, queueRounds, taskWarmUp: taskFigures?.warmUp, taskCpu: taskFigures?.cpu });
    process.stdout.write(`\n${md}\n`);
    if (FULL_RUN) {
      mkdirSync(RESULTS_DIR, { recursive: true });
      const file = path.join(RESULTS_DIR, `${run.startedAt.replace(/:/g, '-')}.json`);
      writeFileSync(file, JSON.stringify(run, null, 2) + '\n');
      writeFileSync(path.join(RESULTS_DIR, 'latest.md'), md);
      process.stdout.write(`wrote ${path.relative(ROOT, file)} and bench/results/latest.md\n`);
    } else {
      process.stdout.write(`partial run (BENCH_ONLY): no result files written\n${JSON.stringify(raw, null, 2)}\n`);
    }
    if (problems.length) {
      process.stderr.write(`bench: FAILED: ${problems.join('; ')}\n`);
      process.exitCode = 1;
    }
  } finally {
    if (dbServer.embedded) await dbServer.stop();
  }
}

main().catch(async (err) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.stack : String(err)}\n`);
  await stopServer().catch(() => undefined);
  process.exit(1);
});
