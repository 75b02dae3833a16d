import type { MigrationInterface, QueryRunner } from 'typeorm';

/** n8n's pinned data of an imported workflow: what its nodes output in manual runs instead of running. */
export class WorkflowPinData1764700000002 implements MigrationInterface {
  name = 'WorkflowPinData1764700000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.workflows ADD COLUMN pin_data jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.workflows DROP COLUMN pin_data`);
  }
}
