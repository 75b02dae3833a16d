import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Chain executions take the end of their run from one clock (kernel RunClock1763769601150). */
export class ChainRunClock1763769601170 implements MigrationInterface {
  name = 'ChainRunClock1763769601170';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TRIGGER chain_executions_run_end BEFORE INSERT OR UPDATE OF status ON promptlib.chain_executions
      FOR EACH ROW EXECUTE FUNCTION platform.stamp_run_end('{"completed": ["completed_at"], "failed": ["failed_at"]}', '')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS chain_executions_run_end ON promptlib.chain_executions`);
  }
}
