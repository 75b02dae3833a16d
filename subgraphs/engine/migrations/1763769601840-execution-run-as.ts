import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Whose permissions an execution's agent and prompt nodes act with (workflows/authority.ts): `run_as` on
 * executions (the API key, null for the platform), and `saved_by` on workflows and their versions
 * (the key that last saved or activated one; its scheduleTrigger runs act as it). Workflows and
 * versions already there were saved by their creator; executions still running or waiting go on
 * as their workflow's creator (who started them was not recorded).
 */
export class ExecutionRunAs1763769601840 implements MigrationInterface {
  name = 'ExecutionRunAs1763769601840';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.workflows ADD COLUMN saved_by uuid`);
    await q.query(`ALTER TABLE engine.workflow_versions ADD COLUMN saved_by uuid`);
    await q.query(`ALTER TABLE engine.executions ADD COLUMN run_as uuid`);
    await q.query(`UPDATE engine.workflows SET saved_by = created_by WHERE created_by IS NOT NULL`);
    await q.query(
      `UPDATE engine.workflow_versions v SET saved_by = w.created_by FROM engine.workflows w WHERE w.id = v.workflow_id AND w.created_by IS NOT NULL`,
    );
    await q.query(`
      UPDATE engine.executions e SET run_as = w.created_by FROM engine.workflows w
      WHERE w.id = e.workflow_id AND w.created_by IS NOT NULL AND e.status IN ('running', 'waiting')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.executions DROP COLUMN run_as`);
    await q.query(`ALTER TABLE engine.workflow_versions DROP COLUMN saved_by`);
    await q.query(`ALTER TABLE engine.workflows DROP COLUMN saved_by`);
  }
}
