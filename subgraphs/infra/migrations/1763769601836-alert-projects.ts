import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An alert about a deployment belongs to the service's project, so it is listed only to those
 * who may see that project (a private project's service and image names are in it). The open and
 * past ones are attributed through their service where it still exists.
 */
export class AlertProjects1763769601836 implements MigrationInterface {
  name = 'AlertProjects1763769601836';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE infra.alerts ADD COLUMN project_id uuid REFERENCES infra.projects(id) ON DELETE CASCADE`);
    await q.query(`CREATE INDEX alerts_project_idx ON infra.alerts (project_id) WHERE project_id IS NOT NULL`);
    await q.query(`UPDATE infra.alerts a SET project_id = s.project_id FROM infra.services s WHERE a.rule = 'deployment_failed' AND a.subject = s.id::text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE infra.alerts DROP COLUMN project_id`);
  }
}
