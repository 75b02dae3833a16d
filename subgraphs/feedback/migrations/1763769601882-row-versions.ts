import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addRowVersion, dropRowVersion } from '../../../kernel/db/row-version';

/** Feature requests carry a version, so a subscriber can tell a newer state from an older one. */
export class FeedbackRowVersions1763769601882 implements MigrationInterface {
  name = 'FeedbackRowVersions1763769601882';

  async up(q: QueryRunner): Promise<void> {
    await addRowVersion(q, 'feedback.requests');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropRowVersion(q, 'feedback.requests');
  }
}
