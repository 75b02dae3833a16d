import type { MigrationInterface, QueryRunner } from 'typeorm';

/** n8n's workflow static data: slots (`global`, `node:<name>`) kept between production executions. */
export class WorkflowStaticData1764700000001 implements MigrationInterface {
  name = 'WorkflowStaticData1764700000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.workflows ADD COLUMN static_data jsonb NOT NULL DEFAULT '{}'::jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.workflows DROP COLUMN static_data`);
  }
}
