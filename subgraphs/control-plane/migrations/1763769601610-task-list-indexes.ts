import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * GET /agents/tasks of one agent sorted by duration or completion (descending, the default) reads
 * these instead of sorting every task of the agent (the growth bench found it at a million tasks).
 */
export class TaskListIndexes1763769601610 implements MigrationInterface {
  name = 'TaskListIndexes1763769601610';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX tasks_agent_duration_idx ON control_plane.tasks (agent_id, duration_ms DESC NULLS LAST, id DESC)`);
    await q.query(`CREATE INDEX tasks_agent_completed_idx ON control_plane.tasks (agent_id, completed_at DESC NULLS LAST, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX control_plane.tasks_agent_completed_idx`);
    await q.query(`DROP INDEX control_plane.tasks_agent_duration_idx`);
  }
}
