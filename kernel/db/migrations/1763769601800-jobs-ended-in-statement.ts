import type { MigrationInterface, QueryRunner } from 'typeorm';
import { FinishJob1763769601720 } from './1763769601720-finish-job';

/**
 * `platform.finish_job` goes: an attempt's end is the queue's `jobsEndedSql` (kernel/queue.ts),
 * one UPDATE for one job or for a grouped statement's many, where the SQL function ended one job
 * per call and planned its UPDATE again each time (a grouped task completion called it once per
 * task). Down brings the function back.
 */
export class JobsEndedInStatement1763769601800 implements MigrationInterface {
  name = 'JobsEndedInStatement1763769601800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION platform.finish_job(uuid, uuid, text, text, integer)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await new FinishJob1763769601720().up(q);
  }
}
