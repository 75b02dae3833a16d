import { page, Where, type PageWindow } from '../../kernel/db/page';
import { exec, one, rows, type Queryable } from '../../kernel/db/rows';
import type { FragmentType } from './fragment.types';

/**
 * How fragments are kept: the fragment in promptlib.fragments (its type, latest version and
 * version counter), its versions in fragment_versions; and who embeds them: the usage counts
 * follow fragment_refs through fragments into the latest versions of prompts and chains.
 */

/** A row of promptlib.fragment_versions. */
export interface FragmentVersionRow {
  fragment_id: string;
  version: number;
  content: string;
  description: string;
  metadata: Record<string, unknown>;
  fragment_refs: string[];
  created_at: Date;
  updated_at: Date;
}

/** The version asked for, with what the fragment's view adds from promptlib.fragments. */
export interface FragmentViewRow extends FragmentVersionRow {
  type: FragmentType;
  latest_version: number;
  fragment_created_at: Date;
}

/** A row of the list: the fragment with its latest version. */
export interface FragmentListRow {
  fragment_id: string;
  type: FragmentType;
  created_at: Date;
  version: number;
  metadata: Record<string, unknown>;
}

/** A fragment version a template reaches; `newest` when it was asked for by bare id. */
export interface FragmentSourceRow {
  fragment_id: string;
  version: number;
  content: string;
  newest: boolean;
}

/** A version being written: the database stamps the times. */
export interface NewFragmentVersion {
  fragmentId: string;
  version: number;
  content: string;
  description: string;
  metadata: Record<string, unknown>;
  refs: string[];
}

export interface FragmentListFilter {
  type: FragmentType | null;
  domain: string | null;
  tag: string | null;
}

/** The fragments that embed any of the roots, the roots included, in any of their versions (cycle-safe). */
const CONTAINING = `
  containing(root, fragment_id) AS (
    SELECT r, r FROM unnest($1::text[]) AS r
    UNION
    SELECT c.root, fv.fragment_id FROM promptlib.fragment_versions fv JOIN containing c ON c.fragment_id = ANY(fv.fragment_refs)
  )`;

// ---- reads ------------------------------------------------------------------------------------

/** The fragment with one version (`version` null: the latest). */
export function viewRow(q: Queryable, fragmentId: string, version: number | null): Promise<FragmentViewRow | undefined> {
  return one<FragmentViewRow>(
    q,
    `SELECT f.type, f.latest_version, f.created_at AS fragment_created_at, fv.*
       FROM promptlib.fragments f
       JOIN promptlib.fragment_versions fv ON fv.fragment_id = f.fragment_id AND fv.version = coalesce($2::int, f.latest_version)
      WHERE f.fragment_id = $1`,
    [fragmentId, version],
  );
}

/** How many prompts and chains (their latest versions) embed the fragment, directly or through other fragments. */
export async function usage(q: Queryable, fragmentId: string): Promise<{ prompt_count: number; chain_count: number }> {
  const row = await one<{ prompt_count: number; chain_count: number }>(
    q,
    `WITH RECURSIVE ${CONTAINING},
     prompts AS (
       SELECT DISTINCT p.prompt_id FROM promptlib.prompts p
         JOIN promptlib.prompt_versions v ON v.prompt_id = p.prompt_id AND v.version = p.latest_version
        WHERE v.fragment_refs && (SELECT array_agg(fragment_id) FROM containing))
     SELECT (SELECT count(*)::int FROM prompts) AS prompt_count,
            (SELECT count(*)::int FROM promptlib.chains c
               JOIN promptlib.chain_versions cv ON cv.chain_id = c.chain_id AND cv.version = c.latest_version
              WHERE cv.prompt_ids && (SELECT coalesce(array_agg(prompt_id), '{}') FROM prompts)) AS chain_count`,
    [[fragmentId]],
  );
  return row!;
}

/** One page of fragments (their latest versions matching `filter`), newest first, and how many match in all. */
export function list(q: Queryable, filter: FragmentListFilter, window: PageWindow): Promise<{ total: number; rows: FragmentListRow[] }> {
  const where = new Where()
    .equals('f.type', filter.type)
    .equals(`fv.metadata->>'domain'`, filter.domain)
    .and(filter.tag, (p) => `fv.metadata->'tags' @> jsonb_build_array(${p}::text)`);
  return page<FragmentListRow>(
    q,
    {
      select: 'f.fragment_id, f.type, f.created_at, fv.version, fv.metadata',
      from: `FROM promptlib.fragments f JOIN promptlib.fragment_versions fv ON fv.fragment_id = f.fragment_id AND fv.version = f.latest_version ${where}`,
      orderBy: 'f.created_at DESC, f.fragment_id',
      params: where.params,
    },
    window,
    { count: 'apart' },
  );
}

/** For each of the fragments, how many prompts (latest versions) embed it, directly or not; unused ones are absent. */
export function promptCounts(q: Queryable, fragmentIds: string[]): Promise<{ root: string; n: number }[]> {
  return rows(
    q,
    `WITH RECURSIVE ${CONTAINING}
     SELECT c.root, count(DISTINCT p.prompt_id)::int AS n
       FROM containing c
       JOIN promptlib.prompt_versions v ON c.fragment_id = ANY(v.fragment_refs)
       JOIN promptlib.prompts p ON p.prompt_id = v.prompt_id AND p.latest_version = v.version
      GROUP BY c.root`,
    [fragmentIds],
  );
}

/** The prompts with an active version that embeds the fragment, directly or not, by id. */
export async function activePromptsUsing(q: Queryable, fragmentId: string): Promise<string[]> {
  const active = await rows<{ prompt_id: string }>(
    q,
    `WITH RECURSIVE ${CONTAINING}
     SELECT DISTINCT v.prompt_id FROM promptlib.prompt_versions v
      WHERE v.status = 'active' AND v.fragment_refs && (SELECT array_agg(fragment_id) FROM containing)
      ORDER BY v.prompt_id`,
    [[fragmentId]],
  );
  return active.map((a) => a.prompt_id);
}

export async function exists(q: Queryable, fragmentId: string): Promise<boolean> {
  return (await rows(q, `SELECT 1 FROM promptlib.fragments WHERE fragment_id = $1`, [fragmentId])).length > 0;
}

/**
 * One nesting level of the fragments templates reach: the latest versions of the `bare` ids,
 * and the exact versions asked for (`ids[i]` at `versions[i]`).
 */
export function sources(q: Queryable, bare: string[], ids: string[], versions: number[]): Promise<FragmentSourceRow[]> {
  return rows<FragmentSourceRow>(
    q,
    `SELECT fv.fragment_id, fv.version, fv.content, true AS newest
       FROM promptlib.fragments f
       JOIN promptlib.fragment_versions fv ON fv.fragment_id = f.fragment_id AND fv.version = f.latest_version
      WHERE f.fragment_id = ANY($1::text[])
     UNION ALL
     SELECT fv.fragment_id, fv.version, fv.content, false AS newest
       FROM promptlib.fragment_versions fv
       JOIN unnest($2::text[], $3::int[]) AS want(id, version) ON want.id = fv.fragment_id AND want.version = fv.version`,
    [bare, ids, versions],
  );
}

// ---- writes (inside the caller's transaction) ---------------------------------------------------

/** Locks the fragment's row for the rest of the transaction; undefined when there is no such fragment. */
export function lockForUpdate(q: Queryable, fragmentId: string): Promise<{ latest_version: number; version_seq: number } | undefined> {
  return one(q, `SELECT latest_version, version_seq FROM promptlib.fragments WHERE fragment_id = $1 FOR UPDATE`, [fragmentId]);
}

/** Locks the fragment's row (to delete it); whether it exists. */
export async function lockToDelete(q: Queryable, fragmentId: string): Promise<boolean> {
  return (await one(q, `SELECT 1 FROM promptlib.fragments WHERE fragment_id = $1 FOR UPDATE`, [fragmentId])) !== undefined;
}

/** One version as stored (read inside the writer's transaction). */
export function versionRow(q: Queryable, fragmentId: string, version: number): Promise<FragmentVersionRow | undefined> {
  return one<FragmentVersionRow>(q, `SELECT * FROM promptlib.fragment_versions WHERE fragment_id = $1 AND version = $2`, [fragmentId, version]);
}

/** A new fragment at version 1 (a taken name is a unique violation). */
export async function insertFragment(q: Queryable, fragmentId: string, type: FragmentType): Promise<void> {
  await exec(q, `INSERT INTO promptlib.fragments (fragment_id, type, latest_version, version_seq) VALUES ($1, $2, 1, 1)`, [fragmentId, type]);
}

export async function insertVersion(q: Queryable, v: NewFragmentVersion): Promise<void> {
  await exec(
    q,
    `INSERT INTO promptlib.fragment_versions (fragment_id, version, content, description, metadata, fragment_refs)
       VALUES ($1, $2, $3, $4, $5, $6)`,
    [v.fragmentId, v.version, v.content, v.description, JSON.stringify(v.metadata), v.refs],
  );
}

/** Rewrites a version in place (the latest: the immutability trigger refuses any other). */
export async function updateVersion(q: Queryable, v: NewFragmentVersion): Promise<void> {
  await exec(
    q,
    `UPDATE promptlib.fragment_versions SET content = $3, description = $4, metadata = $5, fragment_refs = $6, updated_at = now()
      WHERE fragment_id = $1 AND version = $2`,
    [v.fragmentId, v.version, v.content, v.description, JSON.stringify(v.metadata), v.refs],
  );
}

/** Makes a newly inserted version the latest, and the highest number given. */
export async function advanceLatest(q: Queryable, fragmentId: string, version: number): Promise<void> {
  await exec(q, `UPDATE promptlib.fragments SET latest_version = $2, version_seq = $2, updated_at = now() WHERE fragment_id = $1`, [fragmentId, version]);
}

export async function touch(q: Queryable, fragmentId: string): Promise<void> {
  await exec(q, `UPDATE promptlib.fragments SET updated_at = now() WHERE fragment_id = $1`, [fragmentId]);
}

/** Deletes the fragment with its versions (ON DELETE CASCADE). */
export async function deleteById(q: Queryable, fragmentId: string): Promise<void> {
  await exec(q, `DELETE FROM promptlib.fragments WHERE fragment_id = $1`, [fragmentId]);
}
