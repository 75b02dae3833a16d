import type { MigrationInterface, QueryRunner } from 'typeorm';
import { EXECUTION_TALLY } from '../executions';

/**
 * The executions' tally counts an UPDATE once per statement, from its transition tables, instead
 * of one trigger call per row moved (kernel/db/tally.ts). The counts are the same either way, so
 * down leaves the statement triggers in place.
 */
export class ExecutionTallyStatementUpdates1763769601780 implements MigrationInterface {
  name = 'ExecutionTallyStatementUpdates1763769601780';

  async up(q: QueryRunner): Promise<void> {
    await EXECUTION_TALLY.createTriggers(q);
  }

  async down(): Promise<void> {}
}
