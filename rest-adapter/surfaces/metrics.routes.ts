import { omitNulls } from '../output';
import { defineRoute, strParam } from '../route';
import {
  AgentMetricsDocument,
  CostMetricsDocument,
  MetricsQueryDocument,
  OrchestrationMetricsDocument,
  SystemHealthDocument,
  SystemResourcesDocument,
  WorkflowMetricsDocument,
} from './generated';

/** The control plane's metrics, `{base_url}/v1/control-plane/metrics/…`. Operations: metrics.graphql. */

/** A health part without its null fields (each part has its own). */
const part = <T extends object>(p: T) => omitNulls(p);

export const metricsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/control-plane/metrics/agents',
    operation: AgentMetricsDocument,
    refusals: [{ code: 'AGENT_NOT_FOUND', when: 'no agent has the id given' }],
    variables: ({ query }) => ({
      startDate: strParam(query.startDate),
      endDate: strParam(query.endDate),
      agentId: strParam(query.agentId),
      granularity: strParam(query.granularity),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/metrics/workflows',
    operation: WorkflowMetricsDocument,
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
    operation: OrchestrationMetricsDocument,
    variables: ({ query }) => ({ startDate: strParam(query.startDate), endDate: strParam(query.endDate), stage: strParam(query.stage) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/metrics/system/health',
    operation: SystemHealthDocument,
    pick: ({ systemHealth: h }) => ({
      ...h,
      services: Object.fromEntries(Object.entries(h.services).map(([k, v]) => [k, k === 'subgraphs' ? v : part(v)])),
    }),
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/metrics/system/resources',
    operation: SystemResourcesDocument,
    variables: ({ query }) => ({ startDate: strParam(query.startDate), endDate: strParam(query.endDate), granularity: strParam(query.granularity) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/control-plane/metrics/costs',
    operation: CostMetricsDocument,
    variables: ({ query }) => ({ startDate: strParam(query.startDate), endDate: strParam(query.endDate), groupBy: strParam(query.groupBy) }),
    pick: ({ costMetrics: c }) => ({ ...c, breakdown: c.breakdown.map(part) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/control-plane/metrics/query',
    operation: MetricsQueryDocument,
    variables: ({ body }) => ({ input: body ?? {} }),
  }),
];
