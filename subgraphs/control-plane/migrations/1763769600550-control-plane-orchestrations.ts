import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Orchestrations: a row per orchestration, per stage and per planned task (orchestration.engine.ts
 * moves them). Task ids are those of control_plane tasks, kept without a foreign key: the task
 * table belongs to the task service and may live in another deployment unit.
 */
export class ControlPlaneOrchestrations1763769600550 implements MigrationInterface {
  name = 'ControlPlaneOrchestrations1763769600550';

  async up(q: QueryRunner): Promise<void> {
    const stage = (col: string) => `${col} IN ('RESEARCH','DESIGN','IMPLEMENT','VERIFY','DEPLOY','MONITOR')`;
    await q.query(`CREATE SCHEMA IF NOT EXISTS control_plane`);
    await q.query(`
      CREATE TABLE control_plane.orchestrations (
        orchestration_id uuid PRIMARY KEY,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        description text CHECK (length(description) <= 10000),
        status text NOT NULL CHECK (status IN ('running','paused','completed','failed','cancelled')),
        current_stage text CHECK (${stage('current_stage')}),
        stages_total smallint NOT NULL CHECK (stages_total BETWEEN 1 AND 6),
        stages_completed smallint NOT NULL DEFAULT 0 CHECK (stages_completed BETWEEN 0 AND stages_total),
        tasks_total integer NOT NULL CHECK (tasks_total >= 1),
        tasks_completed integer NOT NULL DEFAULT 0 CHECK (tasks_completed BETWEEN 0 AND tasks_total),
        result jsonb,
        error jsonb,
        webhook_url text,
        webhook_events text[],
        webhook_secret_enc bytea,
        principal jsonb NOT NULL,
        key_id uuid,
        pause_reason text CHECK (length(pause_reason) <= 1000),
        cancel_reason text CHECK (length(cancel_reason) <= 1000),
        tasks_cancelled integer CHECK (tasks_cancelled >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        paused_at timestamptz,
        resumed_at timestamptz,
        completed_at timestamptz,
        failed_at timestamptz,
        cancelled_at timestamptz,
        estimated_completion_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((status = 'completed') = (completed_at IS NOT NULL)),
        CHECK ((status = 'failed') = (failed_at IS NOT NULL)),
        CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
        CHECK (status <> 'paused' OR paused_at IS NOT NULL),
        CHECK ((result IS NULL) OR status = 'completed'),
        CHECK ((status = 'failed') = (error IS NOT NULL)),
        CHECK ((webhook_url IS NULL) = (webhook_events IS NULL))
      )`);
    await q.query(`CREATE INDEX orchestrations_list_idx ON control_plane.orchestrations (created_at DESC, orchestration_id)`);
    await q.query(`CREATE INDEX orchestrations_status_idx ON control_plane.orchestrations (status, created_at DESC)`);
    await q.query(`
      CREATE TABLE control_plane.orchestration_stages (
        orchestration_id uuid NOT NULL REFERENCES control_plane.orchestrations(orchestration_id) ON DELETE CASCADE,
        position smallint NOT NULL CHECK (position BETWEEN 0 AND 5),
        stage text NOT NULL CHECK (${stage('stage')}),
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','running','completed','failed','cancelled')),
        parallel boolean NOT NULL DEFAULT false,
        gate_enabled boolean NOT NULL,
        gate_required text[],
        tasks_total smallint NOT NULL CHECK (tasks_total BETWEEN 1 AND 100),
        tasks_completed smallint NOT NULL DEFAULT 0 CHECK (tasks_completed BETWEEN 0 AND tasks_total),
        outputs jsonb,
        gate_result jsonb,
        started_at timestamptz,
        completed_at timestamptz,
        failed_at timestamptz,
        PRIMARY KEY (orchestration_id, position),
        UNIQUE (orchestration_id, stage),
        CHECK (status = 'pending' OR started_at IS NOT NULL),
        CHECK ((status = 'completed') = (completed_at IS NOT NULL)),
        CHECK (gate_required IS NULL OR gate_enabled)
      )`);
    await q.query(`
      CREATE TABLE control_plane.orchestration_tasks (
        orchestration_id uuid NOT NULL,
        stage_position smallint NOT NULL,
        position smallint NOT NULL CHECK (position >= 0),
        task_key text NOT NULL CHECK (length(task_key) BETWEEN 1 AND 200),
        agent_id text NOT NULL,
        task_type text NOT NULL,
        context jsonb NOT NULL DEFAULT '{}',
        dependencies text[] NOT NULL DEFAULT '{}',
        depends_on text[] NOT NULL DEFAULT '{}',
        task_id uuid UNIQUE,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','running','completed','failed','cancelled')),
        progress real NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
        result jsonb,
        error jsonb,
        started_at timestamptz,
        finished_at timestamptz,
        PRIMARY KEY (orchestration_id, stage_position, position),
        UNIQUE (orchestration_id, task_key),
        FOREIGN KEY (orchestration_id, stage_position)
          REFERENCES control_plane.orchestration_stages(orchestration_id, position) ON DELETE CASCADE,
        CHECK ((status = 'pending') = (task_id IS NULL))
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE control_plane.orchestration_tasks`);
    await q.query(`DROP TABLE control_plane.orchestration_stages`);
    await q.query(`DROP TABLE control_plane.orchestrations`);
  }
}
