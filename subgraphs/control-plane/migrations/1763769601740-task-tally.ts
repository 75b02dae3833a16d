import type { MigrationInterface, QueryRunner } from 'typeorm';
import { TASK_TALLY } from '../tasks';

/**
 * GET /agents/tasks totals from a tally (kernel/db/tally.ts) by agent, task type and status
 * instead of a count(*) over most of a million tasks (the growth bench: p99 285 ms). The tasks
 * already there are counted here.
 */
export class TaskTally1763769601740 implements MigrationInterface {
  name = 'TaskTally1763769601740';

  async up(q: QueryRunner): Promise<void> {
    await TASK_TALLY.create(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await TASK_TALLY.drop(q);
  }
}
