import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Workflow executions take the end of their run and its duration from one clock (kernel RunClock1763769601150). */
export class ExecutionRunClock1763769601180 implements MigrationInterface {
  name = 'ExecutionRunClock1763769601180';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TRIGGER executions_run_end BEFORE INSERT OR UPDATE OF status ON engine.executions
      FOR EACH ROW EXECUTE FUNCTION platform.stamp_run_end(
        '{"success": ["finished_at"], "error": ["finished_at", "failed_at"], "canceled": ["finished_at", "canceled_at"]}', 'duration_ms')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS executions_run_end ON engine.executions`);
  }
}
