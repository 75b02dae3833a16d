import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The sticky notes of an imported workflow: drawn with its graph, never run. */
export class WorkflowStickyNotes1764800000000 implements MigrationInterface {
  name = 'WorkflowStickyNotes1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.workflows ADD COLUMN sticky_notes jsonb NOT NULL DEFAULT '[]'::jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.workflows DROP COLUMN sticky_notes`);
  }
}
