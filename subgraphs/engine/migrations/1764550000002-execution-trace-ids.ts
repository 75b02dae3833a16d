import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An execution keeps the trace id of the request (or job) that started it, so the dashboard can link to it. */
export class ExecutionTraceIds1764550000002 implements MigrationInterface {
  name = 'ExecutionTraceIds1764550000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.executions ADD COLUMN trace_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.executions DROP COLUMN trace_id`);
  }
}
