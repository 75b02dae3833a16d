import { one, rows, type Queryable } from '../../../kernel/db/rows';
import type { RunSource } from '../../../kernel/metrics';
import { EXECUTION_TALLY } from './reads.store';

/**
 * The engine's own figures for the control plane's metrics (metrics.ts), read from the
 * executions and their node runs. The period statistics and the custom query are the kernel's
 * (kernel/metrics.ts), given the tables below.
 */

export const EXECUTIONS: RunSource = {
  table: 'engine.executions',
  at: 't.started_at',
  finished: `t.status IN ('success','error','canceled')`,
  ok: `t.status = 'success'`,
  failed: `t.status = 'error'`,
  durationMs: 't.duration_ms',
  errorCode: `t.error->>'code'`,
};

export interface NodeFiguresRow {
  name: string;
  runs: number;
  /** Never null: every run has a duration. */
  avg: number;
  failed: number;
}

export interface EngineHealthRow {
  running: number;
  waiting: number;
  total: number;
  failed: number;
}

export interface UsageRow {
  id: string;
  day: string;
  n: number;
}

export const workflowMetricsStore = {
  async workflowExists(q: Queryable, id: string): Promise<boolean> {
    return (await rows(q, `SELECT 1 FROM engine.workflows WHERE id = $1`, [id])).length > 0;
  },

  /**
   * Per node, over the finished executions of the period ($1, $2) and `where` (on `t`, the
   * executions; its parameters from $3, in `args` after the period's): runs, average duration, failures.
   */
  nodeFigures(q: Queryable, where: string, args: unknown[]): Promise<NodeFiguresRow[]> {
    return rows<NodeFiguresRow>(
      q,
      `SELECT n.node_name AS name, count(*)::int AS runs, avg(n.duration_ms)::float8 AS avg, count(*) FILTER (WHERE n.status = 'error')::int AS failed
         FROM engine.execution_nodes n JOIN engine.executions t ON t.id = n.execution_id
        WHERE ${EXECUTIONS.at} >= $1 AND ${EXECUTIONS.at} < $2 AND ${EXECUTIONS.finished}${where ? ` AND ${where}` : ''}
        GROUP BY n.node_name ORDER BY avg(n.duration_ms) DESC, n.node_name`,
      args,
    );
  },

  async health(q: Queryable): Promise<EngineHealthRow> {
    const row = await one<EngineHealthRow>(
      q,
      `SELECT coalesce(sum(n) FILTER (WHERE status = 'running'), 0)::int AS running, coalesce(sum(n) FILTER (WHERE status = 'waiting'), 0)::int AS waiting,
              coalesce(sum(n), 0)::int AS total, coalesce(sum(n) FILTER (WHERE status = 'error'), 0)::int AS failed
         FROM ${EXECUTION_TALLY.rows('')} x`,
    );
    return row!;
  },

  /** Executions per workflow and UTC day whose start falls in [start, end). */
  usage(q: Queryable, start: Date, end: Date): Promise<UsageRow[]> {
    return rows<UsageRow>(
      q,
      `SELECT t.workflow_id AS id, to_char(t.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS n
         FROM engine.executions t WHERE t.started_at >= $1 AND t.started_at < $2 GROUP BY 1, 2 ORDER BY 2, 1`,
      [start, end],
    );
  },
};
