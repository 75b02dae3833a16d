import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An execution's running time before its last wait (`ran_ms`): its time budget (nodes/budgets.ts)
 * counts running, not waiting, so a resumed execution goes on with what it has left.
 */
export class ExecutionRanMs1763769601850 implements MigrationInterface {
  name = 'ExecutionRanMs1763769601850';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.executions ADD COLUMN ran_ms integer NOT NULL DEFAULT 0 CHECK (ran_ms >= 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.executions DROP COLUMN ran_ms`);
  }
}
