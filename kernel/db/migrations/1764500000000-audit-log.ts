import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit trail (kernel/audit): one row per change made through any surface. Append-only for
 * the platform's own database user: a trigger refuses every UPDATE and TRUNCATE, and every DELETE
 * except of rows older than the retention the deleting transaction names in
 * `platform.audit_retention_days` — which only `platform.sweep_audit_log(days)` sets, for its own
 * DELETE (kernel/audit/audit.store.ts).
 */
export class AuditLog1764500000000 implements MigrationInterface {
  name = 'AuditLog1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE platform.audit_log (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        actor_kind text NOT NULL,
        actor_id text,
        actor_name text,
        actor_service text,
        ip text,
        user_agent text,
        request_id text,
        subgraph text NOT NULL,
        operation text NOT NULL,
        resource_type text NOT NULL,
        resource_id text,
        changed_fields text[] NOT NULL DEFAULT '{}'
      )`);
    await q.query(`CREATE INDEX audit_log_at ON platform.audit_log (at DESC, id DESC)`);
    await q.query(`CREATE INDEX audit_log_actor ON platform.audit_log (actor_id, at DESC)`);
    await q.query(`CREATE INDEX audit_log_resource ON platform.audit_log (resource_type, resource_id, at DESC)`);
    await q.query(`CREATE INDEX audit_log_operation ON platform.audit_log (operation, at DESC)`);
    await q.query(`
      CREATE FUNCTION platform.audit_log_guard() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        days text := current_setting('platform.audit_retention_days', true);
      BEGIN
        IF TG_OP = 'DELETE' AND coalesce(days, '') <> '' AND OLD.at < now() - make_interval(days => days::int) THEN
          RETURN OLD;
        END IF;
        RAISE EXCEPTION 'platform.audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(`
      CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON platform.audit_log
      FOR EACH ROW EXECUTE FUNCTION platform.audit_log_guard()`);
    await q.query(`
      CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON platform.audit_log
      FOR EACH STATEMENT EXECUTE FUNCTION platform.audit_log_guard()`);
    await q.query(`
      CREATE FUNCTION platform.sweep_audit_log(retention_days integer) RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        deleted integer;
      BEGIN
        PERFORM set_config('platform.audit_retention_days', retention_days::text, true);
        DELETE FROM platform.audit_log WHERE at < now() - make_interval(days => retention_days);
        GET DIAGNOSTICS deleted = ROW_COUNT;
        PERFORM set_config('platform.audit_retention_days', '', true);
        RETURN deleted;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE platform.audit_log`);
    await q.query(`DROP FUNCTION platform.sweep_audit_log(integer)`);
    await q.query(`DROP FUNCTION platform.audit_log_guard()`);
  }
}
