import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agent tasks and the files they produce. The CHECKs hold the state machine's invariants (a
 * timestamp and a payload per terminal state); the indexes serve the task list's filters and
 * sorts, the per-key concurrency count and the duration estimates. Progress writes touch no
 * indexed column and the pages keep room (fillfactor), so they stay HOT updates.
 */
export class ControlPlaneTasks1763769600400 implements MigrationInterface {
  name = 'ControlPlaneTasks1763769600400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA IF NOT EXISTS control_plane`);
    await q.query(`
      CREATE TABLE control_plane.tasks (
        id uuid PRIMARY KEY,
        agent_id text NOT NULL CHECK (length(agent_id) BETWEEN 1 AND 100),
        task_type text NOT NULL CHECK (length(task_type) BETWEEN 1 AND 100),
        status text NOT NULL CHECK (status IN ('queued','running','completed','failed','cancelled')),
        priority text NOT NULL CHECK (priority IN ('low','normal','high','critical')),
        mode text NOT NULL CHECK (mode IN ('async','sync')),
        timeout_seconds integer NOT NULL CHECK (timeout_seconds BETWEEN 5 AND 3600),
        context jsonb NOT NULL CHECK (jsonb_typeof(context) = 'object'),
        forge jsonb CHECK (forge IS NULL OR jsonb_typeof(forge) = 'object'),
        model_config jsonb CHECK (model_config IS NULL OR jsonb_typeof(model_config) = 'object'),
        webhook_url text CHECK (length(webhook_url) <= 2048),
        webhook_events text[],
        webhook_secret_enc bytea,
        progress jsonb,
        result jsonb,
        error jsonb,
        job_id uuid,
        created_by_key uuid,
        orchestration_id uuid,
        stage text CHECK (stage IN ('RESEARCH','DESIGN','IMPLEMENT','VERIFY','DEPLOY','MONITOR')),
        estimated_duration real NOT NULL CHECK (estimated_duration >= 0),
        duration_ms integer CHECK (duration_ms >= 0),
        cancel_reason text CHECK (length(cancel_reason) <= 1000),
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        completed_at timestamptz,
        failed_at timestamptz,
        cancelled_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (status <> 'queued' OR started_at IS NULL),
        CHECK ((status = 'completed') = (completed_at IS NOT NULL)),
        CHECK ((status = 'completed') = (result IS NOT NULL)),
        CHECK ((status = 'failed') = (failed_at IS NOT NULL)),
        CHECK ((status = 'failed') = (error IS NOT NULL)),
        CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
        CHECK ((webhook_url IS NULL) = (webhook_events IS NULL)),
        CHECK (webhook_secret_enc IS NULL OR webhook_url IS NOT NULL)
      ) WITH (fillfactor = 90)`);
    // GET /agents/tasks: every filter with the default sort, and the other sorts.
    await q.query(`CREATE INDEX tasks_created_idx ON control_plane.tasks (created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX tasks_agent_created_idx ON control_plane.tasks (agent_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX tasks_status_created_idx ON control_plane.tasks (status, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX tasks_completed_idx ON control_plane.tasks (completed_at, id) WHERE completed_at IS NOT NULL`);
    await q.query(`CREATE INDEX tasks_duration_idx ON control_plane.tasks (duration_ms, id) WHERE duration_ms IS NOT NULL`);
    // Per-key concurrency: the unfinished tasks of one key.
    await q.query(`CREATE INDEX tasks_active_key_idx ON control_plane.tasks (created_by_key) WHERE status IN ('queued','running')`);
    // Duration estimates and agent statistics from history.
    await q.query(`CREATE INDEX tasks_history_idx ON control_plane.tasks (agent_id, task_type, completed_at DESC) WHERE status = 'completed'`);
    await q.query(`CREATE INDEX tasks_orchestration_idx ON control_plane.tasks (orchestration_id) WHERE orchestration_id IS NOT NULL`);

    await q.query(`
      CREATE TABLE control_plane.task_artifacts (
        task_id uuid NOT NULL REFERENCES control_plane.tasks(id) ON DELETE CASCADE,
        path text NOT NULL CHECK (length(path) BETWEEN 1 AND 300),
        kind text NOT NULL CHECK (kind IN ('created','modified')),
        content text NOT NULL,
        lines integer NOT NULL CHECK (lines >= 0),
        bytes integer NOT NULL CHECK (bytes >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (task_id, path)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE control_plane.task_artifacts`);
    await q.query(`DROP TABLE control_plane.tasks`);
  }
}
