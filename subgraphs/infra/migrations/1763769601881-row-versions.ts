import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addRowVersion, dropRowVersion } from '../../../kernel/db/row-version';

/** Deployments carry a version, so a subscriber can tell a newer state from an older one. */
export class InfraRowVersions1763769601881 implements MigrationInterface {
  name = 'InfraRowVersions1763769601881';

  async up(q: QueryRunner): Promise<void> {
    await addRowVersion(q, 'infra.deployments');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropRowVersion(q, 'infra.deployments');
  }
}
