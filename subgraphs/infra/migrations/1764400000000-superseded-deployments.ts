import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A deploy or rollback made while a rollout runs supersedes it, as `kubectl set image` does: the
 * running one ends as `superseded` and receivers may subscribe to `deployment.superseded`. The
 * one-in-progress-per-service index stays the guard against two rollouts at once.
 */
export class SupersededDeployments1764400000000 implements MigrationInterface {
  name = 'SupersededDeployments1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE infra.deployments DROP CONSTRAINT deployments_status_check`);
    await q.query(`ALTER TABLE infra.deployments ADD CONSTRAINT deployments_status_check CHECK (status IN ('in-progress','success','failed','superseded'))`);
    await q.query(`ALTER TABLE infra.webhooks DROP CONSTRAINT webhooks_events_check`);
    await q.query(
      `ALTER TABLE infra.webhooks ADD CONSTRAINT webhooks_events_check
         CHECK (cardinality(events) >= 1 AND events <@ ARRAY['deployment.created','deployment.completed','deployment.superseded','alert.triggered'])`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE infra.deployments SET status = 'failed' WHERE status = 'superseded'`);
    await q.query(`ALTER TABLE infra.deployments DROP CONSTRAINT deployments_status_check`);
    await q.query(`ALTER TABLE infra.deployments ADD CONSTRAINT deployments_status_check CHECK (status IN ('in-progress','success','failed'))`);
    await q.query(`UPDATE infra.webhooks SET events = array_remove(events, 'deployment.superseded')`);
    await q.query(`DELETE FROM infra.webhooks WHERE cardinality(events) = 0`);
    await q.query(`ALTER TABLE infra.webhooks DROP CONSTRAINT webhooks_events_check`);
    await q.query(
      `ALTER TABLE infra.webhooks ADD CONSTRAINT webhooks_events_check
         CHECK (cardinality(events) >= 1 AND events <@ ARRAY['deployment.created','deployment.completed','alert.triggered'])`,
    );
  }
}
