import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addRowVersion, dropRowVersion } from '../../../kernel/db/row-version';

/** Tasks and orchestrations carry a version, so a subscriber can tell a newer state from an older one. */
export class ControlPlaneRowVersions1763769601870 implements MigrationInterface {
  name = 'ControlPlaneRowVersions1763769601870';

  async up(q: QueryRunner): Promise<void> {
    await addRowVersion(q, 'control_plane.tasks');
    await addRowVersion(q, 'control_plane.orchestrations');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropRowVersion(q, 'control_plane.orchestrations');
    await dropRowVersion(q, 'control_plane.tasks');
  }
}
