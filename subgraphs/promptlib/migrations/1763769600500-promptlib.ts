import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The prompt library's schema. Prompts, fragments and chains are a parent row (the name, the
 * latest version, a version counter that never goes back) plus one row per version. Only the
 * latest version may change in place: a trigger refuses content changes to a superseded one.
 */
export class Promptlib1763769600500 implements MigrationInterface {
  name = 'Promptlib1763769600500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SCHEMA IF NOT EXISTS promptlib`);
    const slug = (col: string) => `CHECK (${col} ~ '^[a-z0-9]([a-z0-9_-]{0,98}[a-z0-9])?$')`;

    // ---- prompts --------------------------------------------------------------------------
    await q.query(`
      CREATE TABLE promptlib.prompts (
        prompt_id text PRIMARY KEY ${slug('prompt_id')},
        latest_version integer NOT NULL CHECK (latest_version >= 1),
        version_seq integer NOT NULL CHECK (version_seq >= latest_version),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX prompts_created_idx ON promptlib.prompts (created_at DESC, prompt_id)`);
    await q.query(`
      CREATE TABLE promptlib.prompt_versions (
        prompt_id text NOT NULL REFERENCES promptlib.prompts(prompt_id) ON DELETE CASCADE,
        version integer NOT NULL CHECK (version >= 1),
        template text NOT NULL CHECK (length(template) BETWEEN 1 AND 100000),
        description text NOT NULL,
        variables text[] NOT NULL DEFAULT '{}',
        metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
        status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft','active','archived')),
        fragment_refs text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (prompt_id, version)
      )`);
    // renderForAgent: the newest active version of one prompt.
    await q.query(`CREATE INDEX prompt_versions_active_idx ON promptlib.prompt_versions (prompt_id, version DESC) WHERE status = 'active'`);
    await q.query(`CREATE INDEX prompt_versions_fragments_idx ON promptlib.prompt_versions USING gin (fragment_refs)`);
    await q.query(`
      CREATE TABLE promptlib.prompt_pins (
        prompt_id text NOT NULL,
        environment text NOT NULL CHECK (environment ~ '^[a-z][a-z0-9_-]{0,49}$'),
        version integer NOT NULL,
        promoted_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (prompt_id, environment),
        FOREIGN KEY (prompt_id, version) REFERENCES promptlib.prompt_versions(prompt_id, version) ON DELETE CASCADE
      )`);

    // ---- fragments ------------------------------------------------------------------------
    await q.query(`
      CREATE TABLE promptlib.fragments (
        fragment_id text PRIMARY KEY ${slug('fragment_id')},
        type text NOT NULL CHECK (type IN ('role','constraints','examples','context','format')),
        latest_version integer NOT NULL CHECK (latest_version >= 1),
        version_seq integer NOT NULL CHECK (version_seq >= latest_version),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX fragments_created_idx ON promptlib.fragments (created_at DESC, fragment_id)`);
    await q.query(`
      CREATE TABLE promptlib.fragment_versions (
        fragment_id text NOT NULL REFERENCES promptlib.fragments(fragment_id) ON DELETE CASCADE,
        version integer NOT NULL CHECK (version >= 1),
        content text NOT NULL CHECK (length(content) BETWEEN 1 AND 100000),
        description text NOT NULL DEFAULT '',
        metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
        fragment_refs text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (fragment_id, version)
      )`);
    await q.query(`CREATE INDEX fragment_versions_fragments_idx ON promptlib.fragment_versions USING gin (fragment_refs)`);

    // ---- chains ---------------------------------------------------------------------------
    await q.query(`
      CREATE TABLE promptlib.chains (
        chain_id text PRIMARY KEY ${slug('chain_id')},
        latest_version integer NOT NULL CHECK (latest_version >= 1),
        version_seq integer NOT NULL CHECK (version_seq >= latest_version),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX chains_created_idx ON promptlib.chains (created_at DESC, chain_id)`);
    await q.query(`
      CREATE TABLE promptlib.chain_versions (
        chain_id text NOT NULL REFERENCES promptlib.chains(chain_id) ON DELETE CASCADE,
        version integer NOT NULL CHECK (version >= 1),
        description text NOT NULL,
        steps jsonb NOT NULL CHECK (jsonb_typeof(steps) = 'array' AND jsonb_array_length(steps) >= 1),
        metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
        prompt_ids text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (chain_id, version)
      )`);
    await q.query(`CREATE INDEX chain_versions_prompts_idx ON promptlib.chain_versions USING gin (prompt_ids)`);
    await q.query(`
      CREATE TABLE promptlib.chain_executions (
        execution_id uuid PRIMARY KEY,
        chain_id text NOT NULL REFERENCES promptlib.chains(chain_id) ON DELETE CASCADE,
        chain_version integer NOT NULL,
        status text NOT NULL DEFAULT 'running' CHECK (status IN ('running','completed','failed')),
        current_step integer NOT NULL CHECK (current_step >= 1),
        total_steps integer NOT NULL CHECK (total_steps >= 1 AND current_step <= total_steps),
        initial_variables jsonb NOT NULL CHECK (jsonb_typeof(initial_variables) = 'object'),
        model text NOT NULL,
        temperature real NOT NULL CHECK (temperature >= 0 AND temperature <= 1),
        max_tokens integer NOT NULL CHECK (max_tokens >= 1),
        completed_steps jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(completed_steps) = 'array'),
        result jsonb,
        error jsonb,
        total_tokens integer NOT NULL DEFAULT 0 CHECK (total_tokens >= 0),
        total_latency_ms integer NOT NULL DEFAULT 0 CHECK (total_latency_ms >= 0),
        key_id uuid,
        started_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        failed_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (chain_id, chain_version) REFERENCES promptlib.chain_versions(chain_id, version) ON DELETE CASCADE,
        CHECK ((status = 'completed') = (completed_at IS NOT NULL AND result IS NOT NULL)),
        CHECK ((status = 'failed') = (failed_at IS NOT NULL AND error IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX chain_executions_chain_idx ON promptlib.chain_executions (chain_id, started_at DESC)`);

    // ---- test runs and A/B tests ------------------------------------------------------------
    await q.query(`
      CREATE TABLE promptlib.ab_tests (
        test_id uuid PRIMARY KEY,
        prompt_a jsonb NOT NULL,
        prompt_b jsonb NOT NULL,
        test_cases jsonb NOT NULL CHECK (jsonb_typeof(test_cases) = 'array'),
        model text NOT NULL,
        temperature real NOT NULL CHECK (temperature >= 0 AND temperature <= 1),
        max_tokens integer NOT NULL CHECK (max_tokens >= 1),
        results jsonb NOT NULL,
        recommendation text NOT NULL CHECK (recommendation IN ('promptA','promptB')),
        reason text NOT NULL,
        key_id uuid,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE promptlib.prompt_tests (
        test_id uuid PRIMARY KEY,
        prompt_id text NOT NULL,
        version integer NOT NULL,
        source text NOT NULL CHECK (source IN ('test','ab','chain')),
        ab_test_id uuid REFERENCES promptlib.ab_tests(test_id) ON DELETE SET NULL,
        execution_id uuid REFERENCES promptlib.chain_executions(execution_id) ON DELETE SET NULL,
        variables jsonb NOT NULL DEFAULT '{}',
        model text NOT NULL,
        temperature real NOT NULL CHECK (temperature >= 0 AND temperature <= 1),
        max_tokens integer NOT NULL CHECK (max_tokens >= 1),
        output text,
        tokens_used integer NOT NULL DEFAULT 0 CHECK (tokens_used >= 0),
        latency_ms integer NOT NULL DEFAULT 0 CHECK (latency_ms >= 0),
        success boolean NOT NULL,
        error jsonb,
        key_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (prompt_id, version) REFERENCES promptlib.prompt_versions(prompt_id, version) ON DELETE CASCADE,
        CHECK (success = (error IS NULL))
      )`);
    await q.query(`CREATE INDEX prompt_tests_prompt_idx ON promptlib.prompt_tests (prompt_id, version)`);

    // ---- superseded versions are immutable -------------------------------------------------
    // Only content is frozen: archiving a whole prompt still changes every version's status.
    const freeze = (table: string, parent: string, key: string, columns: string[]) => `
      CREATE FUNCTION promptlib.${table}_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF (${columns.map((c) => `NEW.${c} IS DISTINCT FROM OLD.${c}`).join(' OR ')})
           AND OLD.version < (SELECT latest_version FROM promptlib.${parent} WHERE ${key} = OLD.${key}) THEN
          RAISE EXCEPTION 'version % of % is superseded and cannot change', OLD.version, OLD.${key}
            USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER ${table}_immutable BEFORE UPDATE ON promptlib.${table}
        FOR EACH ROW EXECUTE FUNCTION promptlib.${table}_immutable();`;
    await q.query(freeze('prompt_versions', 'prompts', 'prompt_id', ['template', 'description', 'variables', 'metadata']));
    await q.query(freeze('fragment_versions', 'fragments', 'fragment_id', ['content', 'description', 'metadata']));
    await q.query(freeze('chain_versions', 'chains', 'chain_id', ['description', 'steps', 'metadata']));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP SCHEMA promptlib CASCADE`);
  }
}
