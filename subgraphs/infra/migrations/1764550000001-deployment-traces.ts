import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A rollout keeps the traceparent of the request that started it, under which each step the watcher
 * observes is recorded as a span, and when its last step was observed (where the next one starts).
 */
export class DeploymentTraces1764550000001 implements MigrationInterface {
  name = 'DeploymentTraces1764550000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE infra.deployments ADD COLUMN trace_parent text, ADD COLUMN stepped_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE infra.deployments DROP COLUMN stepped_at, DROP COLUMN trace_parent`);
  }
}
