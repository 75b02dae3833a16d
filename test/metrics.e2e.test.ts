import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { AGENTS } from '../subgraphs/control-plane/agents';
import { PRICES } from '../subgraphs/control-plane/metrics';
import type { V1 } from './support/answers';
import type { Answer as DocumentedAnswer } from './support/openapi-client';
import type { operations } from './support/openapi-types';
import { startTestPlatform, type Answer, type TestPlatform } from './support/platform';
import { readUntil } from './support/until';

/**
 * Control-plane metrics against a generated history written straight into the
 * tables (as if it had run in March 2026), every expected figure computed here independently:
 * percentiles by linear interpolation, buckets with the empty ones, breakdowns, costs from the
 * price table; the sampler's rows; the health view (also with a part down); the custom query with
 * its validation and limit; the Prometheus text.
 */

const M = '/v1/control-plane/metrics';

/** The 2xx answer the API description documents for an operation. */
type Ok<K extends keyof operations> = DocumentedAnswer<operations[K]>;
/** A refusal whose `details` (`D`) the test reads. */
type Refused<D> = V1<never> & { error: { details: D } };
/** A custom query's answer: one row per group, its value and its groupBy fields (`G`). */
interface QueryAnswer<G = object> {
  results: ({ value: number } & G)[];
  timeRange: { start: string; end: string };
}
/** The health view, with the figures these tests read (the description leaves each part's fields optional). */
interface Health {
  status: string;
  services: {
    database: { status: string; connections: number; queryLatencyP95: number };
    queue: { depth: number };
    workflows: { engineStatus: string };
    agents: { capacityUtilization: number };
    subgraphs: { engine: { status: string } };
  };
  resources: { cpu: { available: number }; memory: { available: number }; storage: { available: number } };
  rateLimits: { tier: string; requestsPerMinute: { limit: number; current: number }; concurrentExecutions: { limit: number } };
}
let p: TestPlatform;
let db: Client;
let key: string;
const [A1, A2] = [AGENTS[0]!.agentId, AGENTS[1]!.agentId];

interface Task {
  agent: string;
  type: string;
  status: 'completed' | 'failed' | 'cancelled';
  at: Date;
  ms: number;
  tokens: number;
  code?: string;
}
const tasks: Task[] = [];
interface Exec {
  status: 'success' | 'error' | 'canceled';
  at: Date;
  ms: number;
  nodes: { name: string; ms: number; ok: boolean }[];
}
const execs: Exec[] = [];
let workflowId: string;

/** percentile_cont: linear interpolation between the closest ranks. */
function percentile(values: number[], q: number): number {
  if (!values.length) return 0;
  const s = [...values].sort((a, b) => a - b);
  const rank = q * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return s[lo]! + (s[hi]! - s[lo]!) * (rank - lo);
}
const r3 = (n: number) => Math.round(n * 1000) / 1000;
const r2 = (n: number) => Math.round(n * 100) / 100;
const pct = (a: number, b: number) => (b ? r2((a / b) * 100) : 0);
const avg = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const day = (d: number, h = 0, m = 0) => new Date(Date.UTC(2026, 2, d, h, m));

/** A deterministic sequence, so the history is the same on every run. */
let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

beforeAll(async () => {
  // The generated history is months old: the engine's retention (14 days by default) would prune
  // it at its first maintenance run, a minute after start, in the middle of a slow run of this file.
  p = await startTestPlatform({ METRICS_SAMPLE_INTERVAL_MS: '200', ENGINE_EXECUTION_MAX_AGE_DAYS: '36500' });
  db = new Client({ connectionString: p.db.url });
  await db.connect();
  key = (await p.createKey({ permissions: ['metrics:read', 'agent:read'], tier: 'starter' })).key;

  // History: days 1 and 3 of March (day 2 has nothing), two agents, three task types.
  for (const d of [1, 3]) {
    for (let i = 0; i < 40; i++) {
      const status = i % 10 === 0 ? 'cancelled' : i % 4 === 0 ? 'failed' : 'completed';
      tasks.push({
        agent: i % 3 === 0 ? A2 : A1,
        type: ['plan', 'build', 'review'][i % 3]!,
        status,
        at: day(d, i % 24, i),
        ms: 200 + Math.round(rand() * 5000),
        tokens: status === 'completed' ? 100 + Math.round(rand() * 900) : 0,
        code: status === 'failed' ? (i % 8 === 0 ? 'TASK_TIMEOUT' : 'agent_execution_failed') : undefined,
      });
    }
  }
  // Tasks are written as history: the run-clock trigger (which stamps ends with the current time) is off for this session.
  await db.query(`SET session_replication_role = replica`);
  for (const t of tasks) {
    const end = new Date(t.at.getTime() + t.ms);
    await db.query(
      `INSERT INTO control_plane.tasks (id, agent_id, task_type, status, priority, mode, timeout_seconds, context, estimated_duration, duration_ms,
                                        created_at, started_at, completed_at, failed_at, cancelled_at, result, error)
       VALUES ($1, $2, $3, $4, 'normal', 'async', 300, '{}', 10, $5, $6, $6, $7, $8, $9, $10, $11)`,
      [
        randomUUID(),
        t.agent,
        t.type,
        t.status,
        t.ms,
        t.at,
        t.status === 'completed' ? end : null,
        t.status === 'failed' ? end : null,
        t.status === 'cancelled' ? end : null,
        t.status === 'completed' ? { output: 'x', tokensUsed: t.tokens } : null,
        t.status === 'failed' ? { code: t.code, message: 'boom' } : null,
      ],
    );
  }

  const wf = await p.rest<Ok<'v1PostEngineWorkflows'>>('POST', '/v1/engine/workflows', {
    body: {
      name: 'Metered',
      nodes: [
        { name: 'Start', type: 'engine.manualTrigger' },
        { name: 'Shape', type: 'engine.set', parameters: { values: { a: 1 } } },
      ],
      connections: { Start: { main: [[{ node: 'Shape', type: 'main', index: 0 }]] } },
    },
  });
  assert.equal(wf.status, 201, JSON.stringify(wf.body));
  workflowId = wf.body.data.workflowId;
  for (let i = 0; i < 30; i++) {
    const status = i % 6 === 0 ? 'error' : i % 11 === 0 ? 'canceled' : 'success';
    const e: Exec = {
      status,
      at: day(i % 2 ? 1 : 3, i % 12, i),
      ms: 50 + Math.round(rand() * 900),
      nodes: [
        { name: 'Start', ms: 1 + Math.round(rand() * 5), ok: true },
        { name: 'Shape', ms: 10 + Math.round(rand() * 50), ok: status !== 'error' },
      ],
    };
    execs.push(e);
    const id = randomUUID();
    const end = new Date(e.at.getTime() + e.ms);
    await db.query(
      `INSERT INTO engine.executions (id, workflow_id, workflow_version, status, mode, started_at, finished_at, failed_at, canceled_at, duration_ms, error)
       VALUES ($1, $2, 1, $3, 'manual', $4, $5, $6, $7, $8, $9)`,
      [
        id,
        workflowId,
        status,
        e.at,
        end,
        status === 'error' ? end : null,
        status === 'canceled' ? end : null,
        e.ms,
        status === 'error' ? { code: 'NODE_EXECUTION_FAILED', message: 'x' } : null,
      ],
    );
    for (const [seq, n] of e.nodes.entries()) {
      await db.query(
        `INSERT INTO engine.execution_nodes (execution_id, node_name, seq, node_type, status, started_at, duration_ms) VALUES ($1, $2, $3, 'engine.set', $4, $5, $6)`,
        [id, n.name, seq, n.ok ? 'success' : 'error', e.at, n.ms],
      );
    }
  }
  await db.query(`SET session_replication_role = DEFAULT`);
});
afterAll(async () => {
  await db?.end();
  await p?.stop();
});

const get = <T = V1<never>>(path: string, k = key) => p.rest<T>('GET', path, { key: k });
const query = <T = V1<never>>(body: unknown, k = key) => p.rest<T>('POST', `${M}/query`, { key: k, body });
function assertError(res: Answer<unknown>, status: number, code: string) {
  const body = res.body as V1<never>;
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.error.code, code, JSON.stringify(body));
}

describe('GET /metrics/agents', () => {
  test('summary with p50/p95/p99 from SQL, daily buckets with the empty day, task types and errors', async () => {
    const res = await get<Ok<'v1GetControlPlaneMetricsAgents'>>(`${M}/agents?startDate=2026-03-01&endDate=2026-03-03&granularity=day`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const m = res.body.data;
    const ms = tasks.map((t) => t.ms);
    const ok = tasks.filter((t) => t.status === 'completed').length;
    const failed = tasks.filter((t) => t.status === 'failed').length;
    assert.deepEqual(m.summary, {
      totalExecutions: tasks.length,
      successfulExecutions: ok,
      failedExecutions: failed,
      successRate: pct(ok, tasks.length),
      averageDuration: r3(avg(ms) / 1000),
      p50Duration: r3(percentile(ms, 0.5) / 1000),
      p95Duration: r3(percentile(ms, 0.95) / 1000),
      p99Duration: r3(percentile(ms, 0.99) / 1000),
      totalProcessingTime: r3(ms.reduce((a, b) => a + b, 0) / 1000),
    });
    assert.deepEqual(m.period, { start: '2026-03-01T00:00:00.000Z', end: '2026-03-04T00:00:00.000Z', granularity: 'day' });
    assert.deepEqual(
      m.timeseries.map((b: { timestamp: unknown; executions: unknown; successful: unknown; failed: unknown }) => [
        b.timestamp,
        b.executions,
        b.successful,
        b.failed,
      ]),
      [1, 2, 3].map((d) => {
        const ts = tasks.filter((t) => t.at.getUTCDate() === d);
        return [day(d).toISOString(), ts.length, ts.filter((t) => t.status === 'completed').length, ts.filter((t) => t.status === 'failed').length];
      }),
    );
    assert.equal(m.timeseries[1].averageDuration, 0, 'the empty day is filled with zeros');
    for (const type of ['plan', 'build', 'review']) {
      const ts = tasks.filter((t) => t.type === type);
      assert.deepEqual(
        m.taskTypeBreakdown.find((x: { taskType: unknown }) => x.taskType === type),
        {
          taskType: type,
          executions: ts.length,
          successRate: pct(ts.filter((t) => t.status === 'completed').length, ts.length),
          averageDuration: r3(avg(ts.map((t) => t.ms)) / 1000),
        },
      );
    }
    const codes = ['TASK_TIMEOUT', 'agent_execution_failed'];
    for (const code of codes) {
      const n = tasks.filter((t) => t.code === code).length;
      assert.deepEqual(
        m.errorBreakdown.find((e: { errorCode: unknown }) => e.errorCode === code),
        { errorCode: code, count: n, percentage: pct(n, failed) },
      );
    }
  });

  test("one agent, hourly buckets: 72 buckets, the agent's figures only", async () => {
    const res = await get<Ok<'v1GetControlPlaneMetricsAgents'>>(
      `${M}/agents?agentId=${A2}&startDate=2026-03-01T00:00:00Z&endDate=2026-03-04T00:00:00Z&granularity=hour`,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const mine = tasks.filter((t) => t.agent === A2);
    assert.equal(res.body.data.agentId, A2);
    assert.equal(res.body.data.timeseries.length, 72);
    assert.equal(res.body.data.summary.totalExecutions, mine.length);
    assert.equal(
      res.body.data.summary.p95Duration,
      r3(
        percentile(
          mine.map((t) => t.ms),
          0.95,
        ) / 1000,
      ),
    );
    assert.equal(
      res.body.data.timeseries.reduce((a: number, b: { executions: number }) => a + b.executions, 0),
      mine.length,
    );
  });

  test('bad periods and unknown agents: 400 naming the field, 404 AGENT_NOT_FOUND', async () => {
    const missing = await get<Refused<{ errors: { field: string }[] }>>(`${M}/agents?endDate=2026-03-03`);
    assertError(missing, 400, 'validation_error');
    assert.deepEqual(
      missing.body.error.details.errors.map((e: { field: unknown }) => e.field),
      ['startDate'],
    );
    assertError(await get(`${M}/agents?startDate=2026-03-05&endDate=2026-03-01`), 400, 'validation_error');
    assertError(await get(`${M}/agents?startDate=yesterday&endDate=2026-03-01`), 400, 'validation_error');
    assertError(await get(`${M}/agents?startDate=2026-03-01&endDate=2026-03-02&granularity=minute`), 400, 'validation_error');
    assertError(await get(`${M}/agents?agentId=nobody&startDate=2026-03-01&endDate=2026-03-02`), 404, 'AGENT_NOT_FOUND');
    const weak = (await p.createKey({ permissions: ['agent:read'] })).key;
    assertError(await get(`${M}/agents?startDate=2026-03-01&endDate=2026-03-02`, weak), 403, 'insufficient_permissions');
  });
});

describe('GET /metrics/workflows', () => {
  test("the engine's executions: summary, buckets, node performance", async () => {
    const res = await get<Ok<'v1GetControlPlaneMetricsWorkflows'>>(`${M}/workflows?workflowId=${workflowId}&startDate=2026-03-01&endDate=2026-03-03`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const w = res.body.data;
    const ok = execs.filter((e) => e.status === 'success').length;
    const failed = execs.filter((e) => e.status === 'error').length;
    assert.deepEqual(
      { ...w.summary },
      {
        totalExecutions: execs.length,
        successfulExecutions: ok,
        failedExecutions: failed,
        successRate: pct(ok, execs.length),
        averageDuration: r3(avg(execs.map((e) => e.ms)) / 1000),
        p50Duration: r3(
          percentile(
            execs.map((e) => e.ms),
            0.5,
          ) / 1000,
        ),
        p95Duration: r3(
          percentile(
            execs.map((e) => e.ms),
            0.95,
          ) / 1000,
        ),
        p99Duration: r3(
          percentile(
            execs.map((e) => e.ms),
            0.99,
          ) / 1000,
        ),
      },
    );
    assert.equal(w.timeseries.length, 3);
    assert.equal(w.timeseries[1].executions, 0);
    const shape = execs.map((e) => e.nodes[1]!);
    assert.deepEqual(
      w.nodePerformance.find((n: { nodeName: unknown }) => n.nodeName === 'Shape'),
      {
        nodeName: 'Shape',
        executions: shape.length,
        averageDuration: r3(avg(shape.map((n) => n.ms)) / 1000),
        failureRate: pct(shape.filter((n) => !n.ok).length, shape.length),
      },
    );
    assertError(await get(`${M}/workflows?workflowId=nope&startDate=2026-03-01&endDate=2026-03-03`), 400, 'validation_error');
    assertError(await get(`${M}/workflows?workflowId=00000000-0000-4000-8000-000000000000&startDate=2026-03-01&endDate=2026-03-03`), 404, 'WORKFLOW_NOT_FOUND');
  });
});

describe('GET /metrics/orchestrations', () => {
  test('summary, stage performance and gate validations with the common failures', async () => {
    const rows = [
      {
        status: 'completed',
        stages: [
          ['RESEARCH', 'completed', 60, true, []],
          ['DESIGN', 'completed', 120, true, []],
        ],
      },
      {
        status: 'completed',
        stages: [
          ['RESEARCH', 'completed', 30, false, ['researchFindings']],
          ['DESIGN', 'completed', 90, true, []],
        ],
      },
      {
        status: 'failed',
        stages: [
          ['RESEARCH', 'failed', 45, false, ['researchFindings', 'riskAssessment']],
          ['DESIGN', 'pending', 0, null, []],
        ],
      },
      {
        status: 'cancelled',
        stages: [
          ['RESEARCH', 'completed', 20, true, []],
          ['DESIGN', 'running', 0, null, []],
        ],
      },
    ] as const;
    const durations: number[] = [];
    for (const [i, o] of rows.entries()) {
      const id = randomUUID();
      const created = day(2, i + 1);
      const total = o.stages.reduce((a, s) => a + s[2], 0);
      const done = o.stages.filter((s) => s[1] === 'completed').length;
      if (o.status === 'completed') durations.push(total);
      await db.query(
        `INSERT INTO control_plane.orchestrations (orchestration_id, name, status, current_stage, stages_total, stages_completed, tasks_total, tasks_completed, principal, created_at, completed_at, failed_at, cancelled_at, error)
         VALUES ($1, $2, $3, 'DESIGN', 2, $4, $5, 0, '{"kind":"service","name":"test"}', $6, $7, $8, $9, $10)`,
        [
          id,
          `o${i}`,
          o.status,
          done,
          3 + i,
          created,
          o.status === 'completed' ? new Date(created.getTime() + total * 1000) : null,
          o.status === 'failed' ? created : null,
          o.status === 'cancelled' ? created : null,
          o.status === 'failed' ? { code: 'forge_gate_failure', message: 'gate' } : null,
        ],
      );
      let at = created.getTime();
      for (const [pos, [stage, status, secs, passed, missing]] of o.stages.entries()) {
        const started = status === 'pending' ? null : new Date(at);
        const ended = new Date(at + secs * 1000);
        at += secs * 1000;
        await db.query(
          `INSERT INTO control_plane.orchestration_stages (orchestration_id, position, stage, status, gate_enabled, tasks_total, tasks_completed, gate_result, started_at, completed_at, failed_at)
           VALUES ($1, $2, $3, $4, true, 1, 0, $5, $6, $7, $8)`,
          [
            id,
            pos,
            stage,
            status,
            passed === null ? null : { passed, missingCriteria: missing, validatedAt: ended.toISOString() },
            started,
            status === 'completed' ? ended : null,
            status === 'failed' ? ended : null,
          ],
        );
      }
    }
    const res = await get<Ok<'v1GetControlPlaneMetricsOrchestrations'>>(`${M}/orchestrations?startDate=2026-03-02&endDate=2026-03-02`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const m = res.body.data;
    assert.deepEqual(m.summary, {
      totalOrchestrations: 4,
      completed: 2,
      failed: 1,
      cancelled: 1,
      successRate: 50,
      averageDuration: avg(durations),
      averageStagesCompleted: r2(avg([2, 2, 0, 1])),
      averageTasksPerOrchestration: r2(avg([3, 4, 5, 6])),
    });
    assert.deepEqual(m.stagePerformance, [
      { stage: 'RESEARCH', completionRate: 75, averageDuration: r3(avg([60, 30, 20])) },
      { stage: 'DESIGN', completionRate: pct(2, 3), averageDuration: r3(avg([120, 90])) },
    ]);
    assert.deepEqual(m.gateValidationMetrics, {
      totalValidations: 6,
      passed: 4,
      failed: 2,
      passRate: pct(4, 6),
      commonFailures: [
        { criteria: 'researchFindings', failures: 2 },
        { criteria: 'riskAssessment', failures: 1 },
      ],
    });
    const research = (await get<Ok<'v1GetControlPlaneMetricsOrchestrations'>>(`${M}/orchestrations?startDate=2026-03-02&endDate=2026-03-02&stage=DESIGN`)).body
      .data;
    assert.deepEqual(
      research.stagePerformance.map((s: { stage: unknown }) => s.stage),
      ['DESIGN'],
    );
    assertError(await get(`${M}/orchestrations?startDate=2026-03-02&endDate=2026-03-02&stage=LAUNCH`), 400, 'validation_error');
  });
});

describe('GET /metrics/costs', () => {
  test("the price table over the period's usage, by service, agent, workflow and day; top agents; forecast", async () => {
    const billed = tasks.filter((t) => t.status !== 'cancelled');
    const tokens = billed.reduce((a, t) => a + t.tokens, 0);
    const agentsCost = billed.length * PRICES.perAgentExecution + (tokens / 1000) * PRICES.per1000Tokens;
    const wfCost = execs.length * PRICES.perWorkflowExecution;
    const money = (n: number) => Math.round(n * 10_000) / 10_000;
    const res = await get<Ok<'v1GetControlPlaneMetricsCosts'>>(`${M}/costs?startDate=2026-03-01&endDate=2026-03-03`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const c = res.body.data;
    const baseFee = (PRICES.baseFeePerMonth.starter * 3) / 30;
    assert.deepEqual(c.summary, {
      totalCost: money(baseFee + agentsCost + wfCost + 4 * PRICES.perOrchestration),
      currency: 'USD',
      tier: 'starter',
      baseFee: money(baseFee),
      usageFee: money(agentsCost + wfCost + 4 * PRICES.perOrchestration),
    });
    assert.deepEqual(
      c.breakdown.find((b: { category: unknown }) => b.category === 'agents'),
      { category: 'agents', cost: money(agentsCost), executions: billed.length, tokens, costPerExecution: money(agentsCost / billed.length) },
    );
    assert.deepEqual(
      c.breakdown.find((b: { category: unknown }) => b.category === 'workflows'),
      { category: 'workflows', cost: money(wfCost), executions: execs.length, costPerExecution: PRICES.perWorkflowExecution },
    );
    assert.deepEqual(
      c.breakdown.find((b: { category: unknown }) => b.category === 'orchestrations'),
      { category: 'orchestrations', cost: money(4 * PRICES.perOrchestration), orchestrations: 4, costPerOrchestration: PRICES.perOrchestration },
    );
    const byAgent = [A1, A2].map((a) => {
      const ts = billed.filter((t) => t.agent === a);
      return {
        agentId: a,
        executions: ts.length,
        cost: money(ts.length * PRICES.perAgentExecution + (ts.reduce((x, t) => x + t.tokens, 0) / 1000) * PRICES.per1000Tokens),
      };
    });
    assert.deepEqual(
      c.topAgents,
      byAgent.sort((x, y) => y.cost - x.cost).map((a) => ({ agentId: a.agentId, cost: a.cost, executions: a.executions })),
    );
    assert.deepEqual(c.forecast, {
      projectedMonthlyTotal: money(PRICES.baseFeePerMonth.starter + ((agentsCost + wfCost + 4 * PRICES.perOrchestration) / 3) * 31),
      basedOnDaysOfData: 3,
      confidenceLevel: 'low',
    });

    const perDay = (await get<Ok<'v1GetControlPlaneMetricsCosts'>>(`${M}/costs?startDate=2026-03-01&endDate=2026-03-03&groupBy=day`)).body.data.breakdown;
    assert.deepEqual(
      perDay.map((b: { category: unknown }) => b.category),
      ['2026-03-01', '2026-03-02', '2026-03-03'],
    );
    assert.equal(perDay[1].orchestrations, 4);
    const perWorkflow = (await get<Ok<'v1GetControlPlaneMetricsCosts'>>(`${M}/costs?startDate=2026-03-01&endDate=2026-03-03&groupBy=workflow`)).body.data
      .breakdown;
    assert.deepEqual(perWorkflow, [{ category: workflowId, cost: money(wfCost), executions: execs.length, costPerExecution: PRICES.perWorkflowExecution }]);
    const perAgent = (await get<Ok<'v1GetControlPlaneMetricsCosts'>>(`${M}/costs?startDate=2026-03-01&endDate=2026-03-03&groupBy=agent`)).body.data.breakdown;
    assert.deepEqual(perAgent.map((b: { category: unknown }) => b.category).sort(), [A1, A2].sort());
    assertError(await get(`${M}/costs?startDate=2026-03-01&endDate=2026-03-03&groupBy=team`), 400, 'validation_error');
  });
});

describe('POST /metrics/query', () => {
  test('every aggregation, filters and groupBy, computed like the test computes them; workflow metrics via the engine', async () => {
    const range = { start: '2026-03-01T00:00:00Z', end: '2026-03-04T00:00:00Z' };
    const res = await query<V1<QueryAnswer<{ agentId: string }>>>({
      metric: 'agent_duration',
      aggregation: 'p95',
      groupBy: ['agentId'],
      filters: { status: 'completed' },
      timeRange: range,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const expected = [A1, A2].sort().map((a) => ({
      agentId: a,
      value:
        percentile(
          tasks.filter((t) => t.agent === a && t.status === 'completed').map((t) => t.ms),
          0.95,
        ) / 1000,
    }));
    assert.deepEqual(
      res.body.data.results.map((r: { agentId: unknown }) => r.agentId),
      expected.map((e) => e.agentId),
    );
    // Four decimals (PostgreSQL's float and this test's may round the fifth differently).
    for (const [i, e] of expected.entries())
      assert.ok(Math.abs(res.body.data.results[i].value - e.value) < 0.00015, `${res.body.data.results[i].value} vs ${e.value}`);
    assert.deepEqual(res.body.data.timeRange, { start: '2026-03-01T00:00:00.000Z', end: '2026-03-04T00:00:00.000Z' });
    const count = await query<V1<QueryAnswer<{ taskType: string; status: string }>>>({
      metric: 'agent_executions',
      aggregation: 'count',
      groupBy: ['taskType', 'status'],
      filters: { agentId: [A1] },
      timeRange: range,
    });
    const mine = tasks.filter((t) => t.agent === A1);
    assert.equal(
      count.body.data.results.reduce((a: number, r: { value: number }) => a + r.value, 0),
      mine.length,
    );
    assert.equal(
      count.body.data.results.find((r: { taskType: unknown; status: unknown }) => r.taskType === 'build' && r.status === 'completed')!.value,
      mine.filter((t) => t.type === 'build' && t.status === 'completed').length,
    );
    const rate = await query<V1<QueryAnswer>>({ metric: 'workflow_success_rate', aggregation: 'avg', timeRange: range });
    assert.equal(rate.status, 200, JSON.stringify(rate.body));
    const finished = execs.filter((e) => e.status !== 'canceled');
    assert.deepEqual(rate.body.data.results, [
      { value: Math.round((finished.filter((e) => e.status === 'success').length / finished.length) * 100 * 10_000) / 10_000 },
    ]);
  });

  test('unknown metric, field or aggregation: 400 with the allowed values; the 6th query in a minute is 429', async () => {
    const range = { start: '2026-03-01', end: '2026-03-02' };
    const k = (await p.createKey({ permissions: ['metrics:read'] })).key;
    const metric = await query<Refused<{ allowedMetrics: string[] }>>({ metric: 'agent_mood', aggregation: 'avg', timeRange: range }, k);
    assertError(metric, 400, 'validation_error');
    assert.ok(metric.body.error.details.allowedMetrics.includes('agent_duration') && metric.body.error.details.allowedMetrics.includes('workflow_duration'));
    const agg = await query({ metric: 'agent_duration', aggregation: 'median', timeRange: range }, k);
    assertError(agg, 400, 'validation_error');
    assert.deepEqual(agg.body.error.details.allowedAggregations, ['avg', 'sum', 'count', 'min', 'max', 'p50', 'p95', 'p99']);
    const field = await query<Refused<{ allowedFields: string[]; errors: { field: string }[] }>>(
      { metric: 'agent_duration', aggregation: 'avg', groupBy: ['colour'], filters: { mood: 'x' }, timeRange: range },
      k,
    );
    assertError(field, 400, 'validation_error');
    assert.ok(field.body.error.details.allowedFields.includes('agentId'));
    assert.deepEqual(field.body.error.details.errors.map((e: { field: unknown }) => e.field).sort(), ['filters.mood', 'groupBy']);
    // Refused before the operation runs (timeRange is required by its type): not counted.
    assertError(await query({ metric: 'agent_duration', aggregation: 'avg' }, k), 400, 'validation_error');
    for (let i = 0; i < 2; i++) assert.equal((await query({ metric: 'agent_duration', aggregation: 'avg', timeRange: range }, k)).status, 200);
    const over = await query({ metric: 'agent_duration', aggregation: 'avg', timeRange: range }, k);
    assertError(over, 429, 'RATE_LIMIT_EXCEEDED');
    assert.ok(Number(over.headers.get('retry-after')) > 0);
  });

  test('each metrics endpoint has its per-minute limit per key (agents 10, health 60, …)', async () => {
    const k = (await p.createKey({ permissions: ['metrics:read'] })).key;
    const agents = `${M}/agents?startDate=2026-03-01&endDate=2026-03-02`;
    for (let i = 0; i < 10; i++) assert.equal((await get(agents, k)).status, 200);
    const over = await get(agents, k);
    assertError(over, 429, 'RATE_LIMIT_EXCEEDED');
    assert.equal(over.body.error.details.limit, 10);
    // Another endpoint keeps its own count.
    assert.equal((await get(`${M}/costs?startDate=2026-03-01&endDate=2026-03-02`, k)).status, 200);
    // The engine's workflow figures count the same way.
    const workflows = `${M}/workflows?startDate=2026-03-01&endDate=2026-03-02`;
    for (let i = 0; i < 10; i++) assert.equal((await get(workflows, k)).status, 200);
    assertError(await get(workflows, k), 429, 'RATE_LIMIT_EXCEEDED');
  });
});

describe('system resources and health', () => {
  test('the sampler records a row per interval; resources serves them by minute with the same figures', async () => {
    for (let i = 0; i < 5; i++) await get('/v1/rate-limits/status');
    const rows: { at: Date; requests_total: number }[] = await readUntil(
      async () => (await db.query(`SELECT * FROM control_plane.resource_samples ORDER BY at`)).rows,
      (rows) => rows.length >= 3 && rows.reduce((a: number, r: { requests_total: number }) => a + r.requests_total, 0) >= 5,
      { timeoutMs: 10_000, everyMs: 100 },
    );
    assert.ok(rows.length >= 3, `${rows.length} samples`);
    const start = new Date(rows[0].at.getTime() - 60_000).toISOString();
    // The window ends with the samples read above: one the sampler writes between the two reads
    // below must fall outside both (it did under load, and the totals differed).
    const end = new Date(rows[rows.length - 1].at.getTime() + 1).toISOString();
    const res = await get<Ok<'v1GetControlPlaneMetricsSystemResources'>>(`${M}/system/resources?startDate=${start}&endDate=${end}&granularity=minute`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const r = res.body.data;
    const now = (await db.query(`SELECT * FROM control_plane.resource_samples WHERE at >= $1 AND at < $2`, [start, end])).rows;
    assert.equal(
      r.summary.totalRequests,
      now.reduce((a, x) => a + x.requests_total, 0),
    );
    // real (float4) columns: the two sides may round the second decimal differently
    assert.ok(Math.abs(r.summary.peakCpuUsage - Math.max(...now.map((x) => x.cpu_percent))) < 0.011);
    assert.ok(r.summary.averageMemoryUsage > 0 && r.summary.averageMemoryUsage <= 100);
    assert.ok(r.timeseries.length >= 2);
    assert.equal(
      r.timeseries.reduce((a: number, b: { requests: { total: number } }) => a + b.requests.total, 0),
      r.summary.totalRequests,
    );
    for (const b of r.timeseries) assert.deepEqual(Object.keys(b).sort(), ['cpu', 'memory', 'network', 'requests', 'storage', 'timestamp']);
    assertError(await get(`${M}/system/resources?startDate=${start}&endDate=${end}&granularity=week`), 400, 'validation_error');
  });

  test("health: every part probed, the host's resources, the caller's limits", async () => {
    const res = await get<V1<Health>>(`${M}/system/health`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const h = res.body.data;
    assert.equal(h.status, 'healthy');
    assert.equal(h.services.database.status, 'healthy');
    assert.ok(h.services.database.connections >= 1);
    assert.equal(typeof h.services.database.queryLatencyP95, 'number');
    assert.equal(typeof h.services.queue.depth, 'number');
    assert.equal(h.services.workflows.engineStatus, 'running');
    assert.equal(typeof h.services.agents.capacityUtilization, 'number');
    assert.equal(h.services.subgraphs.engine.status, 'healthy');
    assert.ok(h.resources.cpu.available >= 1 && h.resources.memory.available > 0 && h.resources.storage.available > 0);
    assert.equal(h.rateLimits.tier, 'starter');
    assert.equal(h.rateLimits.requestsPerMinute.limit, 60);
    assert.ok(h.rateLimits.requestsPerMinute.current >= 1);
    assert.equal(h.rateLimits.concurrentExecutions.limit, 10);
  });

  test('a part that does not answer: 503 naming it', async () => {
    const down = await startTestPlatform({ SUBGRAPH_URLS: 'links=http://127.0.0.1:9/graphql' });
    try {
      const res = await down.rest<V1<never>>('GET', `${M}/system/health`);
      assertError(res, 503, 'service_unavailable');
      assert.deepEqual(res.body.error.details.unhealthy, ['subgraph:links']);
      assert.match(res.body.error.message, /subgraph:links/);
    } finally {
      await down.stop();
    }
  });
});

describe('GET /metrics (Prometheus)', () => {
  test('a metrics:read key gets the text format with tasks, executions, queue and requests', async () => {
    assert.equal((await fetch(`${p.url}/metrics`)).status, 401);
    const weak = (await p.createKey({ permissions: ['agent:read'] })).key;
    assert.equal((await fetch(`${p.url}/metrics`, { headers: { authorization: `Bearer ${weak}` } })).status, 403);
    const res = await fetch(`${p.url}/metrics`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const completed = (await db.query(`SELECT count(*)::int AS n FROM control_plane.tasks WHERE status = 'completed'`)).rows[0].n;
    assert.match(text, new RegExp(`^platform_agent_tasks\\{status="completed"\\} ${completed}$`, 'm'));
    assert.match(text, new RegExp(`^platform_workflow_executions\\{state="total"\\} ${execs.length}$`, 'm'));
    assert.match(text, /^platform_queue_jobs\{state="queued"\} \d+$/m);
    assert.match(text, /^platform_http_responses_total\{outcome="success"\} [1-9]\d*$/m);
    assert.match(text, /^# TYPE platform_process_cpu_seconds_total counter$/m);
  });
});
