import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The durable job queue (kernel/queue.ts) and the liveness rows of the workers that claim its jobs. */
export class Jobs1763769600100 implements MigrationInterface {
  name = 'Jobs1763769600100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA IF NOT EXISTS platform`);
    await q.query(`
      CREATE TABLE platform.jobs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        data jsonb NOT NULL DEFAULT 'null',
        state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued','running','completed','failed','cancelled')),
        priority smallint NOT NULL DEFAULT 1 CHECK (priority BETWEEN 0 AND 3),
        run_at timestamptz NOT NULL DEFAULT now(),
        attempt integer NOT NULL DEFAULT 0 CHECK (attempt >= 0),
        max_attempts integer NOT NULL DEFAULT 1 CHECK (max_attempts >= 1),
        backoff_ms integer NOT NULL DEFAULT 1000 CHECK (backoff_ms >= 0),
        timeout_ms integer NOT NULL DEFAULT 300000 CHECK (timeout_ms > 0),
        key text,
        locked_by uuid,
        locked_at timestamptz,
        cancel_requested boolean NOT NULL DEFAULT false,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz,
        CHECK ((state = 'running') = (locked_by IS NOT NULL))
      )`);
    // The claim scans this index in claim order and only ever sees claimable rows.
    await q.query(`CREATE INDEX jobs_claim_idx ON platform.jobs (priority DESC, run_at, id) WHERE state = 'queued'`);
    // Idempotency keys are unique among unfinished jobs only: a finished key may be enqueued again.
    await q.query(`CREATE UNIQUE INDEX jobs_key_idx ON platform.jobs (key) WHERE state IN ('queued','running')`);
    await q.query(`CREATE INDEX jobs_locked_by_idx ON platform.jobs (locked_by) WHERE state = 'running'`);
    await q.query(`
      CREATE TABLE platform.workers (
        id uuid PRIMARY KEY,
        heartbeat_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE platform.workers`);
    await q.query(`DROP TABLE platform.jobs`);
  }
}
