import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Schedules (engine.schedules): those registered through the control plane
 * (`POST /v1/control-plane/workflows/{id}/schedule`) and those of the workflows' scheduleTrigger
 * nodes (node_name set, kept in step with the active definition). `next_run_at` is the due time
 * the next firing claims (execution.schedule.ts). Executions keep the webhook a control-plane
 * trigger asked for (execution.* events).
 */
export class EngineSchedules1763769600800 implements MigrationInterface {
  name = 'EngineSchedules1763769600800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE engine.schedules (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workflow_id uuid NOT NULL REFERENCES engine.workflows(id) ON DELETE CASCADE,
        node_name text,
        cron text NOT NULL CHECK (length(cron) BETWEEN 1 AND 200),
        timezone text NOT NULL DEFAULT 'UTC',
        payload jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(payload) = 'object'),
        enabled boolean NOT NULL DEFAULT true,
        next_run_at timestamptz,
        last_run_at timestamptz,
        last_scheduled_for timestamptz,
        last_execution_id uuid,
        runs integer NOT NULL DEFAULT 0,
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (NOT enabled OR next_run_at IS NOT NULL)
      )`);
    await q.query(`CREATE UNIQUE INDEX schedules_node_idx ON engine.schedules (workflow_id, node_name) WHERE node_name IS NOT NULL`);
    await q.query(`CREATE INDEX schedules_workflow_idx ON engine.schedules (workflow_id, created_at)`);
    await q.query(`CREATE INDEX schedules_due_idx ON engine.schedules (next_run_at) WHERE enabled`);
    // A control-plane trigger's webhook {url, events, secretEnc}: execution.started|completed|failed|waiting.
    await q.query(`ALTER TABLE engine.executions ADD COLUMN notify jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE engine.executions DROP COLUMN notify`);
    await q.query(`DROP TABLE engine.schedules`);
  }
}
