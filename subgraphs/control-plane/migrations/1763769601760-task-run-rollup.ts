import type { MigrationInterface, QueryRunner } from 'typeorm';
import { TASK_ROLLUP } from '../metrics';

/**
 * GET /metrics/agents from hourly rollups of the finished tasks and a duration histogram
 * (kernel/metrics-rollup.ts) instead of scanning every task of the period (the growth bench:
 * p99 3.1 s over 30 days of a million tasks), with the index the percentile reads use. The
 * tasks already there are counted here.
 */
export class TaskRunRollup1763769601760 implements MigrationInterface {
  name = 'TaskRunRollup1763769601760';

  async up(q: QueryRunner): Promise<void> {
    await TASK_ROLLUP.create(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await TASK_ROLLUP.drop(q);
  }
}
