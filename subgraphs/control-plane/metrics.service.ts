import type { DataSource } from 'typeorm';
import type { Principal, Tier } from '../../kernel/auth/principal';
import { AppError, errors } from '../../kernel/errors';
import type { MetricsQueryInput, MetricsQueryResult } from '../../kernel/graphql-types';
import {
  checkMetricsQuery,
  limitMetrics,
  parsePeriod,
  percent,
  round,
  runMetricsQuery,
  runStatistics,
  seconds,
  type MetricDef,
  type RunSource,
} from '../../kernel/metrics';
import type { Operations } from '../../kernel/operations';
import type { RateLimiter } from '../../kernel/rate-limit';
import { AGENTS } from './agent.catalog';
import type { AgentMetrics, CostLine, CostMetrics, OrchestrationMetrics, SystemResources } from './metrics.types';
import { PRICES } from './pricing';

/**
 * The control plane's metrics (spec 1, Metrics), from its own rows: agent tasks, orchestrations
 * with their stages and gates, and the resource samples. Workflow figures are the engine's
 * (workflowMetrics, workflowUsage, engineMetricsQuery), asked through its public operations.
 */

export const STAGE_ORDER = ['RESEARCH', 'DESIGN', 'IMPLEMENT', 'VERIFY', 'DEPLOY', 'MONITOR'];

const TASKS: RunSource = {
  table: 'control_plane.tasks',
  at: 't.created_at',
  finished: `t.status IN ('completed','failed','cancelled')`,
  ok: `t.status = 'completed'`,
  failed: `t.status = 'failed'`,
  durationMs: 't.duration_ms',
  errorCode: `t.error->>'code'`,
};

const TASK_FIELDS = {
  agentId: 't.agent_id',
  taskType: 't.task_type',
  status: 't.status',
  priority: 't.priority',
  stage: 't.stage',
  'forge.stage': `t.forge->>'stage'`,
};

/** The control plane's metrics of POST /metrics/query (the engine adds the workflow ones). */
export const CONTROL_PLANE_METRICS: Record<string, MetricDef> = {
  agent_duration: {
    description: 'Seconds a finished agent task took',
    table: 'control_plane.tasks',
    at: 't.created_at',
    value: `CASE WHEN t.status IN ('completed','failed','cancelled') THEN t.duration_ms / 1000.0 END`,
    fields: TASK_FIELDS,
  },
  agent_success_rate: {
    description: '100 for a completed task, 0 for a failed one (avg gives the rate)',
    table: 'control_plane.tasks',
    at: 't.created_at',
    value: `CASE t.status WHEN 'completed' THEN 100 WHEN 'failed' THEN 0 END`,
    fields: TASK_FIELDS,
  },
  agent_tokens: {
    description: 'Model tokens of a completed task',
    table: 'control_plane.tasks',
    at: 't.created_at',
    value: `(t.result->>'tokensUsed')::numeric`,
    fields: TASK_FIELDS,
  },
  agent_executions: { description: 'One per task (count or sum)', table: 'control_plane.tasks', at: 't.created_at', value: '1', fields: TASK_FIELDS },
  orchestration_duration: {
    description: 'Seconds from creation to completion of a completed orchestration',
    table: 'control_plane.orchestrations',
    at: 't.created_at',
    value: `CASE WHEN t.status = 'completed' THEN extract(epoch FROM t.completed_at - t.created_at) END`,
    fields: { status: 't.status', name: 't.name', currentStage: 't.current_stage' },
  },
  orchestration_stage_time: {
    description: 'Seconds a finished stage ran',
    table: 'control_plane.orchestration_stages',
    at: 't.started_at',
    value: `extract(epoch FROM coalesce(t.completed_at, t.failed_at) - t.started_at)`,
    fields: { stage: 't.stage', status: 't.status' },
  },
  gate_pass_rate: {
    description: '100 for a passed exit gate, 0 for a failed one',
    table: 'control_plane.orchestration_stages',
    at: 't.started_at',
    value: `CASE WHEN t.gate_result IS NULL THEN NULL WHEN (t.gate_result->>'passed')::boolean THEN 100 ELSE 0 END`,
    fields: { stage: 't.stage', status: 't.status' },
  },
};

const ENGINE_QUERY = /* GraphQL */ `
  query EngineMetricsQuery($input: MetricsQueryInput!) {
    engineMetricsQuery(input: $input) {
      metric
      aggregation
      results
      timeRange {
        start
        end
      }
    }
  }
`;

export class MetricsService {
  private engineMetrics?: Promise<string[]>;

  constructor(
    private readonly db: DataSource,
    private readonly operations: Operations,
    private readonly limiter: RateLimiter,
  ) {}

  async agents(
    principal: Principal,
    args: { agentId?: string | null; startDate?: string; endDate?: string; granularity?: string | null },
  ): Promise<AgentMetrics> {
    await limitMetrics(this.limiter, principal, 'agents');
    const period = parsePeriod(args.startDate, args.endDate, args.granularity, ['hour', 'day', 'week', 'month'], 'day');
    if (args.agentId != null && !AGENTS.some((a) => a.agentId === args.agentId))
      throw new AppError('AGENT_NOT_FOUND', `Agent ${args.agentId} not found`, { agentId: args.agentId });
    const stats = await runStatistics(this.db, TASKS, period, args.agentId ? 't.agent_id = $3' : '', args.agentId ? [args.agentId] : []);
    const types = await this.db.query(
      `SELECT t.task_type AS type, count(*)::int AS n, count(*) FILTER (WHERE ${TASKS.ok})::int AS ok, coalesce(avg(t.duration_ms), 0)::float8 AS avg
       ${stats.where} GROUP BY t.task_type ORDER BY 2 DESC, 1`,
      stats.args,
    );
    return {
      agentId: args.agentId ?? null,
      period: { start: period.start, end: period.end, granularity: period.granularity },
      summary: stats.summary,
      timeseries: stats.timeseries,
      taskTypeBreakdown: types.map((r: any) => ({ taskType: r.type, executions: r.n, successRate: percent(r.ok, r.n), averageDuration: seconds(r.avg) })),
      errorBreakdown: stats.errorBreakdown,
    };
  }

  async orchestrations(principal: Principal, args: { startDate?: string; endDate?: string; stage?: string | null }): Promise<OrchestrationMetrics> {
    await limitMetrics(this.limiter, principal, 'orchestrations');
    const period = parsePeriod(args.startDate, args.endDate, 'day', ['day'], 'day');
    if (args.stage != null && !STAGE_ORDER.includes(args.stage)) throw errors.field('stage', `must be one of ${STAGE_ORDER.join(', ')}`);
    const params: unknown[] = [period.start, period.end];
    const withStage = args.stage
      ? ` AND EXISTS (SELECT 1 FROM control_plane.orchestration_stages x WHERE x.orchestration_id = o.orchestration_id AND x.stage = $${params.push(args.stage)})`
      : '';
    const inRange = `o.created_at >= $1 AND o.created_at < $2${withStage}`;
    const [s] = await this.db.query(
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE o.status = 'completed')::int AS completed,
              count(*) FILTER (WHERE o.status = 'failed')::int AS failed, count(*) FILTER (WHERE o.status = 'cancelled')::int AS cancelled,
              coalesce(avg(extract(epoch FROM o.completed_at - o.created_at)) FILTER (WHERE o.status = 'completed'), 0)::float8 AS duration,
              coalesce(avg(o.stages_completed), 0)::float8 AS stages, coalesce(avg(o.tasks_total), 0)::float8 AS tasks
         FROM control_plane.orchestrations o WHERE ${inRange}`,
      params,
    );
    const stageFilter = args.stage ? ` AND s.stage = $${params.length}` : '';
    const stages = await this.db.query(
      `SELECT s.stage, count(*) FILTER (WHERE s.status <> 'pending')::int AS started, count(*) FILTER (WHERE s.status = 'completed')::int AS completed,
              coalesce(avg(extract(epoch FROM s.completed_at - s.started_at)) FILTER (WHERE s.status = 'completed'), 0)::float8 AS duration
         FROM control_plane.orchestration_stages s JOIN control_plane.orchestrations o ON o.orchestration_id = s.orchestration_id
        WHERE ${inRange}${stageFilter} GROUP BY s.stage`,
      params,
    );
    const [g] = await this.db.query(
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE (s.gate_result->>'passed')::boolean)::int AS passed
         FROM control_plane.orchestration_stages s JOIN control_plane.orchestrations o ON o.orchestration_id = s.orchestration_id
        WHERE s.gate_result IS NOT NULL AND ${inRange}${stageFilter}`,
      params,
    );
    const failures = await this.db.query(
      `SELECT c AS criteria, count(*)::int AS failures
         FROM control_plane.orchestration_stages s JOIN control_plane.orchestrations o ON o.orchestration_id = s.orchestration_id,
              jsonb_array_elements_text(coalesce(s.gate_result->'missingCriteria', '[]'::jsonb)) c
        WHERE NOT (s.gate_result->>'passed')::boolean AND ${inRange}${stageFilter}
        GROUP BY c ORDER BY 2 DESC, 1 LIMIT 10`,
      params,
    );
    return {
      period: { start: period.start, end: period.end, granularity: null },
      summary: {
        totalOrchestrations: s.total,
        completed: s.completed,
        failed: s.failed,
        cancelled: s.cancelled,
        successRate: percent(s.completed, s.total),
        averageDuration: round(s.duration, 3),
        averageStagesCompleted: round(s.stages, 2),
        averageTasksPerOrchestration: round(s.tasks, 2),
      },
      stagePerformance: stages
        .sort((a: any, b: any) => STAGE_ORDER.indexOf(a.stage) - STAGE_ORDER.indexOf(b.stage))
        .map((r: any) => ({ stage: r.stage, completionRate: percent(r.completed, r.started), averageDuration: round(r.duration, 3) })),
      gateValidationMetrics: {
        totalValidations: g.total,
        passed: g.passed,
        failed: g.total - g.passed,
        passRate: percent(g.passed, g.total),
        commonFailures: failures,
      },
    };
  }

  async resources(principal: Principal, args: { startDate?: string; endDate?: string; granularity?: string | null }): Promise<SystemResources> {
    await limitMetrics(this.limiter, principal, 'resources');
    const period = parsePeriod(args.startDate, args.endDate, args.granularity, ['minute', 'hour', 'day'], 'hour');
    const g = period.granularity;
    const rows = await this.db.query(
      `WITH b AS (SELECT generate_series(date_trunc('${g}', $1::timestamptz AT TIME ZONE 'UTC'), ($2::timestamptz AT TIME ZONE 'UTC') - interval '1 microsecond', interval '1 ${g}') AS at),
            r AS (SELECT date_trunc('${g}', s.at AT TIME ZONE 'UTC') AS bucket, s.* FROM control_plane.resource_samples s WHERE s.at >= $1 AND s.at < $2)
       SELECT b.at AT TIME ZONE 'UTC' AS timestamp,
              coalesce(avg(r.cpu_percent), 0)::float8 AS cpu, coalesce(max(r.cpu_percent), 0)::float8 AS cpu_peak,
              coalesce(avg(r.memory_percent), 0)::float8 AS mem, coalesce(max(r.memory_percent), 0)::float8 AS mem_peak,
              coalesce(max(r.storage_used)::float8 / nullif(max(r.storage_total), 0) * 100, 0)::float8 AS storage,
              coalesce(max(r.storage_used) - min(r.storage_used), 0)::float8 AS growth,
              coalesce(sum(r.network_in), 0)::float8 AS net_in, coalesce(sum(r.network_out), 0)::float8 AS net_out,
              coalesce(sum(r.requests_total), 0)::int AS req, coalesce(sum(r.requests_successful), 0)::int AS ok, coalesce(sum(r.requests_failed), 0)::int AS failed
         FROM b LEFT JOIN r ON r.bucket = b.at GROUP BY b.at ORDER BY b.at`,
      [period.start, period.end],
    );
    const [s] = await this.db.query(
      `SELECT coalesce(avg(cpu_percent), 0)::float8 AS cpu, coalesce(max(cpu_percent), 0)::float8 AS cpu_peak,
              coalesce(avg(memory_percent), 0)::float8 AS mem, coalesce(max(memory_percent), 0)::float8 AS mem_peak,
              coalesce(sum(requests_total), 0)::int AS req, coalesce(sum(network_in + network_out), 0)::float8 AS data
         FROM control_plane.resource_samples WHERE at >= $1 AND at < $2`,
      [period.start, period.end],
    );
    return {
      period: { start: period.start, end: period.end, granularity: g },
      timeseries: rows.map((r: any) => ({
        timestamp: r.timestamp,
        cpu: { usage: round(r.cpu, 2), peak: round(r.cpu_peak, 2) },
        memory: { usage: round(r.mem, 2), peak: round(r.mem_peak, 2) },
        storage: { usage: round(r.storage, 2), growth: r.growth },
        network: { inbound: r.net_in, outbound: r.net_out },
        requests: { total: r.req, successful: r.ok, failed: r.failed },
      })),
      summary: {
        averageCpuUsage: round(s.cpu, 2),
        peakCpuUsage: round(s.cpu_peak, 2),
        averageMemoryUsage: round(s.mem, 2),
        peakMemoryUsage: round(s.mem_peak, 2),
        totalRequests: s.req,
        totalDataTransferred: s.data,
      },
    };
  }

  /** The price table (pricing.ts) applied to the period's usage; the tier is the caller's. */
  async costs(principal: Principal, args: { startDate?: string; endDate?: string; groupBy?: string | null }): Promise<CostMetrics> {
    await limitMetrics(this.limiter, principal, 'costs');
    const period = parsePeriod(args.startDate, args.endDate, 'day', ['day'], 'day');
    const groupBy = args.groupBy ?? 'service';
    if (!['service', 'agent', 'workflow', 'day'].includes(groupBy)) throw errors.field('groupBy', 'must be one of service, agent, workflow, day');
    const tier: Tier = principal.kind === 'apiKey' ? principal.tier : 'enterprise';
    const range = [period.start, period.end];
    const tasks: { agent: string; day: string; n: number; tokens: number }[] = await this.db.query(
      `SELECT t.agent_id AS agent, to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS n,
              coalesce(sum((t.result->>'tokensUsed')::bigint), 0)::float8 AS tokens
         FROM control_plane.tasks t WHERE t.created_at >= $1 AND t.created_at < $2 AND t.status IN ('completed','failed') GROUP BY 1, 2`,
      range,
    );
    const orchestrations: { day: string; n: number }[] = await this.db.query(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS n FROM control_plane.orchestrations
        WHERE created_at >= $1 AND created_at < $2 GROUP BY 1`,
      range,
    );
    const { workflowUsage: executions } = await this.operations.execute<{ workflowUsage: { workflowId: string; day: string; executions: number }[] }>(
      `query WorkflowUsage($s: String!, $e: String!) { workflowUsage(startDate: $s, endDate: $e) { workflowId day executions } }`,
      { s: period.start.toISOString(), e: period.end.toISOString() },
    );

    const taskCost = (n: number, tokens: number) => n * PRICES.perAgentExecution + (tokens / 1000) * PRICES.per1000Tokens;
    const sum = <T>(xs: T[], f: (x: T) => number) => xs.reduce((a, x) => a + f(x), 0);
    const nTasks = sum(tasks, (t) => t.n);
    const nTokens = sum(tasks, (t) => t.tokens);
    const nExec = sum(executions, (e) => e.executions);
    const nOrch = sum(orchestrations, (o) => o.n);
    const agentsCost = taskCost(nTasks, nTokens);
    const workflowsCost = nExec * PRICES.perWorkflowExecution;
    const orchCost = nOrch * PRICES.perOrchestration;
    const usageFee = agentsCost + workflowsCost + orchCost;
    const days = (period.end.getTime() - period.start.getTime()) / 86_400_000;
    const baseFee = (PRICES.baseFeePerMonth[tier] * days) / 30;

    const byKey = <T>(xs: T[], key: (x: T) => string) => {
      const m = new Map<string, T[]>();
      for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
      return m;
    };
    const perAgent = [...byKey(tasks, (t) => t.agent)].map(([agentId, rows]) => {
      const n = sum(rows, (r) => r.n);
      const tokens = sum(rows, (r) => r.tokens);
      return { agentId, executions: n, tokens, cost: taskCost(n, tokens) };
    });
    let breakdown: CostLine[];
    if (groupBy === 'service') {
      breakdown = [
        { category: 'agents', cost: money(agentsCost), executions: nTasks, tokens: nTokens, costPerExecution: nTasks ? money(agentsCost / nTasks) : 0 },
        { category: 'workflows', cost: money(workflowsCost), executions: nExec, costPerExecution: PRICES.perWorkflowExecution },
        { category: 'orchestrations', cost: money(orchCost), orchestrations: nOrch, costPerOrchestration: PRICES.perOrchestration },
      ];
    } else if (groupBy === 'agent') {
      breakdown = perAgent.map((a) => ({
        category: a.agentId,
        cost: money(a.cost),
        executions: a.executions,
        tokens: a.tokens,
        costPerExecution: money(a.cost / a.executions),
      }));
    } else if (groupBy === 'workflow') {
      breakdown = [...byKey(executions, (e) => e.workflowId)].map(([id, rows]) => {
        const n = sum(rows, (r) => r.executions);
        return { category: id, cost: money(n * PRICES.perWorkflowExecution), executions: n, costPerExecution: PRICES.perWorkflowExecution };
      });
    } else {
      const dayKeys = [...new Set([...tasks.map((t) => t.day), ...executions.map((e) => e.day), ...orchestrations.map((o) => o.day)])].sort();
      breakdown = dayKeys.map((day) => {
        const t = tasks.filter((x) => x.day === day);
        const e = sum(
          executions.filter((x) => x.day === day),
          (x) => x.executions,
        );
        const o = sum(
          orchestrations.filter((x) => x.day === day),
          (x) => x.n,
        );
        const cost =
          taskCost(
            sum(t, (x) => x.n),
            sum(t, (x) => x.tokens),
          ) +
          e * PRICES.perWorkflowExecution +
          o * PRICES.perOrchestration;
        return { category: day, cost: money(cost), executions: sum(t, (x) => x.n) + e, orchestrations: o };
      });
    }
    breakdown.sort((a, b) => (groupBy === 'day' ? a.category.localeCompare(b.category) : b.cost - a.cost || a.category.localeCompare(b.category)));

    // Forecast: the month's base fee plus the mean usage of the days with data, over the month.
    const daysWithData = new Set([...tasks.map((t) => t.day), ...executions.map((e) => e.day), ...orchestrations.map((o) => o.day)]).size;
    const monthEnd = new Date(Date.UTC(period.end.getUTCFullYear(), period.end.getUTCMonth() + 1, 0));
    const daysInMonth = monthEnd.getUTCDate();
    const projected = PRICES.baseFeePerMonth[tier] + (daysWithData ? (usageFee / daysWithData) * daysInMonth : 0);
    return {
      period: { start: period.start, end: period.end, granularity: null },
      summary: { totalCost: money(baseFee + usageFee), currency: PRICES.currency, tier, baseFee: money(baseFee), usageFee: money(usageFee) },
      groupBy,
      breakdown,
      topAgents: perAgent
        .sort((a, b) => b.cost - a.cost || a.agentId.localeCompare(b.agentId))
        .slice(0, 5)
        .map((a) => ({ agentId: a.agentId, cost: money(a.cost), executions: a.executions })),
      forecast: {
        projectedMonthlyTotal: money(projected),
        basedOnDaysOfData: daysWithData,
        confidenceLevel: daysWithData >= 14 ? 'high' : daysWithData >= 7 ? 'medium' : 'low',
      },
    };
  }

  /** POST /metrics/query: the control plane's metrics here, the workflow ones by the engine. */
  async query(principal: Principal, input: MetricsQueryInput): Promise<MetricsQueryResult> {
    await limitMetrics(this.limiter, principal, 'query');
    if (input.metric in CONTROL_PLANE_METRICS) return runMetricsQuery(this.db, input, CONTROL_PLANE_METRICS);
    const engine = await (this.engineMetrics ??= this.operations
      .execute<{ engineMetricsCatalog: string[] }>(`query EngineMetricsCatalog { engineMetricsCatalog }`)
      .then((r) => r.engineMetricsCatalog)
      .catch((err) => {
        this.engineMetrics = undefined;
        throw err;
      }));
    // A metric neither service knows: refused here, naming every metric of both.
    if (!engine.includes(input.metric)) checkMetricsQuery(input, CONTROL_PLANE_METRICS, engine);
    return (await this.operations.execute<{ engineMetricsQuery: MetricsQueryResult }>(ENGINE_QUERY, { input })).engineMetricsQuery;
  }
}

const money = (usd: number) => Math.round(usd * 10_000) / 10_000;
