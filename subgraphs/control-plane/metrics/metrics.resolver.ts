import { Arg, Authorized, Ctx, Query, Resolver } from 'type-graphql';
import { MetricsQueryInput, MetricsQueryResult } from '../../../kernel/graphql-types';
import type { RequestContext } from '../../../kernel/subgraph';
import type { HealthService } from './health.service';
import type { MetricsService } from './metrics.service';
import { AgentMetrics, CostMetrics, OrchestrationMetrics, SystemHealth, SystemResources } from './metrics.types';

/** GET /v1/control-plane/metrics/… (the workflow figures are the engine's workflowMetrics). */
@Resolver()
export class MetricsResolver {
  constructor(
    private readonly metrics: MetricsService,
    private readonly healthService: HealthService,
  ) {}

  @Authorized('metrics:read')
  @Query(() => AgentMetrics, { description: 'Agent tasks over a period: summary with p50/p95/p99, buckets, task types, errors.' })
  agentMetrics(
    @Arg('startDate') startDate: string,
    @Arg('endDate') endDate: string,
    @Arg('agentId', () => String, { nullable: true }) agentId: string | null,
    @Arg('granularity', () => String, { nullable: true }) granularity: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<AgentMetrics> {
    return this.metrics.agents(ctx.principal, { agentId, startDate, endDate, granularity });
  }

  @Authorized('metrics:read')
  @Query(() => OrchestrationMetrics, { description: 'Orchestrations over a period: summary, stage performance, gate validations.' })
  orchestrationMetrics(
    @Arg('startDate') startDate: string,
    @Arg('endDate') endDate: string,
    @Arg('stage', () => String, { nullable: true }) stage: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<OrchestrationMetrics> {
    return this.metrics.orchestrations(ctx.principal, { startDate, endDate, stage });
  }

  @Authorized('metrics:read')
  @Query(() => SystemHealth, { description: 'Each part probed now; an unhealthy part is an error (503) that names it.' })
  systemHealth(@Ctx() ctx: RequestContext): Promise<SystemHealth> {
    return this.healthService.health(ctx);
  }

  @Authorized('metrics:read')
  @Query(() => SystemResources, { description: 'The resource samples over a period, by minute, hour or day.' })
  systemResources(
    @Arg('startDate') startDate: string,
    @Arg('endDate') endDate: string,
    @Arg('granularity', () => String, { nullable: true }) granularity: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<SystemResources> {
    return this.metrics.resources(ctx.principal, { startDate, endDate, granularity });
  }

  @Authorized('metrics:read')
  @Query(() => CostMetrics, { description: "The price table applied to the period's usage, grouped, with the month-end forecast." })
  costMetrics(
    @Arg('startDate') startDate: string,
    @Arg('endDate') endDate: string,
    @Arg('groupBy', () => String, { nullable: true }) groupBy: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<CostMetrics> {
    return this.metrics.costs(ctx.principal, { startDate, endDate, groupBy });
  }

  @Authorized('metrics:read')
  @Query(() => MetricsQueryResult, { description: 'A custom aggregation over a metric (5 a minute per key).' })
  metricsQuery(@Arg('input', () => MetricsQueryInput, { validate: false }) input: MetricsQueryInput, @Ctx() ctx: RequestContext): Promise<MetricsQueryResult> {
    return this.metrics.customQuery(ctx.principal, input);
  }
}
