import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `control_plane.lock_key_tasks(key)`: takes the key's creation lock (held to the end of the
 * caller's transaction) and only then counts the key's queued and running tasks. Called inside
 * the statement that creates a task, it lets that one statement enforce the tier's concurrency
 * limit: the count is a query of a VOLATILE function, so it reads a snapshot taken after the lock
 * was granted — every creation of the key committed before is in it — where a count written in
 * the creating statement itself would read the statement's snapshot, taken before the wait.
 */
export class KeyTaskSlots1763769601710 implements MigrationInterface {
  name = 'KeyTaskSlots1763769601710';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION control_plane.lock_key_tasks(key_id uuid) RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended(key_id::text, 7270400));
        RETURN (SELECT count(*) FROM control_plane.tasks WHERE created_by_key = key_id AND status IN ('queued','running'));
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION control_plane.lock_key_tasks(uuid)`);
  }
}
