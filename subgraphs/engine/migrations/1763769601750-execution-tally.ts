import type { MigrationInterface, QueryRunner } from 'typeorm';
import { EXECUTION_TALLY } from '../executions';

/**
 * GET /executions totals from a tally (kernel/db/tally.ts) by workflow and status instead of a
 * count(*) — a sequential scan without a filter — over a million executions (the growth bench:
 * p99 149 ms). The executions already there are counted here.
 */
export class ExecutionTally1763769601750 implements MigrationInterface {
  name = 'ExecutionTally1763769601750';

  async up(q: QueryRunner): Promise<void> {
    await EXECUTION_TALLY.create(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await EXECUTION_TALLY.drop(q);
  }
}
