import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The workflow engine's schema: workflow definitions and their versions, executions with their
 * run data and logs, webhook triggers with their request logs.
 */
export class Engine1763769600700 implements MigrationInterface {
  name = 'Engine1763769600700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA IF NOT EXISTS engine`);
    await q.query(`
      CREATE TABLE engine.workflows (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        description text CHECK (length(description) <= 10000),
        tags text[] NOT NULL DEFAULT '{}',
        active boolean NOT NULL DEFAULT false,
        version integer NOT NULL DEFAULT 1 CHECK (version >= 1),
        nodes jsonb NOT NULL CHECK (jsonb_typeof(nodes) = 'array'),
        connections jsonb NOT NULL CHECK (jsonb_typeof(connections) = 'object'),
        settings jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(settings) = 'object'),
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX workflows_list_idx ON engine.workflows (created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX workflows_active_idx ON engine.workflows (active, created_at DESC)`);
    await q.query(`CREATE INDEX workflows_tags_idx ON engine.workflows USING gin (tags)`);

    // Every version of a definition, immutable: executions run (and resume) the one they started with.
    await q.query(`
      CREATE TABLE engine.workflow_versions (
        workflow_id uuid NOT NULL REFERENCES engine.workflows(id) ON DELETE CASCADE,
        version integer NOT NULL CHECK (version >= 1),
        name text NOT NULL,
        active boolean NOT NULL,
        nodes jsonb NOT NULL,
        connections jsonb NOT NULL,
        settings jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workflow_id, version)
      )`);

    await q.query(`
      CREATE TABLE engine.webhook_triggers (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        workflow_id uuid NOT NULL REFERENCES engine.workflows(id) ON DELETE CASCADE,
        path text NOT NULL CHECK (path ~ '^[A-Za-z0-9._~:@!$&''()*+,;=-]+(/[A-Za-z0-9._~:@!$&''()*+,;=-]+)*$' AND length(path) <= 300),
        method text NOT NULL CHECK (method IN ('GET','POST','PUT','PATCH','DELETE')),
        auth_type text NOT NULL DEFAULT 'none' CHECK (auth_type IN ('none','apiKey','hmac','basic','oauth')),
        auth_config jsonb NOT NULL DEFAULT '{}',
        secret_hash bytea,
        secret_enc bytea,
        response_mode text NOT NULL DEFAULT 'onReceived' CHECK (response_mode IN ('onReceived','lastNode')),
        rate_limit jsonb,
        active boolean NOT NULL DEFAULT true,
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (path, method),
        CHECK (auth_type <> 'hmac' OR secret_enc IS NOT NULL),
        CHECK (auth_type NOT IN ('apiKey','basic','oauth') OR secret_hash IS NOT NULL)
      )`);
    await q.query(`CREATE INDEX webhook_triggers_workflow_idx ON engine.webhook_triggers (workflow_id)`);
    await q.query(`CREATE INDEX webhook_triggers_list_idx ON engine.webhook_triggers (created_at DESC, id DESC)`);

    await q.query(`
      CREATE TABLE engine.executions (
        id uuid PRIMARY KEY,
        workflow_id uuid NOT NULL REFERENCES engine.workflows(id) ON DELETE CASCADE,
        workflow_version integer NOT NULL,
        status text NOT NULL CHECK (status IN ('running','success','error','waiting','canceled')),
        mode text NOT NULL CHECK (mode IN ('manual','webhook','schedule','retry','subworkflow','test','error')),
        input jsonb NOT NULL DEFAULT '[]',
        start_node text,
        nodes_total integer NOT NULL DEFAULT 0 CHECK (nodes_total >= 0),
        nodes_completed integer NOT NULL DEFAULT 0 CHECK (nodes_completed >= 0),
        current_node text,
        result jsonb,
        error jsonb,
        resume_state jsonb,
        wait_till timestamptz,
        job_id uuid,
        original_execution_id uuid REFERENCES engine.executions(id) ON DELETE SET NULL,
        parent_execution_id uuid REFERENCES engine.executions(id) ON DELETE SET NULL,
        webhook_id uuid REFERENCES engine.webhook_triggers(id) ON DELETE SET NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        failed_at timestamptz,
        canceled_at timestamptz,
        duration_ms integer,
        heartbeat_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (workflow_id, workflow_version) REFERENCES engine.workflow_versions(workflow_id, version) ON DELETE CASCADE,
        CHECK ((status IN ('running','waiting')) = (finished_at IS NULL)),
        CHECK ((status = 'waiting') = (resume_state IS NOT NULL)),
        CHECK (status <> 'canceled' OR canceled_at IS NOT NULL),
        CHECK (status <> 'error' OR failed_at IS NOT NULL)
      )`);
    await q.query(`CREATE INDEX executions_list_idx ON engine.executions (started_at DESC, id DESC)`);
    await q.query(`CREATE INDEX executions_workflow_idx ON engine.executions (workflow_id, started_at DESC)`);
    await q.query(`CREATE INDEX executions_status_idx ON engine.executions (status, started_at DESC)`);
    // Inline (not queued) runs heartbeat; a run whose process died is found by this index.
    await q.query(`CREATE INDEX executions_inline_idx ON engine.executions (heartbeat_at) WHERE status = 'running' AND job_id IS NULL`);
    await q.query(`CREATE INDEX executions_original_idx ON engine.executions (original_execution_id) WHERE original_execution_id IS NOT NULL`);
    await q.query(`CREATE INDEX executions_parent_idx ON engine.executions (parent_execution_id) WHERE parent_execution_id IS NOT NULL`);

    // Run data: one row per node that ran (output kept for includeData, retries and resumes).
    await q.query(`
      CREATE TABLE engine.execution_nodes (
        execution_id uuid NOT NULL REFERENCES engine.executions(id) ON DELETE CASCADE,
        node_name text NOT NULL,
        seq integer NOT NULL,
        node_type text NOT NULL,
        status text NOT NULL CHECK (status IN ('success','error')),
        started_at timestamptz NOT NULL,
        duration_ms integer NOT NULL CHECK (duration_ms >= 0),
        tries integer NOT NULL DEFAULT 1 CHECK (tries >= 1),
        reused boolean NOT NULL DEFAULT false,
        output jsonb,
        error jsonb,
        PRIMARY KEY (execution_id, node_name)
      )`);

    await q.query(`
      CREATE TABLE engine.execution_logs (
        id bigserial PRIMARY KEY,
        execution_id uuid NOT NULL REFERENCES engine.executions(id) ON DELETE CASCADE,
        at timestamptz NOT NULL DEFAULT now(),
        level text NOT NULL CHECK (level IN ('debug','info','warn','error')),
        node text,
        message text NOT NULL
      )`);
    await q.query(`CREATE INDEX execution_logs_execution_idx ON engine.execution_logs (execution_id, id)`);

    await q.query(`
      CREATE TABLE engine.webhook_logs (
        id bigserial PRIMARY KEY,
        webhook_id uuid NOT NULL REFERENCES engine.webhook_triggers(id) ON DELETE CASCADE,
        at timestamptz NOT NULL DEFAULT now(),
        method text NOT NULL,
        source_ip text,
        status text NOT NULL CHECK (status IN ('success','failed','rejected')),
        reason text,
        status_code integer NOT NULL,
        response_time_ms integer NOT NULL CHECK (response_time_ms >= 0),
        execution_id uuid,
        test boolean NOT NULL DEFAULT false
      )`);
    await q.query(`CREATE INDEX webhook_logs_webhook_idx ON engine.webhook_logs (webhook_id, id DESC)`);
    await q.query(`CREATE INDEX webhook_logs_at_idx ON engine.webhook_logs (at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP SCHEMA engine CASCADE`);
  }
}
