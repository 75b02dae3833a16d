import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addRowVersion, dropRowVersion } from '../../../kernel/db/row-version';

/** Executions carry a version, so a subscriber can tell a newer state from an older one. */
export class EngineRowVersions1763769601883 implements MigrationInterface {
  name = 'EngineRowVersions1763769601883';

  async up(q: QueryRunner): Promise<void> {
    await addRowVersion(q, 'engine.executions');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropRowVersion(q, 'engine.executions');
  }
}
