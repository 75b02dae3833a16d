import type { DataSource } from 'typeorm';
import type { Principal, Tier } from '../../../kernel/auth/principal';
import { AppError, errors } from '../../../kernel/errors';
import type { MetricsQueryInput, MetricsQueryResult } from '../../../kernel/graphql-types';
import { checkMetricsQuery, limitMetrics, parsePeriod, percent, round, seconds } from '../../../kernel/metrics';
import type { Operations } from '../../../kernel/operations';
import type { RateLimiter } from '../../../kernel/rate-limit';
import { AGENTS } from '../agents';
import type { AgentMetrics, CostLine, CostMetrics, OrchestrationMetrics, SystemResources } from './metrics.types';
import { CONTROL_PLANE_METRICS, metricsStore } from './metrics.store';
import { PRICES } from './pricing';

/**
 * The control plane's metrics, from its own rows: agent tasks, orchestrations
 * with their stages and gates, and the resource samples. Workflow figures are the engine's
 * (workflowMetrics, workflowUsage, engineMetricsQuery), asked through its public operations.
 */

export const STAGE_ORDER = ['RESEARCH', 'DESIGN', 'IMPLEMENT', 'VERIFY', 'DEPLOY', 'MONITOR'];

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
    const { stats, types } = await metricsStore.agentFigures(this.db, period, args.agentId ?? null);
    return {
      agentId: args.agentId ?? null,
      period: { start: period.start, end: period.end, granularity: period.granularity },
      summary: stats.summary,
      timeseries: stats.timeseries,
      taskTypeBreakdown: types.map((r) => ({ taskType: r.type, executions: r.n, successRate: percent(r.ok, r.n), averageDuration: seconds(r.avg) })),
      errorBreakdown: stats.errorBreakdown,
    };
  }

  async orchestrations(principal: Principal, args: { startDate?: string; endDate?: string; stage?: string | null }): Promise<OrchestrationMetrics> {
    await limitMetrics(this.limiter, principal, 'orchestrations');
    const period = parsePeriod(args.startDate, args.endDate, 'day', ['day'], 'day');
    if (args.stage != null && !STAGE_ORDER.includes(args.stage)) throw errors.field('stage', `must be one of ${STAGE_ORDER.join(', ')}`);
    const { summary: s, stages, gates: g, failures } = await metricsStore.orchestrationFigures(this.db, period, args.stage ?? null);
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
        .sort((a, b) => STAGE_ORDER.indexOf(a.stage) - STAGE_ORDER.indexOf(b.stage))
        .map((r) => ({ stage: r.stage, completionRate: percent(r.completed, r.started), averageDuration: round(r.duration, 3) })),
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
    const { buckets: rows, summary: s } = await metricsStore.resources(this.db, period);
    return {
      period: { start: period.start, end: period.end, granularity: g },
      timeseries: rows.map((r) => ({
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
    const tasks = await metricsStore.taskUsage(this.db, period);
    const orchestrations = await metricsStore.orchestrationUsage(this.db, period);
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
  async customQuery(principal: Principal, input: MetricsQueryInput): Promise<MetricsQueryResult> {
    await limitMetrics(this.limiter, principal, 'query');
    if (Object.hasOwn(CONTROL_PLANE_METRICS, input.metric)) return metricsStore.custom(this.db, input);
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
