import type { MetricsQueryInput, MetricsQueryResult } from '../../../kernel/graphql-types';
import { exec, one, rows, type Queryable } from '../../../kernel/db/rows';
import { runMetricsQuery, type MetricDef, type Period, type RunSource } from '../../../kernel/metrics';
import { RunRollup } from '../../../kernel/metrics-rollup';

/**
 * Where the control plane's metrics are read (metrics.service.ts) and its resource samples
 * written (metrics.sampler.ts): the figures over control_plane.tasks, the orchestration tables
 * and control_plane.resource_samples, and the SQL of the metrics POST /metrics/query offers.
 */

const TASKS: RunSource = {
  table: 'control_plane.tasks',
  at: 't.created_at',
  finished: `t.status IN ('completed','failed','cancelled')`,
  ok: `t.status = 'completed'`,
  failed: `t.status = 'failed'`,
  durationMs: 't.duration_ms',
  errorCode: `t.error->>'code'`,
};

/** The finished tasks by agent, task type, hour, outcome and error code, and their durations (migration TaskRunRollup1763769601760). */
export const TASK_ROLLUP = new RunRollup({
  ...TASKS,
  name: 'control_plane.tasks',
  filter: 'agent_id',
  breakdown: 'task_type',
  durationIndex: 'tasks_finished_duration_idx',
});

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

/** What the kernel's statistics and query builder run on (an EntityManager's or DataSource's query). */

export interface TaskTypeRow {
  type: string;
  n: number;
  ok: number;
  /** Mean duration in ms. */
  avg: number;
}

export interface OrchestrationSummaryRow {
  total: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** Mean seconds from creation to completion of the completed ones. */
  duration: number;
  stages: number;
  tasks: number;
}

export interface StagePerformanceRow {
  stage: string;
  started: number;
  completed: number;
  duration: number;
}

export interface GateFailureRow {
  criteria: string;
  failures: number;
}

export interface ResourceBucketRow {
  timestamp: Date;
  cpu: number;
  cpu_peak: number;
  mem: number;
  mem_peak: number;
  storage: number;
  growth: number;
  net_in: number;
  net_out: number;
  req: number;
  ok: number;
  failed: number;
}

export interface ResourceSummaryRow {
  cpu: number;
  cpu_peak: number;
  mem: number;
  mem_peak: number;
  req: number;
  data: number;
}

export interface TaskUsageRow {
  agent: string;
  day: string;
  n: number;
  tokens: number;
}

export interface ResourceSample {
  process: string;
  cpuPercent: number;
  memoryPercent: number;
  memoryUsed: number;
  storageUsed: number;
  storageTotal: number;
  networkIn: number;
  networkOut: number;
  requestsTotal: number;
  requestsSuccessful: number;
  requestsFailed: number;
}

export const metricsStore = {
  /** Run statistics of the period's finished tasks (of one agent, when given), and their split by task type, from the rollup. */
  async agentFigures(q: Queryable, period: Period, agentId: string | null) {
    const stats = await TASK_ROLLUP.statistics(q, period, agentId);
    const types: TaskTypeRow[] = stats.breakdown.map((b) => ({ type: b.value, n: b.n, ok: b.ok, avg: b.avg }));
    return { stats, types };
  },

  /** The period's orchestrations (those with the stage, when given): summary, stages, exit gates and their most missed criteria. */
  async orchestrationFigures(q: Queryable, period: Period, stage: string | null) {
    const params: unknown[] = [period.start, period.end];
    const withStage = stage
      ? ` AND EXISTS (SELECT 1 FROM control_plane.orchestration_stages x WHERE x.orchestration_id = o.orchestration_id AND x.stage = $${params.push(stage)})`
      : '';
    const inRange = `o.created_at >= $1 AND o.created_at < $2${withStage}`;
    const summary = (await one<OrchestrationSummaryRow>(
      q,
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE o.status = 'completed')::int AS completed,
              count(*) FILTER (WHERE o.status = 'failed')::int AS failed, count(*) FILTER (WHERE o.status = 'cancelled')::int AS cancelled,
              coalesce(avg(extract(epoch FROM o.completed_at - o.created_at)) FILTER (WHERE o.status = 'completed'), 0)::float8 AS duration,
              coalesce(avg(o.stages_completed), 0)::float8 AS stages, coalesce(avg(o.tasks_total), 0)::float8 AS tasks
         FROM control_plane.orchestrations o WHERE ${inRange}`,
      params,
    ))!;
    const stageFilter = stage ? ` AND s.stage = $${params.length}` : '';
    const stages = await rows<StagePerformanceRow>(
      q,
      `SELECT s.stage, count(*) FILTER (WHERE s.status <> 'pending')::int AS started, count(*) FILTER (WHERE s.status = 'completed')::int AS completed,
              coalesce(avg(extract(epoch FROM s.completed_at - s.started_at)) FILTER (WHERE s.status = 'completed'), 0)::float8 AS duration
         FROM control_plane.orchestration_stages s JOIN control_plane.orchestrations o ON o.orchestration_id = s.orchestration_id
        WHERE ${inRange}${stageFilter} GROUP BY s.stage`,
      params,
    );
    const gates = (await one<{ total: number; passed: number }>(
      q,
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE (s.gate_result->>'passed')::boolean)::int AS passed
         FROM control_plane.orchestration_stages s JOIN control_plane.orchestrations o ON o.orchestration_id = s.orchestration_id
        WHERE s.gate_result IS NOT NULL AND ${inRange}${stageFilter}`,
      params,
    ))!;
    const failures = await rows<GateFailureRow>(
      q,
      `SELECT c AS criteria, count(*)::int AS failures
         FROM control_plane.orchestration_stages s JOIN control_plane.orchestrations o ON o.orchestration_id = s.orchestration_id,
              jsonb_array_elements_text(coalesce(s.gate_result->'missingCriteria', '[]'::jsonb)) c
        WHERE NOT (s.gate_result->>'passed')::boolean AND ${inRange}${stageFilter}
        GROUP BY c ORDER BY 2 DESC, 1 LIMIT 10`,
      params,
    );
    return { summary, stages, gates, failures };
  },

  /** The resource samples of the period, per bucket of its granularity (every bucket, empty ones at 0), and over the whole period. */
  async resources(q: Queryable, period: Period) {
    const g = period.granularity;
    const buckets = await rows<ResourceBucketRow>(
      q,
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
    const summary = (await one<ResourceSummaryRow>(
      q,
      `SELECT coalesce(avg(cpu_percent), 0)::float8 AS cpu, coalesce(max(cpu_percent), 0)::float8 AS cpu_peak,
              coalesce(avg(memory_percent), 0)::float8 AS mem, coalesce(max(memory_percent), 0)::float8 AS mem_peak,
              coalesce(sum(requests_total), 0)::int AS req, coalesce(sum(network_in + network_out), 0)::float8 AS data
         FROM control_plane.resource_samples WHERE at >= $1 AND at < $2`,
      [period.start, period.end],
    ))!;
    return { buckets, summary };
  },

  /** Finished tasks per agent and UTC day, with their model tokens. */
  taskUsage: (q: Queryable, period: Period) =>
    rows<TaskUsageRow>(
      q,
      `SELECT t.agent_id AS agent, to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS n,
              coalesce(sum((t.result->>'tokensUsed')::bigint), 0)::float8 AS tokens
         FROM control_plane.tasks t WHERE t.created_at >= $1 AND t.created_at < $2 AND t.status IN ('completed','failed') GROUP BY 1, 2`,
      [period.start, period.end],
    ),

  /** Orchestrations created per UTC day. */
  orchestrationUsage: (q: Queryable, period: Period) =>
    rows<{ day: string; n: number }>(
      q,
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS n FROM control_plane.orchestrations
        WHERE created_at >= $1 AND created_at < $2 GROUP BY 1`,
      [period.start, period.end],
    ),

  /** POST /metrics/query over CONTROL_PLANE_METRICS (the kernel builds the statement). */
  custom: (q: Queryable, input: MetricsQueryInput): Promise<MetricsQueryResult> => runMetricsQuery(q, input, CONTROL_PLANE_METRICS),

  // ---- samples (metrics.sampler.ts) ---------------------------------------------------------

  insertSample: (q: Queryable, s: ResourceSample) =>
    exec(
      q,
      `INSERT INTO control_plane.resource_samples
         (process, cpu_percent, memory_percent, memory_used, storage_used, storage_total, network_in, network_out, requests_total, requests_successful, requests_failed)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        s.process,
        s.cpuPercent,
        s.memoryPercent,
        s.memoryUsed,
        s.storageUsed,
        s.storageTotal,
        s.networkIn,
        s.networkOut,
        s.requestsTotal,
        s.requestsSuccessful,
        s.requestsFailed,
      ],
    ),

  /** Drops the samples older than `days`. */
  prune: (q: Queryable, days: number) => exec(q, `DELETE FROM control_plane.resource_samples WHERE at < now() - make_interval(days => $1)`, [days]),
};
