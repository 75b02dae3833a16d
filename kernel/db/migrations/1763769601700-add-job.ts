import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `platform.add_job(...)`: the queue's enqueue as a SQL function (as graphile-worker's
 * `add_job`), so that a service can add a job inside its own statement — its rows and their job
 * written in one round trip, atomically — and `Queue.enqueue` uses the same definition. An
 * idempotency key held by an unfinished job returns that job's id; a key whose holder finishes
 * meanwhile is tried again (each statement of a VOLATILE function sees a fresh snapshot). NULL
 * after three lost races.
 */
export class AddJob1763769601700 implements MigrationInterface {
  name = 'AddJob1763769601700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION platform.add_job(job_name text, job_data jsonb, job_priority smallint, job_run_at timestamptz,
                                       job_max_attempts integer, job_backoff_ms integer, job_timeout_ms integer, job_key text)
      RETURNS uuid LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        added uuid;
      BEGIN
        FOR attempt IN 1..3 LOOP
          INSERT INTO platform.jobs (name, data, priority, run_at, max_attempts, backoff_ms, timeout_ms, key)
          VALUES (job_name, coalesce(job_data, 'null'::jsonb), job_priority, coalesce(job_run_at, now()), job_max_attempts, job_backoff_ms, job_timeout_ms, job_key)
          ON CONFLICT (key) WHERE state IN ('queued','running') DO NOTHING
          RETURNING id INTO added;
          IF added IS NOT NULL THEN
            RETURN added;
          END IF;
          SELECT id INTO added FROM platform.jobs WHERE key = job_key AND state IN ('queued','running');
          IF added IS NOT NULL THEN
            RETURN added;
          END IF;
        END LOOP;
        RETURN NULL;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION platform.add_job(text, jsonb, smallint, timestamptz, integer, integer, integer, text)`);
  }
}
