import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import pg, { Client } from 'pg';
import type { Platform, V1 } from '../test/support/answers';
import { callJson, startLocalPlatform } from '../test/support/platform';
import { percentile } from './load';
import { createScratchDatabase } from './scratch-db';

/**
 * Growth (`BENCH_ONLY=scale`, not in the default run: it writes a million rows twice). Agent tasks
 * and workflow executions are generated straight into a scratch database in steps (SCALE_SIZES,
 * default 10,000, 100,000, 1,000,000 of each); after each step the list endpoints (filters, sorts,
 * a deep offset), a single get and GET /metrics/agents are timed, SCALE_REQUESTS sequential
 * requests each (p50/p99, aim p99 < 100 ms); at the largest size every SELECT those requests ran
 * is EXPLAINed with its own parameters, naming any sequential scan of the big tables.
 */

const SIZES = (process.env.SCALE_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const REQUESTS = Number(process.env.SCALE_REQUESTS ?? 40);
const AGENTS = ['docs-author', 'factory-orchestrator', 'workflow-architect', 'forge-gatekeeper'];

export interface ScaleFigures {
  sizes: number[];
  /** endpoint -> size -> {p50Ms, p99Ms} */
  endpoints: Record<string, Record<string, { p50Ms: number; p99Ms: number }>>;
  /** At the largest size: each statement the endpoints ran, its plan's node types, and whether it scans a big table sequentially. */
  plans: { endpoint: string; sql: string; nodes: string[]; seqScan: boolean }[];
  generationSeconds: Record<string, number>;
}

export async function benchScale(serverUrl: string): Promise<ScaleFigures> {
  const db = await createScratchDatabase(serverUrl, 'scale');
  const local = await startLocalPlatform(
    {
      DATABASE_URL: db.url,
      LOG_LEVEL: 'error',
      // The generated history spans a month and 50,000 executions per workflow: keep it all.
      ENGINE_EXECUTION_MAX_AGE_DAYS: '36500',
      ENGINE_EXECUTION_MAX_COUNT: '100000000',
    },
    { label: 'platform-scale' },
  );
  const { platform, adminKey } = local;
  const sql = new Client({ connectionString: db.url });
  await sql.connect();
  try {
    const call = <T>(method: string, p: string, key: string, body?: unknown) => callJson<T>(platform.url, method, p, key, body);
    // Keys in rotation: the metrics endpoints allow 10 a minute per key.
    const keys: string[] = [];
    for (let i = 0; i < 60; i++)
      keys.push(
        (await call<Platform<{ api_key: string }>>('POST', '/control-plane/api/v1/auth/api-keys', adminKey, { name: `scale ${i}`, tier: 'enterprise' })).data
          .api_key,
      );
    let turn = 0;
    const key = () => keys[turn++ % keys.length]!;
    const workflows: string[] = [];
    for (let i = 0; i < 20; i++) {
      const wf = await call<V1<{ workflowId: string; id?: string }>>('POST', '/v1/engine/workflows', adminKey, {
        name: `scale ${i}`,
        nodes: [{ name: 'Start', type: 'engine.manualTrigger' }],
        connections: {},
      });
      workflows.push(wf.data.workflowId ?? wf.data.id);
    }

    const generationSeconds: Record<string, number> = {};
    const endpoints: ScaleFigures['endpoints'] = {};
    let have = 0;
    let sampleTask = '';
    let sampleExecution = '';
    for (const size of SIZES) {
      const add = size - have;
      const t0 = performance.now();
      // History: the run-clock triggers (which stamp ends with the current time) are off for this session.
      await sql.query(`SET session_replication_role = replica`);
      await sql.query(
        `INSERT INTO control_plane.tasks (id, agent_id, task_type, status, priority, mode, timeout_seconds, context, estimated_duration, duration_ms,
                                          created_at, started_at, completed_at, failed_at, cancelled_at, result, error, created_by_key)
         SELECT gen_random_uuid(), ($3::text[])[1 + (i % 4)], 'scale', s, 'normal', 'async', 300, '{}', 10, 100 + (i::bigint * 7919) % 60000,
                at, at, CASE WHEN s = 'completed' THEN at + interval '1 minute' END, CASE WHEN s = 'failed' THEN at + interval '1 minute' END,
                CASE WHEN s = 'cancelled' THEN at + interval '1 minute' END,
                CASE WHEN s = 'completed' THEN '{"output": "x", "tokensUsed": 100}'::jsonb END,
                CASE WHEN s = 'failed' THEN '{"code": "agent_execution_failed", "message": "x"}'::jsonb END, NULL
           FROM (SELECT i, now() - make_interval(secs => i * 2.5) AS at,
                        CASE WHEN i % 10 = 0 THEN 'failed' WHEN i % 17 = 0 THEN 'cancelled' ELSE 'completed' END AS s
                   FROM generate_series($1::int, $2::int) AS i) g`,
        [have + 1, size, AGENTS],
      );
      await sql.query(
        `INSERT INTO engine.executions (id, workflow_id, workflow_version, status, mode, started_at, finished_at, failed_at, duration_ms, error)
         SELECT gen_random_uuid(), ($3::uuid[])[1 + (i % 20)], 1, s, 'manual', at, at + interval '1 second', CASE WHEN s = 'error' THEN at + interval '1 second' END,
                (i::bigint * 7919) % 5000, CASE WHEN s = 'error' THEN '{"code": "NODE_EXECUTION_FAILED", "message": "x"}'::jsonb END
           FROM (SELECT i, now() - make_interval(secs => i * 2.5) AS at, CASE WHEN i % 9 = 0 THEN 'error' ELSE 'success' END AS s
                   FROM generate_series($1::int, $2::int) AS i) g`,
        [have + 1, size, workflows],
      );
      await sql.query(`SET session_replication_role = DEFAULT`);
      // What autovacuum does after a million inserts (its insert threshold): statistics and the
      // visibility map, without which no index-only scan skips a deep offset cheaply.
      await sql.query(`VACUUM (ANALYZE) control_plane.tasks`);
      await sql.query(`VACUUM (ANALYZE) engine.executions`);
      generationSeconds[String(size)] = Math.round((performance.now() - t0) / 100) / 10;
      have = size;
      sampleTask = (await sql.query(`SELECT id FROM control_plane.tasks ORDER BY created_at LIMIT 1 OFFSET $1`, [Math.floor(size / 2)])).rows[0].id;
      sampleExecution = (await sql.query(`SELECT id FROM engine.executions ORDER BY started_at LIMIT 1 OFFSET $1`, [Math.floor(size / 2)])).rows[0].id;
      const month = new Date(Date.now() - 30 * 86_400_000).toISOString();
      const targets = scaleTargets(size, sampleTask, sampleExecution, workflows[3]!, month);
      for (const [name, p] of Object.entries(targets)) {
        for (let i = 0; i < 3; i++) await call('GET', p, key());
        const times: number[] = [];
        for (let i = 0; i < (name.startsWith('metrics') ? Math.min(REQUESTS, 20) : REQUESTS); i++) {
          const s = performance.now();
          await call('GET', p, key());
          times.push(performance.now() - s);
        }
        (endpoints[name] ??= {})[String(size)] = { p50Ms: round(percentile(times, 50)), p99Ms: round(percentile(times, 99)) };
      }
    }

    // The plans at the largest size: every SELECT of each endpoint, EXPLAINed with its own parameters.
    const plans: ScaleFigures['plans'] = [];
    const recorded: { text: string; values: unknown[] }[] = [];
    const original = pg.Client.prototype.query;
    // Client#query is overloaded; the recorder takes its arguments as given and hands them on unchanged.
    const recorder = function (this: pg.Client, q: string | { text?: unknown; values?: unknown[] } | undefined, values?: unknown, ...rest: unknown[]) {
      const text = typeof q === 'string' ? q : q?.text;
      const params = Array.isArray(values) ? values : typeof q === 'string' ? undefined : q?.values;
      // Reads only: the workers' background tally folds (DELETE … RETURNING) are no endpoint's.
      if (typeof text === 'string' && /^\s*(SELECT|WITH)/i.test(text) && !/\bDELETE\b/.test(text) && /control_plane\.tasks|engine\.executions/.test(text))
        recorded.push({ text, values: params ?? [] });
      return (original as (...args: unknown[]) => unknown).call(this, q, values, ...rest);
    };
    pg.Client.prototype.query = recorder as typeof original;
    try {
      const month = new Date(Date.now() - 30 * 86_400_000).toISOString();
      for (const [name, p] of Object.entries(scaleTargets(have, sampleTask, sampleExecution, workflows[3]!, month))) {
        recorded.length = 0;
        await call('GET', p, key());
        for (const r of [...recorded]) {
          const plan = (await sql.query(`EXPLAIN (FORMAT JSON) ${r.text}`, r.values as unknown[])).rows[0]['QUERY PLAN'][0].Plan;
          const nodes: string[] = [];
          type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] };
          const walk = (n: PlanNode) => {
            nodes.push(n['Relation Name'] ? `${n['Node Type']} on ${n['Relation Name']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}` : n['Node Type']);
            for (const c of n.Plans ?? []) walk(c);
          };
          walk(plan);
          plans.push({
            endpoint: name,
            sql: r.text.replace(/\s+/g, ' ').slice(0, 160),
            nodes,
            seqScan: nodes.some((n) => /^Seq Scan on (tasks|executions)$/.test(n)),
          });
        }
      }
    } finally {
      pg.Client.prototype.query = original;
    }
    return { sizes: SIZES, endpoints, plans, generationSeconds };
  } finally {
    await sql.end().catch(() => undefined);
    await local.stop();
    await db.drop();
  }
}

function scaleTargets(size: number, task: string, execution: string, workflow: string, since: string): Record<string, string> {
  const deep = Math.max(0, size - 100);
  return {
    'tasks: newest first': '/v1/control-plane/agents/tasks?limit=20',
    'tasks: status=failed': '/v1/control-plane/agents/tasks?status=failed&limit=20',
    'tasks: agent, by duration': '/v1/control-plane/agents/tasks?agentId=docs-author&sortBy=duration&sortOrder=desc&limit=20',
    'tasks: deep offset': `/v1/control-plane/agents/tasks?limit=20&offset=${deep}`,
    'task: one': `/v1/control-plane/agents/tasks/${task}`,
    'executions: newest first': '/v1/engine/executions?limit=20',
    'executions: status=error': '/v1/engine/executions?status=error&limit=20',
    'executions: one workflow': `/v1/engine/executions?workflowId=${workflow}&limit=20`,
    'executions: deep offset': `/v1/engine/executions?limit=20&offset=${deep}`,
    'execution: one': `/v1/engine/executions/${execution}`,
    'metrics: agents, 30 days by day': `/v1/control-plane/metrics/agents?startDate=${encodeURIComponent(since)}&endDate=${encodeURIComponent(new Date().toISOString())}`,
  };
}

const round = (n: number) => Math.round(n * 100) / 100;

/** The growth table of bench/results/scale.md. */
export function scaleMarkdown(f: ScaleFigures): string {
  const lines = [
    '# Growth',
    '',
    `Rows generated into a scratch database (each size: that many agent tasks and as many workflow executions); ${REQUESTS} sequential requests per endpoint and size. Aim: p99 < 100 ms.`,
    '',
    `| endpoint | ${f.sizes.map((s) => `${s.toLocaleString('en')} p50 / p99 (ms)`).join(' | ')} |`,
    `| --- | ${f.sizes.map(() => '---').join(' | ')} |`,
  ];
  for (const [name, bySize] of Object.entries(f.endpoints)) {
    lines.push(
      `| ${name} | ${f.sizes
        .map((s) => {
          const x = bySize[String(s)];
          return x ? `${x.p50Ms} / ${x.p99Ms}${x.p99Ms >= 100 ? ' **over**' : ''}` : '—';
        })
        .join(' | ')} |`,
    );
  }
  lines.push(
    '',
    `Generation time (s): ${Object.entries(f.generationSeconds)
      .map(([s, t]) => `${Number(s).toLocaleString('en')}: ${t}`)
      .join(', ')}.`,
    '',
    '## Plans at the largest size',
    '',
  );
  for (const p of f.plans) lines.push(`- ${p.endpoint}${p.seqScan ? ' — **sequential scan**' : ''}: ${p.nodes.join(' → ')} (\`${p.sql}…\`)`);
  return lines.join('\n') + '\n';
}
