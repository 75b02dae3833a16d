import { omitNulls } from '../output';
import { defineRoute, strParam } from '../route';

/** The control plane's metrics, `{base_url}/v1/control-plane/metrics/…` (spec 1, Metrics). */

const PERIOD = `period { start end granularity }`;
const SUMMARY = `summary { totalExecutions successfulExecutions failedExecutions successRate averageDuration p50Duration p95Duration p99Duration totalProcessingTime }`;
const BUCKETS = `timeseries { timestamp executions successful failed averageDuration totalDuration }`;
const ERRORS = `errorBreakdown { errorCode count percentage }`;
const PART = `status responseTime uptime activeExecutions queuedTasks capacityUtilization engineStatus connections queryLatencyP95 memoryUsage operations depth message`;
/** Fields as selected, passed on (the answers below reshape only a part of them). */
type Selected = Record<string, unknown>;
/** A health part without its null fields (each part has its own). */
const part = (p: Selected) => omitNulls(p);

export const metricsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/control-plane/metrics/agents',
    operation: /* GraphQL */ `query AgentMetrics($startDate: String!, $endDate: String!, $agentId: String, $granularity: String) {
      agentMetrics(startDate: $startDate, endDate: $endDate, agentId: $agentId, granularity: $granularity) {
        agentId ${PERIOD} ${SUMMARY} ${BUCKETS} taskTypeBreakdown { taskType executions successRate averageDuration } ${ERRORS}
      } }`,
    variables: ({ query }) => ({
      startDate: strParam(query.startDate),
      endDate: strParam(query.endDate),
      agentId: strParam(query.agentId),
      granularity: strParam(query.granularity),
    }),
  }),
  defineRoute<{ workflowMetrics: Selected & { summary: Selected } }>({
    method: 'GET',
    path: '/control-plane/metrics/workflows',
    operation: /* GraphQL */ `query WorkflowMetrics($startDate: String!, $endDate: String!, $workflowId: ID, $granularity: String) {
      workflowMetrics(startDate: $startDate, endDate: $endDate, workflowId: $workflowId, granularity: $granularity) {
        workflowId ${PERIOD} ${SUMMARY} ${BUCKETS} nodePerformance { nodeName executions averageDuration failureRate } ${ERRORS}
      } }`,
    variables: ({ query }) => ({
      startDate: strParam(query.startDate),
      endDate: strParam(query.endDate),
      workflowId: strParam(query.workflowId),
      granularity: strParam(query.granularity),
    }),
    // Spec: the workflow summary is the agents' without totalProcessingTime.
    pick: ({
      workflowMetrics: {
        summary: { totalProcessingTime: _t, ...summary },
        ...w
      },
    }) => ({ ...w, summary }),
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/metrics/orchestrations',
    operation: /* GraphQL */ `
      query OrchestrationMetrics($startDate: String!, $endDate: String!, $stage: String) {
        orchestrationMetrics(startDate: $startDate, endDate: $endDate, stage: $stage) {
          period {
            start
            end
          }
          summary {
            totalOrchestrations
            completed
            failed
            cancelled
            successRate
            averageDuration
            averageStagesCompleted
            averageTasksPerOrchestration
          }
          stagePerformance {
            stage
            completionRate
            averageDuration
          }
          gateValidationMetrics {
            totalValidations
            passed
            failed
            passRate
            commonFailures {
              criteria
              failures
            }
          }
        }
      }
    `,
    variables: ({ query }) => ({ startDate: strParam(query.startDate), endDate: strParam(query.endDate), stage: strParam(query.stage) }),
  }),
  defineRoute<{ systemHealth: Selected & { services: Record<string, Selected> } }>({
    method: 'GET',
    path: '/control-plane/metrics/system/health',
    operation: /* GraphQL */ `query SystemHealth { systemHealth {
        status timestamp
        services { gateway { ${PART} } controlPlane { ${PART} } agents { ${PART} } workflows { ${PART} } database { ${PART} } queue { ${PART} } cache { ${PART} } subgraphs }
        resources { cpu { usage available } memory { usage available } storage { usage available } }
        rateLimits { tier requestsPerMinute { limit current utilizationPercentage } concurrentExecutions { limit current utilizationPercentage } }
      } }`,
    pick: ({ systemHealth: h }) => ({
      ...h,
      services: Object.fromEntries(Object.entries(h.services).map(([k, v]) => [k, k === 'subgraphs' ? v : part(v)])),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/metrics/system/resources',
    operation: /* GraphQL */ `query SystemResources($startDate: String!, $endDate: String!, $granularity: String) {
      systemResources(startDate: $startDate, endDate: $endDate, granularity: $granularity) {
        ${PERIOD}
        timeseries { timestamp cpu { usage peak } memory { usage peak } storage { usage growth } network { inbound outbound } requests { total successful failed } }
        summary { averageCpuUsage peakCpuUsage averageMemoryUsage peakMemoryUsage totalRequests totalDataTransferred }
      } }`,
    variables: ({ query }) => ({ startDate: strParam(query.startDate), endDate: strParam(query.endDate), granularity: strParam(query.granularity) }),
  }),
  defineRoute<{ costMetrics: Selected & { breakdown: Selected[] } }>({
    method: 'GET',
    path: '/control-plane/metrics/costs',
    operation: /* GraphQL */ `
      query CostMetrics($startDate: String!, $endDate: String!, $groupBy: String) {
        costMetrics(startDate: $startDate, endDate: $endDate, groupBy: $groupBy) {
          period {
            start
            end
          }
          summary {
            totalCost
            currency
            tier
            baseFee
            usageFee
          }
          groupBy
          breakdown {
            category
            cost
            executions
            orchestrations
            tokens
            costPerExecution
            costPerOrchestration
          }
          topAgents {
            agentId
            cost
            executions
          }
          forecast {
            projectedMonthlyTotal
            basedOnDaysOfData
            confidenceLevel
          }
        }
      }
    `,
    variables: ({ query }) => ({ startDate: strParam(query.startDate), endDate: strParam(query.endDate), groupBy: strParam(query.groupBy) }),
    pick: ({ costMetrics: c }) => ({ ...c, breakdown: c.breakdown.map(part) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/metrics/query',
    operation: /* GraphQL */ `
      query MetricsQuery($input: MetricsQueryInput!) {
        metricsQuery(input: $input) {
          metric
          aggregation
          results
          timeRange {
            start
            end
          }
        }
      }
    `,
    variables: ({ body }) => ({ input: body ?? {} }),
  }),
];
