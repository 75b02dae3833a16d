import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, Int, ObjectType } from 'type-graphql';
import { ErrorFigures, MetricsPeriod, RunBucketType, RunSummaryType } from '../../../kernel/graphql-types';

// Durations are seconds; rates and utilisations are percentages (0–100); money is USD.

@ObjectType()
export class TaskTypeFigures {
  @Field() taskType: string;
  @Field(() => Int) executions: number;
  @Field(() => Float) successRate: number;
  @Field(() => Float) averageDuration: number;
}

@ObjectType({ description: 'GET /metrics/agents' })
export class AgentMetrics {
  @Field(() => String, { nullable: true }) agentId: string | null;
  @Field(() => MetricsPeriod) period: MetricsPeriod;
  @Field(() => RunSummaryType) summary: RunSummaryType;
  @Field(() => [RunBucketType]) timeseries: RunBucketType[];
  @Field(() => [TaskTypeFigures]) taskTypeBreakdown: TaskTypeFigures[];
  @Field(() => [ErrorFigures]) errorBreakdown: ErrorFigures[];
}

@ObjectType()
export class OrchestrationSummary {
  @Field(() => Int) totalOrchestrations: number;
  @Field(() => Int) completed: number;
  @Field(() => Int) failed: number;
  @Field(() => Int) cancelled: number;
  @Field(() => Float) successRate: number;
  @Field(() => Float) averageDuration: number;
  @Field(() => Float) averageStagesCompleted: number;
  @Field(() => Float) averageTasksPerOrchestration: number;
}

@ObjectType()
export class StageFigures {
  @Field() stage: string;
  @Field(() => Float) completionRate: number;
  @Field(() => Float) averageDuration: number;
}

@ObjectType()
export class GateFailure {
  @Field() criteria: string;
  @Field(() => Int) failures: number;
}

@ObjectType()
export class GateValidationMetrics {
  @Field(() => Int) totalValidations: number;
  @Field(() => Int) passed: number;
  @Field(() => Int) failed: number;
  @Field(() => Float) passRate: number;
  @Field(() => [GateFailure]) commonFailures: GateFailure[];
}

@ObjectType({ description: 'GET /metrics/orchestrations' })
export class OrchestrationMetrics {
  @Field(() => MetricsPeriod) period: MetricsPeriod;
  @Field(() => OrchestrationSummary) summary: OrchestrationSummary;
  @Field(() => [StageFigures]) stagePerformance: StageFigures[];
  @Field(() => GateValidationMetrics) gateValidationMetrics: GateValidationMetrics;
}

// ---- system health -----------------------------------------------------------------------------

@ObjectType()
export class PartHealth {
  @Field({ description: 'healthy, degraded or unhealthy' }) status: string;
  @Field(() => Float, { nullable: true, description: 'ms' }) responseTime?: number | null;
  @Field(() => Float, { nullable: true, description: 'seconds' }) uptime?: number | null;
  @Field(() => Int, { nullable: true }) activeExecutions?: number | null;
  @Field(() => Int, { nullable: true }) queuedTasks?: number | null;
  @Field(() => Float, { nullable: true }) capacityUtilization?: number | null;
  @Field(() => String, { nullable: true }) engineStatus?: string | null;
  @Field(() => Int, { nullable: true }) connections?: number | null;
  @Field(() => Float, { nullable: true, description: 'ms' }) queryLatencyP95?: number | null;
  @Field(() => Float, { nullable: true, description: 'bytes' }) memoryUsage?: number | null;
  @Field(() => Float, { nullable: true }) operations?: number | null;
  @Field(() => Int, { nullable: true, description: 'Jobs waiting to run.' }) depth?: number | null;
  @Field(() => String, { nullable: true }) message?: string | null;
}

@ObjectType()
export class ServiceHealth {
  @Field(() => PartHealth) gateway: PartHealth;
  @Field(() => PartHealth) controlPlane: PartHealth;
  @Field(() => PartHealth) agents: PartHealth;
  @Field(() => PartHealth) workflows: PartHealth;
  @Field(() => PartHealth) database: PartHealth;
  @Field(() => PartHealth) queue: PartHealth;
  @Field(() => PartHealth) cache: PartHealth;
  @Field(() => GraphQLJSONObject, { description: 'Each subgraph: {status, url?}.' }) subgraphs: Record<string, unknown>;
}

@ObjectType()
export class ResourceFigure {
  @Field(() => Float, { description: 'percent' }) usage: number;
  @Field(() => Float, { description: 'cores for cpu, bytes for memory and storage' }) available: number;
}

@ObjectType()
export class HostResources {
  @Field(() => ResourceFigure) cpu: ResourceFigure;
  @Field(() => ResourceFigure) memory: ResourceFigure;
  @Field(() => ResourceFigure) storage: ResourceFigure;
}

@ObjectType()
export class LimitUse {
  @Field(() => Int) limit: number;
  @Field(() => Int) current: number;
  @Field(() => Float) utilizationPercentage: number;
}

@ObjectType()
export class RateLimitUse {
  @Field(() => String, { nullable: true }) tier: string | null;
  @Field(() => LimitUse, { nullable: true }) requestsPerMinute: LimitUse | null;
  @Field(() => LimitUse, { nullable: true }) concurrentExecutions: LimitUse | null;
}

@ObjectType({ description: 'GET /metrics/system/health' })
export class SystemHealth {
  @Field() status: string;
  @Field() timestamp: Date;
  @Field(() => ServiceHealth) services: ServiceHealth;
  @Field(() => HostResources) resources: HostResources;
  @Field(() => RateLimitUse) rateLimits: RateLimitUse;
}

// ---- system resources --------------------------------------------------------------------------

@ObjectType()
export class UsagePeak {
  @Field(() => Float) usage: number;
  @Field(() => Float) peak: number;
}

@ObjectType()
export class StorageUse {
  @Field(() => Float, { description: 'percent' }) usage: number;
  @Field(() => Float, { description: 'bytes since the previous bucket' }) growth: number;
}

@ObjectType()
export class NetworkUse {
  @Field(() => Float, { description: 'bytes' }) inbound: number;
  @Field(() => Float, { description: 'bytes' }) outbound: number;
}

@ObjectType()
export class RequestCounts {
  @Field(() => Int) total: number;
  @Field(() => Int) successful: number;
  @Field(() => Int) failed: number;
}

@ObjectType()
export class ResourceBucket {
  @Field() timestamp: Date;
  @Field(() => UsagePeak) cpu: UsagePeak;
  @Field(() => UsagePeak) memory: UsagePeak;
  @Field(() => StorageUse) storage: StorageUse;
  @Field(() => NetworkUse) network: NetworkUse;
  @Field(() => RequestCounts) requests: RequestCounts;
}

@ObjectType()
export class ResourceSummary {
  @Field(() => Float) averageCpuUsage: number;
  @Field(() => Float) peakCpuUsage: number;
  @Field(() => Float) averageMemoryUsage: number;
  @Field(() => Float) peakMemoryUsage: number;
  @Field(() => Int) totalRequests: number;
  @Field(() => Float, { description: 'bytes in and out' }) totalDataTransferred: number;
}

@ObjectType({ description: 'GET /metrics/system/resources' })
export class SystemResources {
  @Field(() => MetricsPeriod) period: MetricsPeriod;
  @Field(() => [ResourceBucket]) timeseries: ResourceBucket[];
  @Field(() => ResourceSummary) summary: ResourceSummary;
}

// ---- costs -------------------------------------------------------------------------------------

@ObjectType()
export class CostSummary {
  @Field(() => Float) totalCost: number;
  @Field() currency: string;
  @Field() tier: string;
  @Field(() => Float) baseFee: number;
  @Field(() => Float) usageFee: number;
}

@ObjectType()
export class CostLine {
  @Field() category: string;
  @Field(() => Float) cost: number;
  @Field(() => Int, { nullable: true }) executions?: number | null;
  @Field(() => Int, { nullable: true }) orchestrations?: number | null;
  @Field(() => Int, { nullable: true }) tokens?: number | null;
  @Field(() => Float, { nullable: true }) costPerExecution?: number | null;
  @Field(() => Float, { nullable: true }) costPerOrchestration?: number | null;
}

@ObjectType()
export class AgentCost {
  @Field() agentId: string;
  @Field(() => Float) cost: number;
  @Field(() => Int) executions: number;
}

@ObjectType()
export class CostForecast {
  @Field(() => Float) projectedMonthlyTotal: number;
  @Field(() => Int) basedOnDaysOfData: number;
  @Field({ description: 'low (under 7 days of data), medium (under 14), high' }) confidenceLevel: string;
}

@ObjectType({ description: 'GET /metrics/costs' })
export class CostMetrics {
  @Field(() => MetricsPeriod) period: MetricsPeriod;
  @Field(() => CostSummary) summary: CostSummary;
  @Field() groupBy: string;
  @Field(() => [CostLine]) breakdown: CostLine[];
  @Field(() => [AgentCost]) topAgents: AgentCost[];
  @Field(() => CostForecast) forecast: CostForecast;
}
