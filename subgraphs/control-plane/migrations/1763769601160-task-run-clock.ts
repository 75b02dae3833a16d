import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tasks take the end of their run and its duration from one clock (kernel RunClock1763769601150). */
export class TaskRunClock1763769601160 implements MigrationInterface {
  name = 'TaskRunClock1763769601160';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TRIGGER tasks_run_end BEFORE INSERT OR UPDATE OF status ON control_plane.tasks
      FOR EACH ROW EXECUTE FUNCTION platform.stamp_run_end(
        '{"completed": ["completed_at"], "failed": ["failed_at"], "cancelled": ["cancelled_at"]}', 'duration_ms')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS tasks_run_end ON control_plane.tasks`);
  }
}
