import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The infrastructure service. Passwords are argon2id hashes; webhook secrets
 * are encrypted (they sign every delivery). The database holds the rules that concurrency could
 * otherwise break: one e-mail per user, one slug per project, one service name per project, one
 * deployment in progress per service, one open alert per rule and subject.
 */
export class Infra1763769601500 implements MigrationInterface {
  name = 'Infra1763769601500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA IF NOT EXISTS infra`);
    await q.query(`
      CREATE TABLE infra.organizations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE infra.users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email text NOT NULL CHECK (length(email) <= 254 AND email = lower(email)),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        password_hash text NOT NULL,
        roles text[] NOT NULL CHECK (cardinality(roles) >= 1 AND roles <@ ARRAY['admin','maintainer','developer']),
        organization_id uuid NOT NULL REFERENCES infra.organizations(id),
        failed_logins integer NOT NULL DEFAULT 0,
        locked_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        last_login_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX users_email_key ON infra.users (email)`);
    await q.query(`
      CREATE TABLE infra.projects (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
        slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'),
        description text NOT NULL DEFAULT '' CHECK (length(description) <= 2000),
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','archived')),
        visibility text NOT NULL DEFAULT 'private' CHECK (visibility IN ('private','internal','public')),
        owner_id uuid REFERENCES infra.users(id) ON DELETE RESTRICT,
        repository_url text CHECK (repository_url ~ '^https?://' AND length(repository_url) <= 2048),
        repository_branch text NOT NULL DEFAULT 'main' CHECK (length(repository_branch) BETWEEN 1 AND 255),
        ci_enabled boolean NOT NULL DEFAULT false,
        ci_provider text CHECK (length(ci_provider) <= 100),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE infra.project_members (
        project_id uuid NOT NULL REFERENCES infra.projects(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES infra.users(id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('owner','contributor')),
        added_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, user_id)
      )`);
    await q.query(`CREATE INDEX project_members_user_idx ON infra.project_members (user_id)`);
    await q.query(`
      CREATE TABLE infra.services (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        project_id uuid NOT NULL REFERENCES infra.projects(id) ON DELETE RESTRICT,
        name text NOT NULL CHECK (name ~ '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'),
        type text NOT NULL CHECK (type IN ('backend','frontend','worker','database','cache')),
        image text NOT NULL CHECK (length(image) BETWEEN 1 AND 512),
        replicas integer NOT NULL CHECK (replicas BETWEEN 0 AND 100),
        strategy text NOT NULL DEFAULT 'rolling-update' CHECK (strategy IN ('rolling-update','recreate')),
        checked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (project_id, name)
      )`);
    await q.query(`
      CREATE TABLE infra.deployments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        service_id uuid NOT NULL REFERENCES infra.services(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('create','deploy','rollback')),
        status text NOT NULL DEFAULT 'in-progress' CHECK (status IN ('in-progress','success','failed')),
        strategy text NOT NULL CHECK (strategy IN ('rolling-update','recreate')),
        target_image text NOT NULL,
        previous_image text,
        replicas integer NOT NULL CHECK (replicas BETWEEN 0 AND 100),
        revision text,
        progress jsonb NOT NULL DEFAULT '{"updated":0,"ready":0,"available":0,"desired":0}',
        message text,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        CHECK ((status = 'in-progress') = (finished_at IS NULL))
      )`);
    await q.query(`CREATE INDEX deployments_service_idx ON infra.deployments (service_id, created_at DESC)`);
    await q.query(`CREATE UNIQUE INDEX deployments_one_in_progress ON infra.deployments (service_id) WHERE status = 'in-progress'`);
    await q.query(`
      CREATE TABLE infra.webhooks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        url text NOT NULL CHECK (length(url) <= 2048),
        events text[] NOT NULL CHECK (cardinality(events) >= 1 AND events <@ ARRAY['deployment.created','deployment.completed','alert.triggered']),
        active boolean NOT NULL DEFAULT true,
        secret_enc bytea NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE infra.alerts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        rule text NOT NULL CHECK (rule IN ('deployment_failed','node_not_ready','cpu_high','memory_high','disk_high')),
        subject text NOT NULL,
        severity text NOT NULL CHECK (severity IN ('warning','critical')),
        message text NOT NULL,
        data jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        resolved_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX alerts_one_open ON infra.alerts (rule, subject) WHERE resolved_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP SCHEMA infra CASCADE`);
  }
}
