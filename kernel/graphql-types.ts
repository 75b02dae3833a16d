import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Directive, Field, FieldResolver, Float, InputType, Int, ObjectType } from 'type-graphql';
import { FIRST_STATE } from './subgraph';

/**
 * Value types every subgraph shares. Federation composes a type defined in several subgraphs
 * only when it is identical and @shareable, so they are defined once, here.
 */
@ObjectType({ description: 'Where a page sits in a list.' })
@Directive('@shareable')
export class PageInfo {
  @Field(() => Int) total: number;
  @Field(() => Int) limit: number;
  @Field(() => Int) offset: number;
  @Field() hasMore: boolean;
}

export function pageInfo(total: number, limit: number, offset: number): PageInfo {
  return { total, limit, offset, hasMore: offset + limit < total };
}

/** The `limit` argument of a list subscription (served by the gateway, which checks its range). */
export function FirstStateLimit(): ReturnType<typeof Arg> {
  return Arg('limit', () => Int, {
    defaultValue: FIRST_STATE.limit,
    description: `How many of the list's members are sent first, the first ones as the list orders them (1 to ${FIRST_STATE.max}, default ${FIRST_STATE.limit}).`,
  });
}

/**
 * `deleted` of an entity a list subscription lists: a read is never of a deleted one (false), only
 * the subscription's event announcing its deletion says true (with the entity as last sent).
 */
export function DeletedFlag(): ReturnType<typeof FieldResolver> {
  return FieldResolver(() => Boolean, {
    description: 'False, except in the subscription event announcing its deletion (which repeats the entity as last sent, with a newer version).',
  });
}

// ---- metrics: the control plane's agent figures and the engine's workflow figures ------
// Durations are seconds, rates percentages (0–100).

@ObjectType()
@Directive('@shareable')
export class MetricsPeriod {
  @Field() start: Date;
  @Field() end: Date;
  @Field(() => String, { nullable: true }) granularity: string | null;
}

@ObjectType()
@Directive('@shareable')
export class RunSummaryType {
  @Field(() => Int) totalExecutions: number;
  @Field(() => Int) successfulExecutions: number;
  @Field(() => Int) failedExecutions: number;
  @Field(() => Float) successRate: number;
  @Field(() => Float) averageDuration: number;
  @Field(() => Float) p50Duration: number;
  @Field(() => Float) p95Duration: number;
  @Field(() => Float) p99Duration: number;
  @Field(() => Float, { description: 'The sum of the durations.' }) totalProcessingTime: number;
}

@ObjectType()
@Directive('@shareable')
export class RunBucketType {
  @Field() timestamp: Date;
  @Field(() => Int) executions: number;
  @Field(() => Int) successful: number;
  @Field(() => Int) failed: number;
  @Field(() => Float) averageDuration: number;
  @Field(() => Float) totalDuration: number;
}

@ObjectType()
@Directive('@shareable')
export class ErrorFigures {
  @Field() errorCode: string;
  @Field(() => Int) count: number;
  @Field(() => Float) percentage: number;
}

@InputType()
export class MetricsTimeRange {
  @Field() start: string;
  @Field() end: string;
}

@InputType({ description: 'POST /metrics/query' })
export class MetricsQueryInput {
  @Field() metric: string;
  @Field(() => GraphQLJSONObject, { nullable: true }) filters?: Record<string, unknown> | null;
  @Field() aggregation: string;
  @Field(() => [String], { nullable: true }) groupBy?: string[] | null;
  @Field(() => MetricsTimeRange) timeRange: MetricsTimeRange;
}

@ObjectType()
@Directive('@shareable')
export class MetricsTimeRangeOut {
  @Field() start: Date;
  @Field() end: Date;
}

@ObjectType()
@Directive('@shareable')
export class MetricsQueryResult {
  @Field() metric: string;
  @Field() aggregation: string;
  @Field(() => [GraphQLJSONObject], { description: 'The group-by fields and `value`.' }) results: Record<string, unknown>[];
  @Field(() => MetricsTimeRangeOut) timeRange: MetricsTimeRangeOut;
}
