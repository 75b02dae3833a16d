import { Arg, Authorized, Ctx, Field, Float, ID, Int, ObjectType, Query, Resolver } from 'type-graphql';
import type { DataSource } from 'typeorm';
import { alsoOn, type Principal } from '../../../kernel/auth/principal';
import type { RateLimiter } from '../../../kernel/rate-limit';
import type { RequestContext } from '../../../kernel/subgraph';
import { errors } from '../../../kernel/errors';
import { workflowNotFound } from '../workflows';
import { ErrorFigures, MetricsPeriod, MetricsQueryInput, MetricsQueryResult, RunBucketType, RunSummaryType } from '../../../kernel/graphql-types';
import { limitMetrics, parsePeriod, percent, runMetricsQuery, runStatistics, seconds, type MetricDef } from '../../../kernel/metrics';
import { UUID } from '../../../kernel/ids';
import { EXECUTIONS, workflowMetricsStore as store } from './metrics.store';

/**
 * The engine's figures for the control plane's metrics: workflow executions over a
 * period, per-node performance, daily usage for the cost view, and the workflow metrics of the
 * custom query. Computed in SQL over the engine's own tables.
 */

const EXECUTION_FIELDS = { workflowId: 't.workflow_id::text', status: 't.status', mode: 't.mode' };

/** The engine's metrics of POST /metrics/query. */
export const ENGINE_METRICS: Record<string, MetricDef> = {
  workflow_duration: {
    description: 'Seconds a finished workflow execution took',
    table: 'engine.executions',
    at: 't.started_at',
    value: `CASE WHEN t.status IN ('success','error','canceled') THEN t.duration_ms / 1000.0 END`,
    fields: EXECUTION_FIELDS,
  },
  workflow_success_rate: {
    description: '100 for a successful execution, 0 for a failed one (avg gives the rate)',
    table: 'engine.executions',
    at: 't.started_at',
    value: `CASE t.status WHEN 'success' THEN 100 WHEN 'error' THEN 0 END`,
    fields: EXECUTION_FIELDS,
  },
  workflow_executions: {
    description: 'One per execution (count or sum)',
    table: 'engine.executions',
    at: 't.started_at',
    value: '1',
    fields: EXECUTION_FIELDS,
  },
  node_duration: {
    description: 'Seconds one node of an execution took',
    table: 'engine.execution_nodes',
    at: 't.started_at',
    value: 't.duration_ms / 1000.0',
    fields: { nodeName: 't.node_name', nodeType: 't.node_type', status: 't.status' },
  },
};

@ObjectType()
export class NodeFigures {
  @Field() nodeName: string;
  @Field(() => Int) executions: number;
  @Field(() => Float) averageDuration: number;
  @Field(() => Float) failureRate: number;
}

@ObjectType({ description: 'GET /v1/control-plane/metrics/workflows' })
export class WorkflowMetrics {
  @Field(() => ID, { nullable: true }) workflowId: string | null;
  @Field(() => MetricsPeriod) period: MetricsPeriod;
  @Field(() => RunSummaryType) summary: RunSummaryType;
  @Field(() => [RunBucketType]) timeseries: RunBucketType[];
  @Field(() => [NodeFigures]) nodePerformance: NodeFigures[];
  @Field(() => [ErrorFigures]) errorBreakdown: ErrorFigures[];
}

@ObjectType({ description: 'The engine as the health view sees it.' })
export class EngineHealth {
  @Field() status: string;
  @Field(() => Int) activeExecutions: number;
  @Field(() => Int) waitingExecutions: number;
  @Field(() => Int, { description: 'Every execution kept.' }) totalExecutions: number;
  @Field(() => Int) failedExecutions: number;
}

@ObjectType({ description: 'Executions of one workflow on one day (the cost view).' })
export class WorkflowUsage {
  @Field(() => ID) workflowId: string;
  @Field() day: string;
  @Field(() => Int) executions: number;
}

export class WorkflowMetricsService {
  constructor(
    private readonly db: DataSource,
    private readonly limiter: RateLimiter,
  ) {}

  async workflows(
    principal: Principal,
    args: { workflowId?: string | null; startDate?: string; endDate?: string; granularity?: string | null },
  ): Promise<WorkflowMetrics> {
    await limitMetrics(this.limiter, principal, 'workflows');
    const period = parsePeriod(args.startDate, args.endDate, args.granularity, ['hour', 'day', 'week', 'month'], 'day');
    if (args.workflowId != null && !UUID.test(args.workflowId)) throw errors.field('workflowId', 'must be a workflow id');
    if (args.workflowId && !(await store.workflowExists(this.db, args.workflowId))) throw workflowNotFound(args.workflowId);
    const where = args.workflowId ? 't.workflow_id = $3' : '';
    const stats = await runStatistics(this.db, EXECUTIONS, period, where, args.workflowId ? [args.workflowId] : []);
    const nodes = await store.nodeFigures(this.db, where, stats.args);
    return {
      workflowId: args.workflowId ?? null,
      period: { start: period.start, end: period.end, granularity: period.granularity },
      summary: stats.summary,
      timeseries: stats.timeseries,
      nodePerformance: nodes.map((n) => ({
        nodeName: n.name,
        executions: n.runs,
        averageDuration: seconds(n.avg),
        failureRate: percent(n.failed, n.runs),
      })),
      errorBreakdown: stats.errorBreakdown,
    };
  }

  async health(principal: Principal): Promise<EngineHealth> {
    await limitMetrics(this.limiter, principal, 'health');
    const r = await store.health(this.db);
    return { status: 'running', activeExecutions: r.running, waitingExecutions: r.waiting, totalExecutions: r.total, failedExecutions: r.failed };
  }

  async customQuery(principal: Principal, input: MetricsQueryInput): Promise<MetricsQueryResult> {
    await limitMetrics(this.limiter, principal, 'query');
    return runMetricsQuery(this.db, input, ENGINE_METRICS);
  }

  /** Executions per workflow and UTC day whose start falls in [start, end). */
  async usage(principal: Principal, start: Date, end: Date): Promise<WorkflowUsage[]> {
    await limitMetrics(this.limiter, principal, 'costs');
    return (await store.usage(this.db, start, end)).map((r) => ({ workflowId: r.id, day: r.day, executions: r.n }));
  }
}
