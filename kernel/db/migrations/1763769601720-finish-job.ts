import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `platform.finish_job(id, worker, next_state, error, delay_ms)`: ends an attempt held by
 * `worker` (completed, failed, or queued again after `delay_ms`); a cancel request wins over
 * whatever the handler did. Returns the job's state, NULL when the worker no longer holds it. The
 * queue finishes attempts with it, and a handler may call it inside the statement that stores its
 * own result (`JobContext.completion`), so result and job end commit together. Dropped by
 * JobsEndedInStatement1763769601800 for the queue's `jobsEndedSql`.
 */
export class FinishJob1763769601720 implements MigrationInterface {
  name = 'FinishJob1763769601720';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION platform.finish_job(job_id uuid, worker uuid, next_state text, error text, delay_ms integer)
      RETURNS text LANGUAGE sql VOLATILE AS $$
        UPDATE platform.jobs SET
          state = CASE WHEN cancel_requested THEN 'cancelled' ELSE next_state END,
          last_error = CASE WHEN cancel_requested THEN last_error ELSE coalesce(error, last_error) END,
          run_at = CASE WHEN next_state = 'queued' THEN now() + delay_ms * interval '1 millisecond' ELSE run_at END,
          finished_at = CASE WHEN cancel_requested OR next_state <> 'queued' THEN now() END,
          locked_by = NULL, locked_at = NULL, updated_at = now()
        WHERE id = job_id AND locked_by = worker AND state = 'running'
        RETURNING state
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION platform.finish_job(uuid, uuid, text, text, integer)`);
  }
}
