import { page, Where, type PageWindow } from '../../kernel/db/page';
import { exec, one, prepared, rowById, rows, type Queryable } from '../../kernel/db/rows';

/**
 * Where the link service's tables are read and written: links.links (the links and their visit
 * counters), links.visits and links.attempts (the verification lockout). The service decides;
 * every statement is here, run on whatever `Queryable` the caller gives (the DataSource, or the
 * EntityManager of the transaction it holds).
 */

export const PROTECTION_TYPES = ['none', 'password', 'pin'] as const;
export type ProtectionType = (typeof PROTECTION_TYPES)[number];

/** A row of links.links as the service reads it (secret_hash only where verification needs it). */
export interface LinkRow {
  id: string;
  slug: string;
  url: string;
  owner_id: string;
  is_active: boolean;
  expires_at: Date | null;
  protection_type: ProtectionType;
  protection_hint: string | null;
  content_classification: string;
  visits: number;
  created_at: Date;
  updated_at: Date;
}

interface SecretRow extends LinkRow {
  secret_hash: string | null;
}

interface VisitRow {
  at: Date;
  referrer: string | null;
  user_agent: string | null;
  country: string | null;
}

/** A link as the service hands it on (its secret hash never leaves the store but to verify). */
export interface LinkView {
  id: string;
  slug: string;
  url: string;
  /** The owner: the id of the key that created the link (column owner_id), answered as Link.userId. */
  userId: string;
  isActive: boolean;
  expiresAt: Date | null;
  protectionType: ProtectionType;
  protectionHint: string | null;
  contentClassification: string;
  visits: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface Visit {
  at: Date;
  referrer: string | null;
  userAgent: string | null;
  country: string | null;
}

export interface PendingVisit extends Visit {
  linkId: string;
}

/** The columns of a link's stored values, as the service's writes give them. */
export interface LinkValues {
  url: string;
  protectionType: ProtectionType;
  secretHash: string | null;
  hint: string | null;
  classification: string;
  expiresAt: Date | null;
  isActive: boolean;
}

const COLUMNS = `id, slug, url, owner_id, is_active, expires_at, protection_type, protection_hint, content_classification, visits, created_at, updated_at`;

function toView(r: LinkRow): LinkView {
  return {
    id: r.id,
    slug: r.slug,
    url: r.url,
    userId: r.owner_id,
    isActive: r.is_active,
    expiresAt: r.expires_at,
    protectionType: r.protection_type,
    protectionHint: r.protection_hint,
    contentClassification: r.content_classification,
    visits: r.visits,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Inserts a link under `slug`; a taken slug fails with PostgreSQL's unique violation (23505). */
export async function insert(q: Queryable, slug: string, userId: string, v: LinkValues): Promise<LinkView> {
  const row = await one<LinkRow>(
    q,
    `INSERT INTO links.links (slug, url, owner_id, protection_type, secret_hash, protection_hint, content_classification, expires_at, is_active)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
    [slug, v.url, userId, v.protectionType, v.secretHash, v.hint, v.classification, v.expiresAt, v.isActive],
  );
  return toView(row!);
}

/** The link `id` names, or 404 `resource_not_found` (also for an id that is no UUID). */
export async function byId(q: Queryable, id: string): Promise<LinkView> {
  return toView(await rowById<LinkRow>(q, 'link', id, `SELECT ${COLUMNS} FROM links.links WHERE id = $1`));
}

/** The link with its secret hash, for verification alone; 404 like `byId`. */
export async function withSecret(q: Queryable, id: string): Promise<{ link: LinkView; secretHash: string | null }> {
  const row = await rowById<SecretRow>(q, 'link', id, `SELECT ${COLUMNS}, secret_hash FROM links.links WHERE id = $1`);
  return { link: toView(row), secretHash: row.secret_hash };
}

export async function bySlug(q: Queryable, slug: string): Promise<LinkView | null> {
  const row = await one<LinkRow>(q, `SELECT ${COLUMNS} FROM links.links WHERE slug = $1`, [slug]);
  return row ? toView(row) : null;
}

/** A page of the links of `userId` (every link when `all`), newest first, and their total. */
export async function list(q: Queryable, filter: { all: boolean; userId: string }, window: PageWindow) {
  // The owner scopes the list (a permission, not a filter): always a condition, whatever its value.
  const where = filter.all ? new Where() : new Where([filter.userId]).always('owner_id = $1');
  const found = await page<LinkRow>(q, { select: COLUMNS, from: `FROM links.links ${where}`, orderBy: 'created_at DESC, id', params: where.params }, window);
  return { links: found.rows.map(toView), total: found.total };
}

/**
 * Writes a link's values. A protection of none clears the hash and the hint; otherwise a new
 * hash (`secretHash` given) replaces the old one, and the hint and expiry change only when
 * `setHint` / `setExpiry` say the caller gave them.
 */
export async function update(q: Queryable, id: string, v: LinkValues, given: { setHint: boolean; setExpiry: boolean }): Promise<LinkView> {
  const row = await one<LinkRow>(
    q,
    `UPDATE links.links SET url = $2, protection_type = $3,
          secret_hash = CASE WHEN $3 = 'none' THEN NULL WHEN $4::text IS NOT NULL THEN $4 ELSE secret_hash END,
          protection_hint = CASE WHEN $3 = 'none' THEN NULL WHEN $5 THEN $6 ELSE protection_hint END,
          content_classification = $7, expires_at = CASE WHEN $8 THEN $9::timestamptz ELSE expires_at END, is_active = $10, updated_at = now()
    WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, v.url, v.protectionType, v.secretHash, given.setHint, v.hint, v.classification, given.setExpiry, v.expiresAt, v.isActive],
  );
  return toView(row!);
}

/**
 * Deletes the link (its visits and attempts go with it); when, by the database's clock. Run it in a
 * transaction: the visits go in a statement of their own after the link's row is gone, so that it
 * sees the visits of a batch that held the row until then (a batch that comes later finds no link).
 */
export async function deleteById(m: Queryable, id: string): Promise<Date> {
  const row = await one<{ deleted_at: Date }>(m, `DELETE FROM links.links WHERE id = $1 RETURNING now() AS deleted_at`, [id]);
  await exec(m, `DELETE FROM links.visits WHERE link_id = $1`, [id]);
  return row!.deleted_at;
}

/** A page of a link's visits, newest first. */
export async function visits(q: Queryable, linkId: string, limit: number, offset: number): Promise<Visit[]> {
  const found = await rows<VisitRow>(
    q,
    `SELECT at, referrer, user_agent, country FROM links.visits WHERE link_id = $1 ORDER BY at DESC, id DESC LIMIT $2 OFFSET $3`,
    [linkId, limit, offset],
  );
  return found.map((r) => ({ at: r.at, referrer: r.referrer, userAgent: r.user_agent, country: r.country }));
}

/**
 * Inserts a batch of visits and adds them to their links' counters, in one statement. The counters
 * are updated first, which locks each link's row (a link deleted meanwhile is skipped: no row, no
 * visit), and only the visits of the links updated are inserted: the check the visits' table does
 * without (no foreign key, one check per row), once per link and batch.
 */
export async function insertVisits(q: Queryable, batch: PendingVisit[]): Promise<void> {
  const column = <K extends keyof PendingVisit>(k: K) => batch.map((v) => v[k]);
  await exec(
    q,
    prepared(`WITH u AS (
       SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[]) AS u(link_id, at, referrer, user_agent, country)
     ), counted AS (
       UPDATE links.links l SET visits = l.visits + c.n
         FROM (SELECT link_id, count(*)::int AS n FROM u GROUP BY link_id) c
        WHERE l.id = c.link_id
       RETURNING l.id
     )
     INSERT INTO links.visits (link_id, at, referrer, user_agent, country)
     SELECT u.link_id, u.at, u.referrer, u.user_agent, u.country FROM u JOIN counted ON counted.id = u.link_id`),
    [column('linkId'), column('at'), column('referrer'), column('userAgent'), column('country')],
  );
}

// ---- verification attempts (the lockout) ----------------------------------------------------

/** Serialises the attempts of one address on one link until the transaction `m` ends. */
export async function lockAttempts(m: Queryable, linkId: string, ip: string): Promise<void> {
  await exec(m, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7270010))`, [`${linkId}|${ip}`]);
}

/** The failures of `ip` on the link inside the last `windowSeconds`, and when the oldest of them was. */
export async function failures(m: Queryable, linkId: string, ip: string, windowSeconds: number): Promise<{ n: number; oldest: Date | null }> {
  const row = await one<{ n: number; oldest: Date | null }>(
    m,
    `SELECT count(*)::int AS n, min(at) AS oldest FROM links.attempts
      WHERE link_id = $1 AND ip = $2 AND NOT success AND at > now() - $3::int * interval '1 second'`,
    [linkId, ip, windowSeconds],
  );
  return row!;
}

/** Records an attempt as failed (until `markSucceeded`); its id. */
export async function insertAttempt(m: Queryable, linkId: string, ip: string): Promise<string> {
  const row = await one<{ id: string }>(m, `INSERT INTO links.attempts (link_id, ip, success) VALUES ($1, $2, false) RETURNING id`, [linkId, ip]);
  return row!.id;
}

export async function markSucceeded(q: Queryable, attemptId: string): Promise<void> {
  await exec(q, `UPDATE links.attempts SET success = true WHERE id = $1`, [attemptId]);
}
