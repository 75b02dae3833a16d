import { page, Where, type PageWindow } from '../../kernel/db/page';
import { exec, one, rowById, rows, type CamelCased, type Queryable } from '../../kernel/db/rows';

/**
 * Where feedback.requests, feedback.votes and feedback.comments are read and written. A
 * request's counters (up_votes, down_votes, comments_count; votes_count is generated from them)
 * are recomputed by `recount` from the rows they count, under the request's row lock
 * (`lockForUpdate` / `lockStatus`) that the caller's transaction holds.
 */

/** The columns a list may be sorted by (the only text put into a statement rather than bound). */
export const SORTS = ['created_at', 'votes_count', 'title'] as const;
export type RequestSort = (typeof SORTS)[number];

interface RequestRow {
  id: string;
  project_id: string;
  author_id: string | null;
  title: string;
  description: string;
  status: string;
  category: string | null;
  tags: string[];
  priority: string;
  votes_count: number;
  comments_count: number;
  created_at: Date;
  updated_at: Date;
  /** Raised by every change of the row (a vote, a comment, an edit, a status). */
  version: number;
}

interface CommentRow {
  id: string;
  request_id: string;
  author_id: string;
  body: string;
  created_at: Date;
  updated_at: Date;
}

interface SummaryRow {
  up_votes: number;
  down_votes: number;
  /** The caller's vote, when there is a caller and a vote. */
  type: string | null;
  id: string | null;
}

export type RequestView = CamelCased<RequestRow>;

/** The values of a request its author (or staff) writes. */
export interface RequestFields {
  title: string;
  description: string;
  category: string | null;
  tags: string[];
  priority: string;
}

export interface VoteSummary {
  totalVotes: number;
  upVotes: number;
  downVotes: number;
  userVote: string;
  userVoteId: string;
}

export interface CommentView {
  id: string;
  requestId: string;
  authorId: string;
  body: string;
  createdAt: Date;
  updatedAt: Date;
}

const REQUEST = `id, project_id, author_id, title, description, status, category, tags, priority, votes_count, comments_count, created_at, updated_at,
  version::float8 AS version`;

const toView = (r: RequestRow): RequestView => ({
  id: r.id,
  projectId: r.project_id,
  authorId: r.author_id,
  title: r.title,
  description: r.description,
  status: r.status,
  category: r.category,
  tags: r.tags,
  priority: r.priority,
  votesCount: r.votes_count,
  commentsCount: r.comments_count,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  version: r.version,
});

const toComment = (r: CommentRow): CommentView => ({
  id: r.id,
  requestId: r.request_id,
  authorId: r.author_id,
  body: r.body,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

// ---- requests -------------------------------------------------------------------------------

export async function insert(q: Queryable, projectId: string, authorId: string | null, status: string, v: RequestFields): Promise<RequestView> {
  const row = await one<RequestRow>(
    q,
    `INSERT INTO feedback.requests (project_id, author_id, title, description, status, category, tags, priority)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${REQUEST}`,
    [projectId, authorId, v.title, v.description, status, v.category, v.tags, v.priority],
  );
  return toView(row!);
}

/** The request `id` names, whoever may see it, or 404 `resource_not_found` (also for an id that is no UUID). */
export async function byId(q: Queryable, id: string): Promise<RequestView> {
  return toView(await rowById<RequestRow>(q, 'request', id, `SELECT ${REQUEST} FROM feedback.requests WHERE id = $1`));
}

/** A page of a project's requests (of one status and category when given) and their total. */
export async function list(
  q: Queryable,
  filter: { projectId: string; status: string | null; category: string | null },
  order: { sort: RequestSort; direction: 'asc' | 'desc' },
  window: PageWindow,
): Promise<{ requests: RequestView[]; total: number }> {
  const where = new Where([filter.projectId]).always('project_id = $1').equals('status', filter.status).equals('category', filter.category);
  const found = await page<RequestRow>(
    q,
    { select: REQUEST, from: `FROM feedback.requests ${where}`, orderBy: `${order.sort} ${order.direction}, id`, params: where.params },
    window,
  );
  return { requests: found.rows.map(toView), total: found.total };
}

export async function update(q: Queryable, id: string, v: RequestFields): Promise<RequestView> {
  const row = await one<RequestRow>(
    q,
    `UPDATE feedback.requests SET title = $2, description = $3, category = $4, tags = $5, priority = $6, updated_at = now() WHERE id = $1 RETURNING ${REQUEST}`,
    [id, v.title, v.description, v.category, v.tags, v.priority],
  );
  return toView(row!);
}

/** Moves the request from status `from` to `to`; undefined when it is no longer in `from`. */
export async function setStatus(q: Queryable, id: string, from: string, to: string): Promise<RequestView | undefined> {
  const row = await one<RequestRow>(q, `UPDATE feedback.requests SET status = $3, updated_at = now() WHERE id = $1 AND status = $2 RETURNING ${REQUEST}`, [
    id,
    from,
    to,
  ]);
  return row && toView(row);
}

/** Deletes the request; its votes and comments go with it. */
/** Deletes a request: its version as deleted, undefined when there was none. */
export async function deleteById(q: Queryable, id: string): Promise<number | undefined> {
  return (await one<{ version: number }>(q, `DELETE FROM feedback.requests WHERE id = $1 RETURNING version::float8 AS version`, [id]))?.version;
}

/** Locks the request's row until the transaction `m` ends (its counters are about to be recounted). */
export async function lockForUpdate(m: Queryable, id: string): Promise<void> {
  await exec(m, `SELECT 1 FROM feedback.requests WHERE id = $1 FOR UPDATE`, [id]);
}

/** `lockForUpdate`, reading the request's status under the lock. */
export async function lockStatus(m: Queryable, id: string): Promise<string> {
  const row = await one<{ status: string }>(m, `SELECT status FROM feedback.requests WHERE id = $1 FOR UPDATE`, [id]);
  return row!.status;
}

/** The request's counters from the rows they count (the caller holds the request's lock). */
export async function recount(m: Queryable, requestId: string): Promise<void> {
  await exec(
    m,
    `UPDATE feedback.requests SET
       up_votes = (SELECT count(*) FROM feedback.votes WHERE request_id = $1 AND type = 'upvote'),
       down_votes = (SELECT count(*) FROM feedback.votes WHERE request_id = $1 AND type = 'downvote'),
       comments_count = (SELECT count(*) FROM feedback.comments WHERE request_id = $1)
     WHERE id = $1`,
    [requestId],
  );
}

// ---- votes ----------------------------------------------------------------------------------

/** The type of `userId`'s vote on the request, if any. */
export async function voteOf(m: Queryable, requestId: string, userId: string): Promise<string | undefined> {
  return (await one<{ type: string }>(m, `SELECT type FROM feedback.votes WHERE request_id = $1 AND user_id = $2`, [requestId, userId]))?.type;
}

/** Casts `userId`'s vote, or changes its type. */
export async function upsertVote(m: Queryable, requestId: string, userId: string, type: string): Promise<void> {
  await exec(
    m,
    `INSERT INTO feedback.votes (request_id, user_id, type) VALUES ($1, $2, $3) ON CONFLICT (request_id, user_id) DO UPDATE SET type = EXCLUDED.type, created_at = now()`,
    [requestId, userId, type],
  );
}

/** Removes `userId`'s vote; false when there was none. */
export async function deleteVote(m: Queryable, requestId: string, userId: string): Promise<boolean> {
  return (await rows(m, `DELETE FROM feedback.votes WHERE request_id = $1 AND user_id = $2 RETURNING 1`, [requestId, userId])).length > 0;
}

/** The request's vote counts, and the vote of `userId` (none without a user). */
export async function voteSummary(q: Queryable, requestId: string, userId: string | null): Promise<VoteSummary> {
  const s = await one<SummaryRow>(
    q,
    `SELECT r.up_votes, r.down_votes, v.type, v.id FROM feedback.requests r
       LEFT JOIN feedback.votes v ON v.request_id = r.id AND v.user_id = $2 WHERE r.id = $1`,
    [requestId, userId],
  );
  return { totalVotes: s!.up_votes + s!.down_votes, upVotes: s!.up_votes, downVotes: s!.down_votes, userVote: s!.type ?? '', userVoteId: s!.id ?? '' };
}

// ---- comments -------------------------------------------------------------------------------

export async function insertComment(m: Queryable, requestId: string, authorId: string, body: string): Promise<CommentView> {
  const row = await one<CommentRow>(m, `INSERT INTO feedback.comments (request_id, author_id, body) VALUES ($1, $2, $3) RETURNING *`, [
    requestId,
    authorId,
    body,
  ]);
  return toComment(row!);
}

/** The comment `id` names, or 404 `resource_not_found` (also for an id that is no UUID). */
export async function commentById(q: Queryable, id: string): Promise<CommentView> {
  return toComment(await rowById<CommentRow>(q, 'comment', id, `SELECT * FROM feedback.comments WHERE id = $1`));
}

/** A request's comments, oldest first. */
export async function comments(q: Queryable, requestId: string): Promise<CommentView[]> {
  return (await rows<CommentRow>(q, `SELECT * FROM feedback.comments WHERE request_id = $1 ORDER BY created_at, id`, [requestId])).map(toComment);
}

export async function updateComment(q: Queryable, id: string, body: string): Promise<CommentView> {
  const row = await one<CommentRow>(q, `UPDATE feedback.comments SET body = $2, updated_at = now() WHERE id = $1 RETURNING *`, [id, body]);
  return toComment(row!);
}

export async function deleteComment(m: Queryable, id: string): Promise<void> {
  await exec(m, `DELETE FROM feedback.comments WHERE id = $1`, [id]);
}
