import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The feature-request service: users signed in through GitHub or Google,
 * projects with their moderators, requests, one vote per user and request, comments. The
 * counters a list sorts by (votes, comments) are kept on the request row and always recomputed
 * from the rows they count, under the request's lock.
 */
export class Feedback1763769601400 implements MigrationInterface {
  name = 'Feedback1763769601400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA IF NOT EXISTS feedback`);
    await q.query(`
      CREATE TABLE feedback.users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        provider text NOT NULL CHECK (provider IN ('github','google')),
        provider_id text NOT NULL,
        email text NOT NULL,
        username text NOT NULL,
        name text NOT NULL,
        avatar text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (provider, provider_id)
      )`);
    await q.query(`
      CREATE TABLE feedback.projects (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        description text NOT NULL CHECK (length(description) BETWEEN 1 AND 5000),
        slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$'),
        owner_id uuid NOT NULL REFERENCES feedback.users(id),
        is_public boolean NOT NULL DEFAULT true,
        allow_anonymous boolean NOT NULL DEFAULT false,
        require_approval boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX projects_public_idx ON feedback.projects (created_at DESC, id) WHERE is_public`);
    await q.query(`CREATE INDEX projects_owner_idx ON feedback.projects (owner_id)`);
    await q.query(`
      CREATE TABLE feedback.moderators (
        project_id uuid NOT NULL REFERENCES feedback.projects(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES feedback.users(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, user_id)
      )`);
    await q.query(`
      CREATE TABLE feedback.requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        project_id uuid NOT NULL REFERENCES feedback.projects(id) ON DELETE CASCADE,
        author_id uuid REFERENCES feedback.users(id) ON DELETE SET NULL,
        title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
        description text NOT NULL CHECK (length(description) BETWEEN 1 AND 10000),
        status text NOT NULL CHECK (status IN ('pending','approved','rejected','completed')),
        category text CHECK (length(category) <= 100),
        tags text[] NOT NULL DEFAULT '{}',
        priority text NOT NULL DEFAULT 'medium' CHECK (priority IN ('low','medium','high','critical')),
        up_votes integer NOT NULL DEFAULT 0 CHECK (up_votes >= 0),
        down_votes integer NOT NULL DEFAULT 0 CHECK (down_votes >= 0),
        votes_count integer GENERATED ALWAYS AS (up_votes - down_votes) STORED,
        comments_count integer NOT NULL DEFAULT 0 CHECK (comments_count >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX requests_project_idx ON feedback.requests (project_id, created_at DESC, id)`);
    await q.query(`
      CREATE TABLE feedback.votes (
        id uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
        request_id uuid NOT NULL REFERENCES feedback.requests(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES feedback.users(id) ON DELETE CASCADE,
        type text NOT NULL CHECK (type IN ('upvote','downvote')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (request_id, user_id)
      )`);
    await q.query(`
      CREATE TABLE feedback.comments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        request_id uuid NOT NULL REFERENCES feedback.requests(id) ON DELETE CASCADE,
        author_id uuid NOT NULL REFERENCES feedback.users(id) ON DELETE CASCADE,
        body text NOT NULL CHECK (length(body) BETWEEN 1 AND 5000),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX comments_request_idx ON feedback.comments (request_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP SCHEMA feedback CASCADE`);
  }
}
