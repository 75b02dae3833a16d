import { Arg, Authorized, Ctx, ID, Query, Resolver } from 'type-graphql';
import { alsoOn } from '../../../kernel/auth/principal';
import { MetricsQueryInput, MetricsQueryResult } from '../../../kernel/graphql-types';
import { parsePeriod } from '../../../kernel/metrics';
import type { RequestContext } from '../../../kernel/subgraph';
import { ENGINE_METRICS, EngineHealth, WorkflowMetrics, type WorkflowMetricsService, WorkflowUsage } from '../executions';

/** The engine's figures for the control plane's metrics, as GraphQL queries. */
@Resolver()
export class WorkflowMetricsResolver {
  constructor(private readonly metrics: WorkflowMetricsService) {}

  @Authorized('metrics:read', alsoOn('control-plane'))
  @Query(() => WorkflowMetrics, { description: 'Workflow executions over a period: summary, buckets, nodes, errors.' })
  workflowMetrics(
    @Arg('startDate') startDate: string,
    @Arg('endDate') endDate: string,
    @Arg('workflowId', () => ID, { nullable: true }) workflowId: string | null,
    @Arg('granularity', () => String, { nullable: true }) granularity: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<WorkflowMetrics> {
    return this.metrics.workflows(ctx.principal, { workflowId, startDate, endDate, granularity });
  }

  @Authorized('metrics:read', alsoOn('control-plane'))
  @Query(() => [WorkflowUsage], { description: 'Executions per workflow and day (the control plane prices them).' })
  workflowUsage(@Arg('startDate') startDate: string, @Arg('endDate') endDate: string, @Ctx() ctx: RequestContext): Promise<WorkflowUsage[]> {
    const p = parsePeriod(startDate, endDate, 'day', ['day'], 'day');
    return this.metrics.usage(ctx.principal, p.start, p.end);
  }

  @Authorized('metrics:read', alsoOn('control-plane'))
  @Query(() => EngineHealth, { description: "Executions running and waiting (the control plane's health view)." })
  engineHealth(@Ctx() ctx: RequestContext): Promise<EngineHealth> {
    return this.metrics.health(ctx.principal);
  }

  @Authorized('metrics:read', alsoOn('control-plane'))
  @Query(() => [String], { description: 'The names of the workflow metrics of POST /metrics/query.' })
  engineMetricsCatalog(): string[] {
    return Object.keys(ENGINE_METRICS);
  }

  @Authorized('metrics:read', alsoOn('control-plane'))
  @Query(() => MetricsQueryResult, { description: 'The workflow metrics of POST /metrics/query (the control plane forwards them).' })
  engineMetricsQuery(
    @Arg('input', () => MetricsQueryInput, { validate: false }) input: MetricsQueryInput,
    @Ctx() ctx: RequestContext,
  ): Promise<MetricsQueryResult> {
    return this.metrics.customQuery(ctx.principal, input);
  }
}
