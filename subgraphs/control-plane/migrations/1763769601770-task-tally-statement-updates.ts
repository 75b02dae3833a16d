import type { MigrationInterface, QueryRunner } from 'typeorm';
import { TASK_ROLLUP } from '../metrics';
import { TASK_TALLY } from '../tasks';

/**
 * The tasks' tallies count an UPDATE once per statement, from its transition tables, instead of
 * one trigger call per row moved (kernel/db/tally.ts): a grouped start or completion of fifty
 * tasks ran up to four plpgsql calls per task. The counts are the same either way, so down
 * leaves the statement triggers in place.
 */
export class TaskTallyStatementUpdates1763769601770 implements MigrationInterface {
  name = 'TaskTallyStatementUpdates1763769601770';

  async up(q: QueryRunner): Promise<void> {
    for (const tally of [TASK_TALLY, ...TASK_ROLLUP.tallies]) await tally.createTriggers(q);
  }

  async down(): Promise<void> {}
}
