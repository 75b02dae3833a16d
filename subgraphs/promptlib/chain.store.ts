import { page, Where, type PageWindow } from '../../kernel/db/page';
import { exec, one, rows, type Queryable } from '../../kernel/db/rows';
import type { StoredStep } from './chain.types';

/**
 * How chains are kept: the chain in promptlib.chains (its latest version and the version
 * counter), its versions in chain_versions (the steps, and the prompts they run for the usage
 * counts). Their runs are chain-execution.store.ts's.
 */

/** A row of promptlib.chain_versions. */
export interface ChainVersionRow {
  chain_id: string;
  version: number;
  description: string;
  steps: StoredStep[];
  metadata: Record<string, unknown>;
  prompt_ids: string[];
  created_at: Date;
  updated_at: Date;
}

/** The version asked for, with what the chain's view adds from promptlib.chains. */
export interface ChainViewRow extends ChainVersionRow {
  latest_version: number;
  chain_created_at: Date;
}

/** A row of the list: the chain with its latest version and how its executions went. */
export interface ChainListRow {
  chain_id: string;
  created_at: Date;
  version: number;
  description: string;
  metadata: Record<string, unknown>;
  steps_count: number;
  executions: number;
  completed: number;
  failed: number;
}

/** A version being written: the database stamps the times; prompt_ids come from the steps. */
export interface NewChainVersion {
  chainId: string;
  version: number;
  description: string;
  steps: StoredStep[];
  metadata: Record<string, unknown>;
}

function promptIds(steps: StoredStep[]): string[] {
  return [...new Set(steps.map((s) => s.promptId))];
}

// ---- reads ------------------------------------------------------------------------------------

/** The chain with one version (`version` null: the latest). */
export function viewRow(q: Queryable, chainId: string, version: number | null): Promise<ChainViewRow | undefined> {
  return one<ChainViewRow>(
    q,
    `SELECT c.latest_version, c.created_at AS chain_created_at, cv.*
       FROM promptlib.chains c
       JOIN promptlib.chain_versions cv ON cv.chain_id = c.chain_id AND cv.version = coalesce($2::int, c.latest_version)
      WHERE c.chain_id = $1`,
    [chainId, version],
  );
}

export async function exists(q: Queryable, chainId: string): Promise<boolean> {
  return (await rows(q, `SELECT 1 FROM promptlib.chains WHERE chain_id = $1`, [chainId])).length > 0;
}

/** One page of chains (their latest versions, in `domain` if given), newest first, and how many match in all. */
export function list(q: Queryable, domain: string | null, window: PageWindow): Promise<{ total: number; rows: ChainListRow[] }> {
  const where = new Where().equals(`cv.metadata->>'domain'`, domain);
  return page<ChainListRow>(
    q,
    {
      select: `c.chain_id, c.created_at, cv.version, cv.description, cv.metadata, jsonb_array_length(cv.steps) AS steps_count,
              (SELECT count(*)::int FROM promptlib.chain_executions e WHERE e.chain_id = c.chain_id) AS executions,
              (SELECT count(*)::int FROM promptlib.chain_executions e WHERE e.chain_id = c.chain_id AND e.status = 'completed') AS completed,
              (SELECT count(*)::int FROM promptlib.chain_executions e WHERE e.chain_id = c.chain_id AND e.status = 'failed') AS failed`,
      from: `FROM promptlib.chains c JOIN promptlib.chain_versions cv ON cv.chain_id = c.chain_id AND cv.version = c.latest_version ${where}`,
      orderBy: 'c.created_at DESC, c.chain_id',
      params: where.params,
    },
    window,
    { count: 'apart' },
  );
}

// ---- writes (inside the caller's transaction) ---------------------------------------------------

/** Locks the chain's row for the rest of the transaction; undefined when there is no such chain. */
export function lockForUpdate(q: Queryable, chainId: string): Promise<{ latest_version: number; version_seq: number } | undefined> {
  return one(q, `SELECT latest_version, version_seq FROM promptlib.chains WHERE chain_id = $1 FOR UPDATE`, [chainId]);
}

/** One version as stored (read inside the writer's transaction). */
export function versionRow(q: Queryable, chainId: string, version: number): Promise<ChainVersionRow | undefined> {
  return one<ChainVersionRow>(q, `SELECT * FROM promptlib.chain_versions WHERE chain_id = $1 AND version = $2`, [chainId, version]);
}

/** A new chain at version 1 (a taken name is a unique violation). */
export async function insertChain(q: Queryable, chainId: string): Promise<void> {
  await exec(q, `INSERT INTO promptlib.chains (chain_id, latest_version, version_seq) VALUES ($1, 1, 1)`, [chainId]);
}

export async function insertVersion(q: Queryable, v: NewChainVersion): Promise<void> {
  await exec(q, `INSERT INTO promptlib.chain_versions (chain_id, version, description, steps, metadata, prompt_ids) VALUES ($1, $2, $3, $4, $5, $6)`, [
    v.chainId,
    v.version,
    v.description,
    JSON.stringify(v.steps),
    JSON.stringify(v.metadata),
    promptIds(v.steps),
  ]);
}

/** Rewrites a version in place (the latest: the immutability trigger refuses any other). */
export async function updateVersion(q: Queryable, v: NewChainVersion): Promise<void> {
  await exec(
    q,
    `UPDATE promptlib.chain_versions SET description = $3, steps = $4, metadata = $5, prompt_ids = $6, updated_at = now()
      WHERE chain_id = $1 AND version = $2`,
    [v.chainId, v.version, v.description, JSON.stringify(v.steps), JSON.stringify(v.metadata), promptIds(v.steps)],
  );
}

/** Makes a newly inserted version the latest, and the highest number given. */
export async function advanceLatest(q: Queryable, chainId: string, version: number): Promise<void> {
  await exec(q, `UPDATE promptlib.chains SET latest_version = $2, version_seq = $2, updated_at = now() WHERE chain_id = $1`, [chainId, version]);
}

export async function touch(q: Queryable, chainId: string): Promise<void> {
  await exec(q, `UPDATE promptlib.chains SET updated_at = now() WHERE chain_id = $1`, [chainId]);
}

/** Deletes the chain with its versions and executions (ON DELETE CASCADE); whether it existed. */
export async function deleteById(q: Queryable, chainId: string): Promise<boolean> {
  const deleted = await rows(q, `DELETE FROM promptlib.chains WHERE chain_id = $1 RETURNING chain_id`, [chainId]);
  return deleted.length > 0;
}
