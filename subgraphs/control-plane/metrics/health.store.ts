import { count, exec, one, type Queryable } from '../../../kernel/db/rows';

/**
 * The statements of the system health view (health.service.ts): the database probe and its
 * connections, and the agent tasks under way.
 */
export const healthStore = {
  /** The cheapest round trip: what the probe times. */
  ping: (q: Queryable) => exec(q, 'SELECT 1'),

  /** Connections to this database. */
  connections: (q: Queryable) => count(q, `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()`),

  /** Agent tasks running and queued. */
  activeTasks: async (q: Queryable) =>
    (await one<{ running: number; queued: number }>(
      q,
      `SELECT count(*) FILTER (WHERE status = 'running')::int AS running, count(*) FILTER (WHERE status = 'queued')::int AS queued
         FROM control_plane.tasks WHERE status IN ('queued','running')`,
    ))!,

  /** The key's tasks queued or running (its concurrent executions). */
  activeTasksOfKey: (q: Queryable, keyId: string) =>
    count(q, `SELECT count(*)::int AS n FROM control_plane.tasks WHERE created_by_key = $1 AND status IN ('queued','running')`, [keyId]),
};
