import { rows, type Queryable } from '../../../kernel/db/rows';

/** The task history the agent catalogue reports (agent.service.ts), read from control_plane.tasks. */

export interface AgentStatsRow {
  agent_id: string;
  completed: number;
  failed: number;
  /** Mean ms of the completed ones; null when none completed. */
  avg_ms: number | null;
}

export const agentStore = {
  /** Per agent with history, over its last `window` finished (completed or failed) tasks. */
  stats: (q: Queryable, agentIds: string[], window: number) =>
    rows<AgentStatsRow>(
      q,
      `SELECT a.agent_id, count(*) FILTER (WHERE r.status = 'completed')::int AS completed,
              count(*) FILTER (WHERE r.status = 'failed')::int AS failed,
              avg(r.duration_ms) FILTER (WHERE r.status = 'completed')::float AS avg_ms
         FROM unnest($1::text[]) AS a(agent_id)
         CROSS JOIN LATERAL (
           SELECT status, duration_ms FROM control_plane.tasks t
            WHERE t.agent_id = a.agent_id AND t.status IN ('completed','failed')
            ORDER BY t.created_at DESC LIMIT ${Math.trunc(window)}) r
        GROUP BY a.agent_id`,
      [agentIds],
    ),
};
