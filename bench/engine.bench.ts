import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Client } from 'pg';
import type { Kernel } from '../kernel/platform';
import type { V1 } from '../test/support/answers';
import { callJson, startLocalPlatform } from '../test/support/platform';
import { spawnServer, stopOnSignals } from './child';
import { figures, LOAD_PHASE, slice, type LoadFigures, type Slice } from './load';
import { benchMain, createScratchDatabase } from './scratch-db';

export type { LoadFigures };

/**
 * Workflow executions per second, each persisted before its webhook answer goes out: `ours`
 * (Webhook -> Set), `n8n` (an n8n export run natively: Set, If, Merge, Code, Respond) and a plain
 * Fastify `baseline` inserting the same rows, so the engine's cost is measured against the least
 * the work needs. The platform runs in a child process (`--serve`), autocannon in this one; every
 * 2xx answer is then checked against the database, so speed never comes from skipped writes.
 * Knobs: BENCH_DURATION, BENCH_WARMUP, BENCH_ROUNDS, BENCH_CPU_PROF (as bench/run.ts); BENCH_ENGINE_ONLY=ours|baseline.
 */

const CONNECTIONS = 32;
const { durationS: DURATION_S, warmupS: WARMUP_S, rounds: ROUNDS } = LOAD_PHASE;
const WEBHOOK_PATH = '/webhook/bench/orders';
const N8N_PATH = '/webhook/bench/n8n-orders';
const BASELINE_PATH = '/bench/baseline/orders';
const BODY = JSON.stringify({ id: 'o-42', total: 42.5, customer: { email: 'ann@example.com' } });
const ANSWER = JSON.stringify({ orderId: 'o-42', total: 42.5, status: 'accepted' });

/** The expected answer, whatever the order of its keys. */
function isAnswer(text: string): boolean {
  try {
    const v = JSON.parse(text);
    return Object.keys(v).length === 3 && v.orderId === 'o-42' && v.total === 42.5 && v.status === 'accepted';
  } catch {
    return false;
  }
}

/** The n8n workflow's answer: the Set fields, the If's lane and the Code node's status. */
function isN8nAnswer(text: string): boolean {
  try {
    const v = JSON.parse(text);
    return (
      Object.keys(v).length === 5 &&
      v.orderId === 'o-42' &&
      v.total === 42.5 &&
      v.email === 'ann@example.com' &&
      v.lane === 'standard' &&
      v.status === 'accepted'
    );
  } catch {
    return false;
  }
}

const n8nLink = (node: string, index = 0) => ({ node, type: 'main', index });

/** The n8n export of the second workflow, as n8n 1.x writes it. */
export const N8N_BENCH_WORKFLOW = {
  name: 'Bench n8n orders',
  nodes: [
    {
      name: 'Webhook',
      type: 'n8n-nodes-base.webhook',
      typeVersion: 2,
      position: [0, 0],
      parameters: { httpMethod: 'POST', path: 'bench/n8n-orders', responseMode: 'responseNode', options: {} },
    },
    {
      name: 'Order',
      type: 'n8n-nodes-base.set',
      typeVersion: 3.4,
      position: [200, 0],
      parameters: {
        assignments: {
          assignments: [
            { id: 'a1', name: 'orderId', value: '={{ $json.body.id }}', type: 'string' },
            { id: 'a2', name: 'total', value: '={{ $json.body.total }}', type: 'number' },
            { id: 'a3', name: 'email', value: '={{ $json.body.customer.email }}', type: 'string' },
          ],
        },
        options: {},
      },
    },
    {
      name: 'Big order?',
      type: 'n8n-nodes-base.if',
      typeVersion: 2.2,
      position: [400, 0],
      parameters: {
        conditions: {
          options: { caseSensitive: true, leftValue: '', typeValidation: 'strict', version: 2 },
          conditions: [{ id: 'c1', leftValue: '={{ $json.total }}', rightValue: 100, operator: { type: 'number', operation: 'gt' } }],
          combinator: 'and',
        },
        options: {},
      },
    },
    { name: 'Merge', type: 'n8n-nodes-base.merge', typeVersion: 3, position: [600, 0], parameters: {} },
    {
      name: 'Accept',
      type: 'n8n-nodes-base.code',
      typeVersion: 2,
      position: [800, 0],
      parameters: {
        jsCode: "return $input.all().map((item) => ({ json: { ...item.json, lane: item.json.total > 100 ? 'priority' : 'standard', status: 'accepted' } }));",
      },
    },
    { name: 'Respond', type: 'n8n-nodes-base.respondToWebhook', typeVersion: 1.1, position: [1000, 0], parameters: { options: {} } },
  ],
  connections: {
    Webhook: { main: [[n8nLink('Order')]] },
    Order: { main: [[n8nLink('Big order?')]] },
    'Big order?': { main: [[n8nLink('Merge', 0)], [n8nLink('Merge', 1)]] },
    Merge: { main: [[n8nLink('Accept')]] },
    Accept: { main: [[n8nLink('Respond')]] },
  },
  settings: { executionOrder: 'v1' },
};

export interface EngineBenchFigures {
  ours: LoadFigures;
  /** The n8n workflow (Webhook -> Set -> If -> Merge -> Code -> Respond). */
  n8n: LoadFigures;
  baseline: LoadFigures;
  /**
   * Successful executions stored at the end, against every 2xx answer given (every target, warm-up
   * and checks included; the baseline stores the same rows): equal when every answer was persisted.
   */
  persisted: { executions: number; answers: number };
}

// ---------------------------------------------------------------------------------------------
// The child: the platform with the workflow, its trigger and the baseline route

interface ServerInfo {
  url: string;
  workflowId: string;
  webhookId: string;
  n8nWorkflowId: string;
}

/** The rows one execution of the workflow leaves, in one statement: what the baseline does by hand. */
const BASELINE_INSERT = `
  WITH e AS (
    INSERT INTO engine.executions (id, workflow_id, workflow_version, status, mode, input, start_node, nodes_total, nodes_completed,
                                   webhook_id, started_at, result, finished_at, duration_ms)
    VALUES ($1, $2, 1, 'success', 'webhook', $3, 'Hook', 2, 2, $4, $5, $6, now(), greatest(0, round(extract(epoch FROM (now() - $5)) * 1000))::int)
    RETURNING id
  ), n AS (
    INSERT INTO engine.execution_nodes (execution_id, node_name, seq, node_type, status, started_at, duration_ms, tries, reused, output)
    SELECT e.id, x.node_name, x.seq, x.node_type, 'success', $5, 0, 1, false, x.output
    FROM e, jsonb_to_recordset($7::jsonb) AS x(node_name text, seq int, node_type text, output jsonb)
  ), l AS (
    INSERT INTO engine.execution_logs (execution_id, level, message)
    SELECT e.id, 'info', m FROM e, unnest(ARRAY['Execution started (webhook)', 'Execution succeeded (2 nodes run)']) AS m
  )
  INSERT INTO engine.webhook_logs (webhook_id, method, source_ip, status, status_code, response_time_ms, execution_id)
  SELECT $4, 'POST', $8, 'success', 200, 0, e.id FROM e`;

function baselineRoutes(info: { workflowId?: string; webhookId?: string }) {
  return (app: FastifyInstance, kernel: Kernel) => {
    app.post(BASELINE_PATH, async (req, reply) => {
      const body = req.body as { id?: unknown; total?: unknown };
      const startedAt = new Date();
      const item = { headers: req.headers, params: {}, query: req.query ?? {}, body, method: 'POST', path: '/bench/orders', webhookUrl: WEBHOOK_PATH };
      const answer = { orderId: body?.id, total: body?.total, status: 'accepted' };
      const nodes = [
        { node_name: 'Hook', seq: 0, node_type: 'engine.webhook', output: [[{ json: item }]] },
        { node_name: 'Set', seq: 1, node_type: 'engine.set', output: [[{ json: answer }]] },
      ];
      await kernel.db.query(BASELINE_INSERT, [
        randomUUID(),
        info.workflowId,
        JSON.stringify([{ json: item }]),
        info.webhookId,
        startedAt,
        JSON.stringify({ lastNode: 'Set', items: [answer], nodesExecuted: 2 }),
        JSON.stringify(nodes),
        req.ip,
      ]);
      return reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(answer));
    });
  };
}

async function serve(): Promise<void> {
  let local: Awaited<ReturnType<typeof startLocalPlatform>> | undefined;
  const stop = stopOnSignals('bench engine server', async () => local?.stop());
  try {
    const info: { workflowId?: string; webhookId?: string } = {};
    local = await startLocalPlatform({ LOG_LEVEL: 'error' }, { label: 'bench-engine', extraRoutes: baselineRoutes(info) });
    const { url } = local.platform;
    const admin = local.adminKey;
    // The workflows and webhooks made here, in the ids the bench reads.
    const call = async (p: string, body: unknown) => (await callJson<V1<{ workflowId: string; webhookId: string }>>(url, 'POST', p, admin, body)).data;
    const wf = await call('/v1/engine/workflows', {
      name: 'Bench orders',
      active: true,
      nodes: [
        { name: 'Hook', type: 'engine.webhook' },
        {
          name: 'Set',
          type: 'engine.set',
          parameters: { values: { orderId: '{{ $json.body.id }}', total: '{{ $json.body.total }}', status: 'accepted' }, keepOnlySet: true },
        },
      ],
      connections: { Hook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
    });
    const hook = await call('/v1/engine/webhooks', { workflowId: wf.workflowId, path: '/bench/orders', method: 'POST', responseMode: 'lastNode' });
    info.workflowId = wf.workflowId;
    info.webhookId = hook.webhookId;
    const n8n = await call('/v1/engine/workflows/import', { workflow: N8N_BENCH_WORKFLOW });
    await call('/v1/engine/webhooks', { workflowId: n8n.workflowId, path: '/bench/n8n-orders', method: 'POST', responseMode: 'lastNode' });
    await call(`/v1/engine/workflows/${n8n.workflowId}/activate`, {});
    process.stdout.write(JSON.stringify({ url, workflowId: wf.workflowId, webhookId: hook.webhookId, n8nWorkflowId: n8n.workflowId }) + '\n');
  } catch (err) {
    process.stderr.write(`bench engine server: ${err instanceof Error ? err.stack : String(err)}\n`);
    await stop(1);
  }
}

// ---------------------------------------------------------------------------------------------
// The driver

const target = (url: string, p: string) => ({
  url: url + p,
  method: 'POST' as const,
  headers: { 'content-type': 'application/json' },
  body: BODY,
  verifyBody: p === N8N_PATH ? isN8nAnswer : isAnswer,
  connections: CONNECTIONS,
});

/** Runs the engine bench on a scratch database of `serverUrl` (dropped afterwards). */
export async function benchEngine(serverUrl: string): Promise<EngineBenchFigures> {
  const db = await createScratchDatabase(serverUrl, 'engine');
  try {
    const server = await spawnServer<ServerInfo>('engine bench server', __filename, ['--serve'], { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'error' });
    const { info } = server;
    let answers = 0;
    const count = (s: Slice) => {
      answers += s.latencies.length;
      return s;
    };
    try {
      const check = await fetch(info.url + WEBHOOK_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
      const text = await check.text();
      if (check.status !== 200 || !isAnswer(text)) throw new Error(`the webhook answered ${check.status}: ${text}`);
      const base = await fetch(info.url + BASELINE_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
      if (base.status !== 200 || !isAnswer(await base.text())) throw new Error(`the baseline answered ${base.status}`);
      const n8n = await fetch(info.url + N8N_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
      const n8nText = await n8n.text();
      if (n8n.status !== 200 || !isN8nAnswer(n8nText)) throw new Error(`the n8n workflow answered ${n8n.status}: ${n8nText}`);
      answers = 3;
      const targets = { ours: WEBHOOK_PATH, n8n: N8N_PATH, baseline: BASELINE_PATH } as const;
      // BENCH_ENGINE_ONLY=ours (or baseline) loads one target only (for profiling the server).
      const only = process.env.BENCH_ENGINE_ONLY;
      const names = (Object.keys(targets) as (keyof typeof targets)[]).filter((n) => !only || n === only);
      for (const name of names) {
        count(await slice(target(info.url, targets[name]), WARMUP_S));
      }
      const measured: Record<keyof typeof targets, Slice[]> = { ours: [], n8n: [], baseline: [] };
      for (let r = 0; r < ROUNDS; r++) {
        for (let i = 0; i < names.length; i++) {
          const name = names[(i + r) % names.length]!;
          measured[name].push(count(await slice(target(info.url, targets[name]), DURATION_S / ROUNDS)));
        }
      }
      const client = new Client({ connectionString: db.url });
      await client.connect();
      let executions = 0;
      try {
        executions = (
          await client.query(
            `SELECT count(*)::int AS n FROM engine.executions e
             WHERE e.status = 'success'
               AND CASE WHEN e.workflow_id = $2 THEN e.result->'items'->0->>'status' = 'accepted' AND (SELECT count(*) FROM engine.execution_nodes n WHERE n.execution_id = e.id) = 6
                        ELSE e.result->'items'->0 = $1::jsonb AND (SELECT count(*) FROM engine.execution_nodes n WHERE n.execution_id = e.id) = 2 END
               AND EXISTS (SELECT 1 FROM engine.webhook_logs w WHERE w.execution_id = e.id AND w.status = 'success')`,
            [ANSWER, info.n8nWorkflowId],
          )
        ).rows[0].n;
      } finally {
        await client.end();
      }
      return { ours: figures(measured.ours), n8n: figures(measured.n8n), baseline: figures(measured.baseline), persisted: { executions, answers } };
    } finally {
      await server.stop();
    }
  } finally {
    await db.drop();
  }
}

if (require.main === module) benchMain(benchEngine, () => void serve());
