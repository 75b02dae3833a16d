import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tasks keep the trace id of the request that created them, so the dashboard can link to it;
 * orchestrations its whole traceparent, under which each stage's span is recorded.
 */
export class ControlPlaneTraceIds1764550000000 implements MigrationInterface {
  name = 'ControlPlaneTraceIds1764550000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE control_plane.tasks ADD COLUMN trace_id text`);
    await q.query(`ALTER TABLE control_plane.orchestrations ADD COLUMN trace_parent text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE control_plane.orchestrations DROP COLUMN trace_parent`);
    await q.query(`ALTER TABLE control_plane.tasks DROP COLUMN trace_id`);
  }
}
