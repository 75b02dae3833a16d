import { page, Where, type PageWindow } from '../../kernel/db/page';
import { count, exec, one, rows, type CamelCased, type Queryable } from '../../kernel/db/rows';
import type { PromptStatus } from './prompt.types';

/**
 * How prompts are kept: the prompt in promptlib.prompts (its latest version and the version
 * counter), its versions in prompt_versions, the versions served to environments in prompt_pins.
 * Every statement on these tables is here; the services decide when (and in which transaction).
 */

/** A row of promptlib.prompt_versions. */
export interface PromptVersionRow {
  prompt_id: string;
  version: number;
  template: string;
  description: string;
  variables: string[];
  metadata: Record<string, unknown>;
  status: PromptStatus;
  fragment_refs: string[];
  created_at: Date;
  updated_at: Date;
}

/** One version of a prompt, as the services use it. */
export type PromptVersion = CamelCased<PromptVersionRow>;

/** A version being written: the database stamps the times. */
export type NewPromptVersion = Omit<PromptVersion, 'createdAt' | 'updatedAt'>;

/** The version asked for, with what the prompt's view adds from promptlib.prompts. */
export interface PromptViewRow extends PromptVersionRow {
  prompt_created_at: Date;
  latest_version: number;
  /** Every version number of the prompt, ascending (null when none, which a joined row never has). */
  versions: number[] | null;
}

/** A row of the list: the prompt with its latest version. */
export interface PromptListRow {
  prompt_id: string;
  prompt_created_at: Date;
  version: number;
  status: PromptStatus;
  description: string;
  metadata: Record<string, unknown>;
  updated_at: Date;
}

/** A row of promptlib.prompt_pins, as the prompt's view lists them. */
export interface PinRow {
  environment: string;
  version: number;
  promoted_at: Date;
}

/** What a writer locks: the latest version and the highest version number ever given. */
export interface PromptLock {
  latest_version: number;
  version_seq: number;
}

export interface PromptListFilter {
  domain: string | null;
  agentId: string | null;
  status: string | null;
  tag: string | null;
}

const VERSION_COLUMNS = `v.prompt_id, v.version, v.template, v.description, v.variables, v.metadata, v.status, v.fragment_refs, v.created_at, v.updated_at`;

export function toVersion(r: PromptVersionRow): PromptVersion {
  return {
    promptId: r.prompt_id,
    version: r.version,
    template: r.template,
    description: r.description,
    variables: r.variables,
    metadata: r.metadata,
    status: r.status,
    fragmentRefs: r.fragment_refs,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

// ---- reads ------------------------------------------------------------------------------------

/** The prompt with one version: `version`, else the one pinned to `environment`, else the latest. */
export function viewRow(q: Queryable, promptId: string, version: number | null, environment: string | null): Promise<PromptViewRow | undefined> {
  return one<PromptViewRow>(
    q,
    `SELECT p.created_at AS prompt_created_at, p.latest_version, ${VERSION_COLUMNS},
            (SELECT array_agg(version ORDER BY version) FROM promptlib.prompt_versions WHERE prompt_id = p.prompt_id) AS versions
       FROM promptlib.prompts p
       JOIN promptlib.prompt_versions v ON v.prompt_id = p.prompt_id
        AND v.version = CASE
              WHEN $2::int IS NOT NULL THEN $2::int
              WHEN $3::text IS NOT NULL THEN (SELECT version FROM promptlib.prompt_pins WHERE prompt_id = p.prompt_id AND environment = $3)
              ELSE p.latest_version END
      WHERE p.prompt_id = $1`,
    [promptId, version, environment],
  );
}

/** The prompt's pins, by environment name. */
export function pinsOf(q: Queryable, promptId: string): Promise<PinRow[]> {
  return rows<PinRow>(q, `SELECT environment, version, promoted_at FROM promptlib.prompt_pins WHERE prompt_id = $1 ORDER BY environment`, [promptId]);
}

/** One page of prompts (their latest versions matching `filter`), newest first, and how many match in all. */
export function list(q: Queryable, filter: PromptListFilter, window: PageWindow): Promise<{ total: number; rows: PromptListRow[] }> {
  const where = new Where()
    .equals(`v.metadata->>'domain'`, filter.domain)
    .equals(`v.metadata->>'agentId'`, filter.agentId)
    .equals('v.status', filter.status)
    .and(filter.tag, (p) => `v.metadata->'tags' @> jsonb_build_array(${p}::text)`);
  return page<PromptListRow>(
    q,
    {
      select: 'p.prompt_id, p.created_at AS prompt_created_at, v.version, v.status, v.description, v.metadata, v.updated_at',
      from: `FROM promptlib.prompts p JOIN promptlib.prompt_versions v ON v.prompt_id = p.prompt_id AND v.version = p.latest_version ${where}`,
      orderBy: 'p.created_at DESC, p.prompt_id',
      params: where.params,
    },
    window,
    { count: 'apart' },
  );
}

/** One version of the prompt (`version` null: the latest). */
export async function findVersion(q: Queryable, promptId: string, version: number | null): Promise<PromptVersion | undefined> {
  const row = await one<PromptVersionRow>(
    q,
    `SELECT ${VERSION_COLUMNS} FROM promptlib.prompts p
       JOIN promptlib.prompt_versions v ON v.prompt_id = p.prompt_id AND v.version = coalesce($2::int, p.latest_version)
      WHERE p.prompt_id = $1`,
    [promptId, version],
  );
  return row ? toVersion(row) : undefined;
}

/** The prompt's newest active version (the one agents run). */
export async function newestActive(q: Queryable, promptId: string): Promise<PromptVersion | undefined> {
  const row = await one<PromptVersionRow>(
    q,
    `SELECT ${VERSION_COLUMNS} FROM promptlib.prompt_versions v
      WHERE v.prompt_id = $1 AND v.status = 'active' ORDER BY v.version DESC LIMIT 1`,
    [promptId],
  );
  return row ? toVersion(row) : undefined;
}

/** The version pinned to `environment`. */
export async function pinnedVersion(q: Queryable, promptId: string, environment: string): Promise<PromptVersion | undefined> {
  const row = await one<PromptVersionRow>(
    q,
    `SELECT ${VERSION_COLUMNS} FROM promptlib.prompt_pins pin
       JOIN promptlib.prompt_versions v ON v.prompt_id = pin.prompt_id AND v.version = pin.version
      WHERE pin.prompt_id = $1 AND pin.environment = $2`,
    [promptId, environment],
  );
  return row ? toVersion(row) : undefined;
}

/** The ids among `promptIds` that name a prompt. */
export async function existingIds(q: Queryable, promptIds: string[]): Promise<string[]> {
  const found = await rows<{ prompt_id: string }>(q, `SELECT prompt_id FROM promptlib.prompts WHERE prompt_id = ANY($1::text[])`, [promptIds]);
  return found.map((r) => r.prompt_id);
}

export async function exists(q: Queryable, promptId: string): Promise<boolean> {
  return (await rows(q, `SELECT 1 FROM promptlib.prompts WHERE prompt_id = $1`, [promptId])).length > 0;
}

// ---- writes (inside the caller's transaction) ---------------------------------------------------

/** Locks the prompt's row for the rest of the transaction; undefined when there is no such prompt. */
export function lockForUpdate(q: Queryable, promptId: string): Promise<PromptLock | undefined> {
  return one<PromptLock>(q, `SELECT latest_version, version_seq FROM promptlib.prompts WHERE prompt_id = $1 FOR UPDATE`, [promptId]);
}

/** A new prompt at version 1 (a taken name is a unique violation). */
export async function insertPrompt(q: Queryable, promptId: string): Promise<void> {
  await exec(q, `INSERT INTO promptlib.prompts (prompt_id, latest_version, version_seq) VALUES ($1, 1, 1)`, [promptId]);
}

/** A new prompt at version 1 unless the name is taken; whether it was inserted. */
export async function insertPromptIfMissing(q: Queryable, promptId: string): Promise<boolean> {
  const inserted = await rows(
    q,
    `INSERT INTO promptlib.prompts (prompt_id, latest_version, version_seq) VALUES ($1, 1, 1) ON CONFLICT DO NOTHING RETURNING prompt_id`,
    [promptId],
  );
  return inserted.length > 0;
}

export async function insertVersion(q: Queryable, v: NewPromptVersion): Promise<void> {
  await exec(
    q,
    `INSERT INTO promptlib.prompt_versions (prompt_id, version, template, description, variables, metadata, status, fragment_refs)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [v.promptId, v.version, v.template, v.description, v.variables, JSON.stringify(v.metadata), v.status, v.fragmentRefs],
  );
}

/** Rewrites a version in place (the latest: the immutability trigger refuses any other). */
export async function updateVersion(q: Queryable, v: NewPromptVersion): Promise<void> {
  await exec(
    q,
    `UPDATE promptlib.prompt_versions
        SET template = $3, description = $4, variables = $5, metadata = $6, status = $7, fragment_refs = $8, updated_at = now()
      WHERE prompt_id = $1 AND version = $2`,
    [v.promptId, v.version, v.template, v.description, v.variables, JSON.stringify(v.metadata), v.status, v.fragmentRefs],
  );
}

/** Makes a newly inserted version the latest, and the highest number given. */
export async function advanceLatest(q: Queryable, promptId: string, version: number): Promise<void> {
  await exec(q, `UPDATE promptlib.prompts SET latest_version = $2, version_seq = $2, updated_at = now() WHERE prompt_id = $1`, [promptId, version]);
}

/** Makes an older version the latest again (after the latest was deleted); the counter stays. */
export async function setLatestVersion(q: Queryable, promptId: string, version: number): Promise<void> {
  await exec(q, `UPDATE promptlib.prompts SET latest_version = $2, updated_at = now() WHERE prompt_id = $1`, [promptId, version]);
}

export async function touch(q: Queryable, promptId: string): Promise<void> {
  await exec(q, `UPDATE promptlib.prompts SET updated_at = now() WHERE prompt_id = $1`, [promptId]);
}

/** Archives every version of the prompt not archived yet. */
export async function archiveAll(q: Queryable, promptId: string): Promise<void> {
  await exec(q, `UPDATE promptlib.prompt_versions SET status = 'archived', updated_at = now() WHERE prompt_id = $1 AND status <> 'archived'`, [promptId]);
}

export function countVersions(q: Queryable, promptId: string): Promise<number> {
  return count(q, `SELECT count(*)::int AS n FROM promptlib.prompt_versions WHERE prompt_id = $1`, [promptId]);
}

/** Deletes the prompt; its versions, pins and test runs go with it (ON DELETE CASCADE). */
export async function deleteById(q: Queryable, promptId: string): Promise<void> {
  await exec(q, `DELETE FROM promptlib.prompts WHERE prompt_id = $1`, [promptId]);
}

/** Deletes one version; whether it existed. */
export async function deleteVersion(q: Queryable, promptId: string, version: number): Promise<boolean> {
  const deleted = await rows(q, `DELETE FROM promptlib.prompt_versions WHERE prompt_id = $1 AND version = $2 RETURNING version`, [promptId, version]);
  return deleted.length > 0;
}

/** The highest version number left, null when the prompt has no version. */
export async function maxVersion(q: Queryable, promptId: string): Promise<number | null> {
  const row = await one<{ latest: number | null }>(q, `SELECT max(version) AS latest FROM promptlib.prompt_versions WHERE prompt_id = $1`, [promptId]);
  return row!.latest;
}

/** The version pinned to `environment` so far, if any. */
export async function pinOf(q: Queryable, promptId: string, environment: string): Promise<number | undefined> {
  const row = await one<{ version: number }>(q, `SELECT version FROM promptlib.prompt_pins WHERE prompt_id = $1 AND environment = $2`, [promptId, environment]);
  return row?.version;
}

/** Pins `version` to `environment` (replacing any earlier pin); when it was promoted. */
export async function pin(q: Queryable, promptId: string, environment: string, version: number): Promise<Date> {
  const row = await one<{ promoted_at: Date }>(
    q,
    `INSERT INTO promptlib.prompt_pins (prompt_id, environment, version) VALUES ($1, $2, $3)
     ON CONFLICT (prompt_id, environment) DO UPDATE SET version = EXCLUDED.version, promoted_at = now()
     RETURNING promoted_at`,
    [promptId, environment, version],
  );
  return row!.promoted_at;
}

export async function activate(q: Queryable, promptId: string, version: number): Promise<void> {
  await exec(q, `UPDATE promptlib.prompt_versions SET status = 'active', updated_at = now() WHERE prompt_id = $1 AND version = $2 AND status <> 'active'`, [
    promptId,
    version,
  ]);
}

export async function statusOf(q: Queryable, promptId: string, version: number): Promise<PromptStatus> {
  const row = await one<{ status: PromptStatus }>(q, `SELECT status FROM promptlib.prompt_versions WHERE prompt_id = $1 AND version = $2`, [promptId, version]);
  return row!.status;
}
