import type { DataSource, EntityManager } from 'typeorm';
import type { Principal } from '../../kernel/auth/principal';
import { rowsOf } from '../../kernel/db/rows';
import { AppError, errors, type FieldError } from '../../kernel/errors';
import { withTransaction } from '../../kernel/db/transaction';
import type { EventBus } from '../../kernel/events';
import { UUID } from '../../kernel/ids';
import { defineLoader, groupedByKey, type LoaderDefinition } from '../../kernel/loaders';
import { TOPIC } from '../../kernel/topics';

/**
 * The rules of the feature-request service (spec 3, section B; CONTRACT.md section 8).
 *
 * - Projects: anyone reads public ones; the owner changes and deletes, and names moderators.
 * - Requests: submitted `pending` when the project requires approval, else `approved`; anonymous
 *   submissions only where `allow_anonymous`. The author, the owner and moderators edit and
 *   delete; the owner and moderators change the status: pending → approved | rejected,
 *   approved → completed | rejected, rejected → approved, completed → approved (reopen).
 * - Votes (approved requests only): the first creates, the other type changes it, the same type
 *   again is 409 `already_voted`, delete removes; `votes_count` = up − down, recomputed from the
 *   votes under the request's row lock, so concurrent votes never drift.
 * - Comments: the author edits; the author, the owner and moderators delete.
 * Every change to a request publishes TOPIC.feedbackRequestUpdated (the requestUpdated subscription).
 */

export const STATUSES = ['pending', 'approved', 'rejected', 'completed'] as const;
export const PRIORITIES = ['low', 'medium', 'high', 'critical'] as const;
const TRANSITIONS: Record<string, string[]> = {
  pending: ['approved', 'rejected'],
  approved: ['completed', 'rejected'],
  rejected: ['approved'],
  completed: ['approved'],
};
const SLUG = /^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/;
const SORTS: Record<string, string> = { created_at: 'created_at', votes_count: 'votes_count', title: 'title' };

export interface UserRow {
  id: string;
  email: string;
  username: string;
  name: string;
  avatar: string | null;
  createdAt: Date;
}
export interface ProjectRow {
  id: string;
  name: string;
  description: string;
  slug: string;
  ownerId: string;
  settings: { isPublic: boolean; allowAnonymous: boolean; requireApproval: boolean };
  stats: { totalRequests: number; totalVotes: number; totalComments: number };
  createdAt: Date;
}
export interface RequestRow {
  id: string;
  projectId: string;
  authorId: string | null;
  title: string;
  description: string;
  status: string;
  category: string | null;
  tags: string[];
  priority: string;
  votesCount: number;
  commentsCount: number;
  createdAt: Date;
  updatedAt: Date;
}
export interface VoteSummary {
  totalVotes: number;
  upVotes: number;
  downVotes: number;
  userVote: string;
  userVoteId: string;
}
export interface CommentRow {
  id: string;
  requestId: string;
  authorId: string;
  body: string;
  createdAt: Date;
  updatedAt: Date;
}

const PROJECT = `p.id, p.name, p.description, p.slug, p.owner_id, p.is_public, p.allow_anonymous, p.require_approval, p.created_at,
  (SELECT count(*)::int FROM feedback.requests r WHERE r.project_id = p.id) AS total_requests,
  (SELECT coalesce(sum(r.up_votes + r.down_votes), 0)::int FROM feedback.requests r WHERE r.project_id = p.id) AS total_votes,
  (SELECT coalesce(sum(r.comments_count), 0)::int FROM feedback.requests r WHERE r.project_id = p.id) AS total_comments`;
const REQUEST = `id, project_id, author_id, title, description, status, category, tags, priority, votes_count, comments_count, created_at, updated_at`;

const toUser = (r: any): UserRow => ({ id: r.id, email: r.email, username: r.username, name: r.name, avatar: r.avatar, createdAt: r.created_at });
const toProject = (r: any): ProjectRow => ({
  id: r.id,
  name: r.name,
  description: r.description,
  slug: r.slug,
  ownerId: r.owner_id,
  settings: { isPublic: r.is_public, allowAnonymous: r.allow_anonymous, requireApproval: r.require_approval },
  stats: { totalRequests: r.total_requests, totalVotes: r.total_votes, totalComments: r.total_comments },
  createdAt: r.created_at,
});
const toRequest = (r: any): RequestRow => ({
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
});
const toComment = (r: any): CommentRow => ({
  id: r.id,
  requestId: r.request_id,
  authorId: r.author_id,
  body: r.body,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** The signed-in user, or 401. */
export function userOf(p: Principal): string {
  if (p.kind === 'user' && p.service === 'feedback') return p.userId;
  throw new AppError('unauthorized', 'Sign in: Authorization: Bearer <token from /auth/github or /auth/google>');
}
const optionalUser = (p: Principal) => (p.kind === 'user' && p.service === 'feedback' ? p.userId : null);
const forbidden = (message: string) => new AppError('forbidden', message);

export class FeedbackService {
  constructor(
    private readonly db: DataSource,
    private readonly events: EventBus,
  ) {}

  // ---- users --------------------------------------------------------------------------------

  async upsertUser(u: {
    provider: 'github' | 'google';
    providerId: string;
    email: string;
    username: string;
    name: string;
    avatar: string | null;
  }): Promise<UserRow> {
    const [row] = await this.db.query(
      `INSERT INTO feedback.users (provider, provider_id, email, username, name, avatar) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (provider, provider_id) DO UPDATE SET email = EXCLUDED.email, username = EXCLUDED.username, name = EXCLUDED.name,
         avatar = EXCLUDED.avatar, updated_at = now()
       RETURNING id, email, username, name, avatar, created_at`,
      [u.provider, u.providerId, u.email, u.username.slice(0, 100), u.name.slice(0, 200), u.avatar],
    );
    return toUser(row);
  }

  async user(id: string): Promise<UserRow> {
    const [row] = UUID.test(id) ? await this.db.query(`SELECT id, email, username, name, avatar, created_at FROM feedback.users WHERE id = $1`, [id]) : [];
    if (!row) throw errors.notFound('user', id);
    return toUser(row);
  }

  // ---- projects -----------------------------------------------------------------------------

  async createProject(p: Principal, input: { name?: string; description?: string; slug?: string }): Promise<ProjectRow> {
    const owner = userOf(p);
    const problems: FieldError[] = [];
    text(problems, 'name', input.name, 200, true);
    text(problems, 'description', input.description, 5000, true);
    if (!input.slug) problems.push({ field: 'slug', message: 'slug is required' });
    else if (!SLUG.test(input.slug)) problems.push({ field: 'slug', message: 'slug must be lowercase letters, digits and "-", 1 to 64 characters' });
    if (problems.length) throw errors.validation(problems);
    try {
      const [{ id }] = await this.db.query(`INSERT INTO feedback.projects (name, description, slug, owner_id) VALUES ($1, $2, $3, $4) RETURNING id`, [
        input.name,
        input.description,
        input.slug,
        owner,
      ]);
      return this.project(p, id);
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw errors.validation([{ field: 'slug', message: `the slug "${input.slug}" is already taken` }]);
      throw err;
    }
  }

  /** A project: public ones for anyone, private ones for their owner and moderators. */
  async project(p: Principal, id: string, m: EntityManager = this.db.manager): Promise<ProjectRow> {
    const [row] = UUID.test(id) ? await m.query(`SELECT ${PROJECT} FROM feedback.projects p WHERE p.id = $1`, [id]) : [];
    if (!row) throw errors.notFound('project', id);
    const project = toProject(row);
    if (!project.settings.isPublic && !(await this.isStaff(project, optionalUser(p), m))) throw errors.notFound('project', id);
    return project;
  }

  async publicProjects(limit: number, offset: number): Promise<{ projects: ProjectRow[]; total: number }> {
    page(limit, offset, 100);
    const rows = await this.db.query(
      `SELECT ${PROJECT}, count(*) OVER ()::int AS n FROM feedback.projects p WHERE p.is_public ORDER BY p.created_at DESC, p.id LIMIT $1 OFFSET $2`,
      [limit, offset],
    );
    return { projects: rows.map(toProject), total: rows[0]?.n ?? 0 };
  }

  async myProjects(p: Principal): Promise<ProjectRow[]> {
    const rows = await this.db.query(`SELECT ${PROJECT} FROM feedback.projects p WHERE p.owner_id = $1 ORDER BY p.created_at DESC`, [userOf(p)]);
    return rows.map(toProject);
  }

  async updateProject(
    p: Principal,
    id: string,
    input: { name?: string | null; description?: string | null; settings?: Partial<ProjectRow['settings']> | null },
  ): Promise<ProjectRow> {
    const project = await this.ownerOnly(p, id);
    const problems: FieldError[] = [];
    text(problems, 'name', input.name, 200, false);
    text(problems, 'description', input.description, 5000, false);
    if (problems.length) throw errors.validation(problems);
    const s = { ...project.settings, ...(input.settings ?? {}) };
    await this.db.query(
      `UPDATE feedback.projects SET name = $2, description = $3, is_public = $4, allow_anonymous = $5, require_approval = $6, updated_at = now() WHERE id = $1`,
      [id, input.name ?? project.name, input.description ?? project.description, s.isPublic, s.allowAnonymous, s.requireApproval],
    );
    return this.project(p, id);
  }

  async deleteProject(p: Principal, id: string): Promise<{ id: string }> {
    await this.ownerOnly(p, id);
    await this.db.query(`DELETE FROM feedback.projects WHERE id = $1`, [id]);
    return { id };
  }

  async addModerator(p: Principal, projectId: string, userId: string): Promise<ProjectRow> {
    await this.ownerOnly(p, projectId);
    await this.user(userId);
    await this.db.query(`INSERT INTO feedback.moderators (project_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [projectId, userId]);
    return this.project(p, projectId);
  }

  /** Each project's moderators, in the order they were named (one query for a whole list of projects). */
  readonly moderatorsByProject: LoaderDefinition<string, string[]> = defineLoader('feedback.moderatorsByProject', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length
      ? await this.db.query(`SELECT project_id, user_id FROM feedback.moderators WHERE project_id = ANY($1::uuid[]) ORDER BY project_id, created_at`, [ids])
      : [];
    return groupedByKey(
      keys,
      rows,
      (r: any) => r.project_id as string,
      (r: any) => r.user_id as string,
    );
  });

  // ---- requests -----------------------------------------------------------------------------

  async submit(
    p: Principal,
    projectId: string,
    input: { title?: string; description?: string; category?: string | null; tags?: string[] | null; priority?: string | null },
  ): Promise<RequestRow> {
    const project = await this.project(p, projectId);
    const author = optionalUser(p);
    if (!author && !project.settings.allowAnonymous) userOf(p);
    const problems: FieldError[] = [];
    text(problems, 'title', input.title, 200, true);
    text(problems, 'description', input.description, 10000, true);
    checkRequestFields(problems, input);
    if (problems.length) throw errors.validation(problems);
    const status = project.settings.requireApproval ? 'pending' : 'approved';
    const [row] = await this.db.query(
      `INSERT INTO feedback.requests (project_id, author_id, title, description, status, category, tags, priority)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${REQUEST}`,
      [projectId, author, input.title, input.description, status, input.category ?? null, input.tags ?? [], input.priority ?? 'medium'],
    );
    return toRequest(row);
  }

  async request(p: Principal, id: string): Promise<RequestRow> {
    const [row] = UUID.test(id) ? await this.db.query(`SELECT ${REQUEST} FROM feedback.requests WHERE id = $1`, [id]) : [];
    if (!row) throw errors.notFound('request', id);
    await this.project(p, row.project_id); // a private project's requests are as hidden as the project
    return toRequest(row);
  }

  async list(
    p: Principal,
    projectId: string,
    q: { limit: number; offset: number; status?: string | null; category?: string | null; sort?: string | null; order?: string | null },
  ) {
    await this.project(p, projectId);
    page(q.limit, q.offset, 100);
    const problems: FieldError[] = [];
    if (q.status && !(STATUSES as readonly string[]).includes(q.status)) problems.push({ field: 'status', message: `must be one of ${STATUSES.join(', ')}` });
    if (q.sort && !SORTS[q.sort]) problems.push({ field: 'sort', message: `must be one of ${Object.keys(SORTS).join(', ')}` });
    if (q.order && q.order !== 'asc' && q.order !== 'desc') problems.push({ field: 'order', message: 'must be asc or desc' });
    if (problems.length) throw errors.validation(problems);
    const sort = SORTS[q.sort ?? 'created_at']!;
    const order = q.order ?? (sort === 'title' ? 'asc' : 'desc');
    const rows = await this.db.query(
      `SELECT ${REQUEST}, count(*) OVER ()::int AS n FROM feedback.requests
        WHERE project_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR category = $3)
        ORDER BY ${sort} ${order}, id LIMIT $4 OFFSET $5`,
      [projectId, q.status ?? null, q.category ?? null, q.limit, q.offset],
    );
    return { requests: rows.map(toRequest), total: rows[0]?.n ?? 0 };
  }

  async updateRequest(
    p: Principal,
    id: string,
    input: { title?: string | null; description?: string | null; category?: string | null; tags?: string[] | null; priority?: string | null },
  ): Promise<RequestRow> {
    const current = await this.editable(p, id);
    const problems: FieldError[] = [];
    text(problems, 'title', input.title, 200, false);
    text(problems, 'description', input.description, 10000, false);
    checkRequestFields(problems, input);
    if (problems.length) throw errors.validation(problems);
    const [row] = rowsOf(
      await this.db.query(
        `UPDATE feedback.requests SET title = $2, description = $3, category = $4, tags = $5, priority = $6, updated_at = now() WHERE id = $1 RETURNING ${REQUEST}`,
        [
          id,
          input.title ?? current.title,
          input.description ?? current.description,
          input.category !== undefined ? input.category : current.category,
          input.tags ?? current.tags,
          input.priority ?? current.priority,
        ],
      ),
    );
    return this.changed(toRequest(row));
  }

  async deleteRequest(p: Principal, id: string): Promise<{ id: string }> {
    await this.editable(p, id);
    await this.db.query(`DELETE FROM feedback.requests WHERE id = $1`, [id]);
    return { id };
  }

  async setStatus(p: Principal, id: string, status: string): Promise<RequestRow> {
    const current = await this.request(p, id);
    const project = await this.project(p, current.projectId);
    if (!(await this.isStaff(project, userOf(p)))) throw forbidden('Only the project owner and its moderators change a request’s status');
    if (!(STATUSES as readonly string[]).includes(status)) throw errors.field('status', `must be one of ${STATUSES.join(', ')}`);
    if (!TRANSITIONS[current.status]!.includes(status)) {
      throw errors.conflict(`A ${current.status} request cannot become ${status}`, { status: current.status, allowed: TRANSITIONS[current.status] });
    }
    const [row] = rowsOf(
      await this.db.query(`UPDATE feedback.requests SET status = $3, updated_at = now() WHERE id = $1 AND status = $2 RETURNING ${REQUEST}`, [
        id,
        current.status,
        status,
      ]),
    );
    if (!row) throw errors.conflict('The request changed meanwhile: read it again');
    return this.changed(toRequest(row));
  }

  // ---- votes --------------------------------------------------------------------------------

  async vote(p: Principal, requestId: string, type: string): Promise<VoteSummary> {
    const user = userOf(p);
    if (type !== 'upvote' && type !== 'downvote') throw errors.field('type', 'must be upvote or downvote');
    await this.request(p, requestId);
    await withTransaction(this.db, async (tx) => {
      const m = tx.manager;
      const [req] = await m.query(`SELECT status FROM feedback.requests WHERE id = $1 FOR UPDATE`, [requestId]);
      if (req.status !== 'approved')
        throw new AppError('request_not_approved', `Votes are taken on approved requests only (this one is ${req.status})`, { status: req.status });
      const [existing] = await m.query(`SELECT type FROM feedback.votes WHERE request_id = $1 AND user_id = $2`, [requestId, user]);
      if (existing?.type === type) throw new AppError('already_voted', `You already gave this request an ${type}`, { type });
      await m.query(
        `INSERT INTO feedback.votes (request_id, user_id, type) VALUES ($1, $2, $3) ON CONFLICT (request_id, user_id) DO UPDATE SET type = EXCLUDED.type, created_at = now()`,
        [requestId, user, type],
      );
      await recount(m, requestId);
      tx.afterCommit(() => this.announce(requestId));
    });
    return this.summary(p, requestId);
  }

  async unvote(p: Principal, requestId: string): Promise<VoteSummary> {
    const user = userOf(p);
    await this.request(p, requestId);
    await withTransaction(this.db, async (tx) => {
      const m = tx.manager;
      await m.query(`SELECT 1 FROM feedback.requests WHERE id = $1 FOR UPDATE`, [requestId]);
      const gone = rowsOf(await m.query(`DELETE FROM feedback.votes WHERE request_id = $1 AND user_id = $2 RETURNING 1`, [requestId, user]));
      if (!gone.length) throw errors.notFound('vote', `${requestId}/${user}`);
      await recount(m, requestId);
      tx.afterCommit(() => this.announce(requestId));
    });
    return this.summary(p, requestId);
  }

  async summary(p: Principal, requestId: string): Promise<VoteSummary> {
    await this.request(p, requestId);
    const user = optionalUser(p);
    const [s] = await this.db.query(
      `SELECT r.up_votes, r.down_votes, v.type, v.id FROM feedback.requests r
         LEFT JOIN feedback.votes v ON v.request_id = r.id AND v.user_id = $2 WHERE r.id = $1`,
      [requestId, user],
    );
    return { totalVotes: s.up_votes + s.down_votes, upVotes: s.up_votes, downVotes: s.down_votes, userVote: s.type ?? '', userVoteId: s.id ?? '' };
  }

  // ---- comments -----------------------------------------------------------------------------

  async comment(p: Principal, requestId: string, body: string): Promise<CommentRow> {
    const user = userOf(p);
    await this.request(p, requestId);
    const problems: FieldError[] = [];
    text(problems, 'body', body, 5000, true);
    if (problems.length) throw errors.validation(problems);
    const row = await withTransaction(this.db, async (tx) => {
      const m = tx.manager;
      await m.query(`SELECT 1 FROM feedback.requests WHERE id = $1 FOR UPDATE`, [requestId]);
      const [c] = await m.query(`INSERT INTO feedback.comments (request_id, author_id, body) VALUES ($1, $2, $3) RETURNING *`, [requestId, user, body]);
      await recount(m, requestId);
      tx.afterCommit(() => this.announce(requestId));
      return c;
    });
    return toComment(row);
  }

  async comments(p: Principal, requestId: string): Promise<CommentRow[]> {
    await this.request(p, requestId);
    return (await this.db.query(`SELECT * FROM feedback.comments WHERE request_id = $1 ORDER BY created_at, id`, [requestId])).map(toComment);
  }

  async editComment(p: Principal, id: string, body: string): Promise<CommentRow> {
    const c = await this.commentRow(p, id);
    if (c.authorId !== userOf(p)) throw forbidden('Only its author edits a comment');
    const problems: FieldError[] = [];
    text(problems, 'body', body, 5000, true);
    if (problems.length) throw errors.validation(problems);
    const [row] = rowsOf(await this.db.query(`UPDATE feedback.comments SET body = $2, updated_at = now() WHERE id = $1 RETURNING *`, [id, body]));
    await this.changed(await this.requestRow(c.requestId));
    return toComment(row);
  }

  async deleteComment(p: Principal, id: string): Promise<{ id: string }> {
    const c = await this.commentRow(p, id);
    const user = userOf(p);
    if (c.authorId !== user) {
      const project = await this.project(p, (await this.requestRow(c.requestId)).projectId);
      if (!(await this.isStaff(project, user))) throw forbidden('Only its author, the project owner and moderators delete a comment');
    }
    await withTransaction(this.db, async (tx) => {
      const m = tx.manager;
      await m.query(`SELECT 1 FROM feedback.requests WHERE id = $1 FOR UPDATE`, [c.requestId]);
      await m.query(`DELETE FROM feedback.comments WHERE id = $1`, [id]);
      await recount(m, c.requestId);
      tx.afterCommit(() => this.announce(c.requestId));
    });
    return { id };
  }

  // ---- helpers ------------------------------------------------------------------------------

  private async commentRow(p: Principal, id: string): Promise<CommentRow> {
    const [row] = UUID.test(id) ? await this.db.query(`SELECT * FROM feedback.comments WHERE id = $1`, [id]) : [];
    if (!row) throw errors.notFound('comment', id);
    await this.request(p, row.request_id);
    return toComment(row);
  }

  private async requestRow(id: string): Promise<RequestRow> {
    const [row] = await this.db.query(`SELECT ${REQUEST} FROM feedback.requests WHERE id = $1`, [id]);
    return toRequest(row);
  }

  private async isStaff(project: ProjectRow, user: string | null, m: EntityManager = this.db.manager): Promise<boolean> {
    if (!user) return false;
    if (project.ownerId === user) return true;
    return (await m.query(`SELECT 1 FROM feedback.moderators WHERE project_id = $1 AND user_id = $2`, [project.id, user])).length > 0;
  }

  private async ownerOnly(p: Principal, id: string): Promise<ProjectRow> {
    const user = userOf(p);
    const project = await this.project(p, id);
    if (project.ownerId !== user) throw forbidden('Only the project owner may do this');
    return project;
  }

  /** The author, the project owner and moderators may edit and delete a request. */
  private async editable(p: Principal, id: string): Promise<RequestRow> {
    const user = userOf(p);
    const req = await this.request(p, id);
    if (req.authorId === user) return req;
    if (await this.isStaff(await this.project(p, req.projectId), user)) return req;
    throw forbidden('Only the author, the project owner and moderators may change this request');
  }

  private async changed(req: RequestRow): Promise<RequestRow> {
    await this.announce(req.id);
    return req;
  }

  /** Subscribers refetch the request. Inside a transaction it is sent by `tx.afterCommit`, never before the COMMIT. */
  private announce(requestId: string): Promise<void> {
    return this.events.publish(TOPIC.feedbackRequestUpdated, { requestId });
  }
}

/** The request's counters from the rows they count (the caller holds the request's lock). */
async function recount(m: EntityManager, requestId: string): Promise<void> {
  await m.query(
    `UPDATE feedback.requests SET
       up_votes = (SELECT count(*) FROM feedback.votes WHERE request_id = $1 AND type = 'upvote'),
       down_votes = (SELECT count(*) FROM feedback.votes WHERE request_id = $1 AND type = 'downvote'),
       comments_count = (SELECT count(*) FROM feedback.comments WHERE request_id = $1)
     WHERE id = $1`,
    [requestId],
  );
}

function text(problems: FieldError[], field: string, value: unknown, max: number, required: boolean): void {
  if (value === undefined || value === null || value === '') {
    if (required) problems.push({ field, message: `${field} is required` });
    return;
  }
  if (typeof value !== 'string' || !value.trim() || value.length > max) problems.push({ field, message: `${field} must be text of 1 to ${max} characters` });
}

function checkRequestFields(problems: FieldError[], input: { category?: string | null; tags?: string[] | null; priority?: string | null }): void {
  if (input.priority != null && !(PRIORITIES as readonly string[]).includes(input.priority))
    problems.push({ field: 'priority', message: `must be one of ${PRIORITIES.join(', ')}` });
  if (input.category != null) text(problems, 'category', input.category, 100, false);
  if (input.tags != null && (input.tags.length > 20 || input.tags.some((t) => typeof t !== 'string' || !t || t.length > 50))) {
    problems.push({ field: 'tags', message: 'at most 20 tags of 1 to 50 characters' });
  }
}

function page(limit: number, offset: number, max: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw errors.field('limit', `must be an integer from 1 to ${max}`);
  if (!Number.isInteger(offset) || offset < 0) throw errors.field('offset', 'must be an integer of at least 0');
}
