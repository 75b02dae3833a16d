import { randomBytes } from 'node:crypto';
import { auditResource } from '../../kernel/audit';
import { checkWindow } from '../../kernel/db/page';
import type { DataSource } from 'typeorm';
import type { Principal } from '../../kernel/auth/principal';
import type { Queryable } from '../../kernel/db/rows';
import { AppError, errors, type FieldError } from '../../kernel/errors';
import { withTransaction } from '../../kernel/db/transaction';
import type { EventBus } from '../../kernel/events';
import { UUID } from '../../kernel/ids';
import { defineLoader, groupedByKey, type LoaderDefinition } from '../../kernel/loaders';
import type { Logger } from '../../kernel/logger';
import { TOPIC } from '../../kernel/topics';
import * as projects from './project.store';
import type { ProjectView } from './project.store';
import type { Provider } from './oauth';
import * as requests from './request.store';
import { SORTS, type CommentView, type RequestSort, type RequestView, type VoteSummary } from './request.store';
import * as signins from './signin.store';
import * as users from './user.store';
import type { UserView } from './user.store';

/**
 * The rules of the feature-request service (who may do what: docs/feedback.md). A slug is taken once,
 * even by concurrent creates (409 `conflict`). `votes_count` is recomputed from the votes under the
 * request's row lock, so concurrent votes never drift. Every change to a request publishes
 * TOPIC.feedbackRequestUpdated.
 */

export const STATUSES = ['pending', 'approved', 'rejected', 'completed'] as const;
export const PRIORITIES = ['low', 'medium', 'high', 'critical'] as const;
const TRANSITIONS: Record<string, string[]> = {
  pending: ['approved', 'rejected'],
  approved: ['completed', 'rejected'],
  rejected: ['approved'],
  completed: ['approved'],
};
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const SLUG = /^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/;
/** How long a started sign-in may take to come back (the state cookie lives as long). */
export const SIGNIN_STATE_TTL_SECONDS = 600;

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
    private readonly logger: Logger,
  ) {}

  // ---- sign-in ------------------------------------------------------------------------------

  /** A new sign-in state for `provider`: random, kept (hashed) until used or expired. */
  async newSignInState(provider: Provider): Promise<string> {
    const state = randomBytes(24).toString('base64url');
    await signins.insertState(this.db, state, provider, SIGNIN_STATE_TTL_SECONDS);
    return state;
  }

  /** Whether `state` was issued here for `provider` and has not expired; it is used up either way, so a replay is refused. */
  async takeSignInState(provider: Provider, state: string): Promise<boolean> {
    return signins.takeState(this.db, state, provider);
  }

  // ---- users --------------------------------------------------------------------------------

  async upsertUser(u: {
    provider: 'github' | 'google';
    providerId: string;
    email: string;
    username: string;
    name: string;
    avatar: string | null;
  }): Promise<UserView> {
    return users.upsert(this.db, { ...u, username: u.username.slice(0, 100), name: u.name.slice(0, 200) });
  }

  /** The person a local sign-in names: email and name checked, the user created at first use (provider `local`). */
  async localUser(email: string | null | undefined, name: string | null | undefined): Promise<UserView> {
    const problems: FieldError[] = [];
    if (typeof email !== 'string' || !EMAIL.test(email) || email.length > 254) problems.push({ field: 'email', message: 'must be an email address' });
    text(problems, 'name', name, 200, true);
    if (problems.length) throw errors.validation(problems);
    const address = email!.trim().toLowerCase();
    return users.upsert(this.db, {
      provider: 'local',
      providerId: address,
      email: address,
      username: address.split('@')[0]!.slice(0, 100),
      name: name!.trim(),
      avatar: null,
    });
  }

  async user(id: string): Promise<UserView> {
    return users.byId(this.db, id);
  }

  // ---- projects -----------------------------------------------------------------------------

  async createProject(p: Principal, input: { name?: string; description?: string; slug?: string }): Promise<ProjectView> {
    const owner = userOf(p);
    const problems: FieldError[] = [];
    text(problems, 'name', input.name, 200, true);
    text(problems, 'description', input.description, 5000, true);
    if (!input.slug) problems.push({ field: 'slug', message: 'slug is required' });
    else if (!SLUG.test(input.slug)) problems.push({ field: 'slug', message: 'slug must be lowercase letters, digits and "-", 1 to 64 characters' });
    if (problems.length) throw errors.validation(problems);
    try {
      // The checks above required the name, the description and the slug.
      const id = await projects.insert(this.db, { name: input.name!, description: input.description!, slug: input.slug!, ownerId: owner });
      return this.project(p, id);
    } catch (err) {
      // Also what every loser of a race for the slug gets: the unique index decides, not an earlier read.
      if ((err as { code?: string }).code === '23505') throw errors.conflict(`The slug "${input.slug}" is already taken`, { field: 'slug', slug: input.slug });
      throw err;
    }
  }

  /** A project: public ones for anyone, private ones for their owner and moderators. */
  async project(p: Principal, id: string, m: Queryable = this.db): Promise<ProjectView> {
    const project = await projects.byId(m, id);
    if (!project.settings.isPublic && !(await this.isStaff(project, optionalUser(p), m))) throw errors.notFound('project', id);
    return project;
  }

  async publicProjects(limit: number, offset: number): Promise<{ projects: ProjectView[]; total: number }> {
    checkWindow({ limit, offset });
    return projects.publicPage(this.db, limit, offset);
  }

  async myProjects(p: Principal): Promise<ProjectView[]> {
    return projects.ofOwner(this.db, userOf(p));
  }

  async updateProject(
    p: Principal,
    id: string,
    input: { name?: string | null; description?: string | null; settings?: Partial<ProjectView['settings']> | null },
  ): Promise<ProjectView> {
    const project = await this.ownerOnly(p, id);
    const problems: FieldError[] = [];
    text(problems, 'name', input.name, 200, false);
    text(problems, 'description', input.description, 5000, false);
    if (problems.length) throw errors.validation(problems);
    const s = { ...project.settings, ...(input.settings ?? {}) };
    await projects.update(this.db, id, { name: input.name ?? project.name, description: input.description ?? project.description, settings: s });
    return this.project(p, id);
  }

  async deleteProject(p: Principal, id: string): Promise<{ id: string }> {
    await this.ownerOnly(p, id);
    await projects.deleteById(this.db, id);
    return { id };
  }

  async addModerator(p: Principal, projectId: string, userId: string): Promise<ProjectView> {
    await this.ownerOnly(p, projectId);
    await this.user(userId);
    // The entry names the project whose moderators changed, not the person named.
    auditResource('ProjectModerator', projectId);
    await projects.addModerator(this.db, projectId, userId);
    return this.project(p, projectId);
  }

  /** Each project's moderators, in the order they were named (one query for a whole list of projects). */
  readonly moderatorsByProject: LoaderDefinition<string, string[]> = defineLoader('feedback.moderatorsByProject', async (keys) => {
    const ids = keys.filter((id) => UUID.test(id));
    const rows = ids.length ? await projects.moderators(this.db, ids) : [];
    return groupedByKey(
      keys,
      rows,
      (r) => r.project_id,
      (r) => r.user_id,
    );
  });

  // ---- requests -----------------------------------------------------------------------------

  async submit(
    p: Principal,
    projectId: string,
    input: { title?: string; description?: string; category?: string | null; tags?: string[] | null; priority?: string | null },
  ): Promise<RequestView> {
    const project = await this.project(p, projectId);
    const author = optionalUser(p);
    if (!author && !project.settings.allowAnonymous) userOf(p);
    const problems: FieldError[] = [];
    text(problems, 'title', input.title, 200, true);
    text(problems, 'description', input.description, 10000, true);
    checkRequestFields(problems, input);
    if (problems.length) throw errors.validation(problems);
    const status = project.settings.requireApproval ? 'pending' : 'approved';
    // text() above required the title and the description.
    const request = await requests.insert(this.db, projectId, author, status, {
      title: input.title!,
      description: input.description!,
      category: input.category ?? null,
      tags: input.tags ?? [],
      priority: input.priority ?? 'medium',
    });
    return this.changed(request);
  }

  async request(p: Principal, id: string): Promise<RequestView> {
    const request = await requests.byId(this.db, id);
    await this.project(p, request.projectId); // a private project's requests are as hidden as the project
    return request;
  }

  async list(
    p: Principal,
    projectId: string,
    q: { limit: number; offset: number; status?: string | null; category?: string | null; sort?: string | null; order?: string | null },
  ) {
    await this.project(p, projectId);
    checkWindow(q);
    const problems: FieldError[] = [];
    if (q.status && !(STATUSES as readonly string[]).includes(q.status)) problems.push({ field: 'status', message: `must be one of ${STATUSES.join(', ')}` });
    if (q.sort && !(SORTS as readonly string[]).includes(q.sort)) problems.push({ field: 'sort', message: `must be one of ${SORTS.join(', ')}` });
    if (q.order && q.order !== 'asc' && q.order !== 'desc') problems.push({ field: 'order', message: 'must be asc or desc' });
    if (problems.length) throw errors.validation(problems);
    const sort = (q.sort ?? 'created_at') as RequestSort;
    const direction = (q.order ?? (sort === 'title' ? 'asc' : 'desc')) as 'asc' | 'desc';
    return requests.list(
      this.db,
      { projectId, status: q.status ?? null, category: q.category ?? null },
      { sort, direction },
      { limit: q.limit, offset: q.offset },
    );
  }

  async updateRequest(
    p: Principal,
    id: string,
    input: { title?: string | null; description?: string | null; category?: string | null; tags?: string[] | null; priority?: string | null },
  ): Promise<RequestView> {
    const current = await this.editable(p, id);
    const problems: FieldError[] = [];
    text(problems, 'title', input.title, 200, false);
    text(problems, 'description', input.description, 10000, false);
    checkRequestFields(problems, input);
    if (problems.length) throw errors.validation(problems);
    const request = await requests.update(this.db, id, {
      title: input.title ?? current.title,
      description: input.description ?? current.description,
      category: input.category !== undefined ? input.category : current.category,
      tags: input.tags ?? current.tags,
      priority: input.priority ?? current.priority,
    });
    return this.changed(request);
  }

  async deleteRequest(p: Principal, id: string): Promise<{ id: string }> {
    const request = await this.editable(p, id);
    const version = await requests.deleteById(this.db, id);
    // Live boards take it off: one version above the last they can have been sent.
    if (version !== undefined) await this.announce(request, { version: version + 1, deleted: true });
    return { id };
  }

  async setStatus(p: Principal, id: string, status: string): Promise<RequestView> {
    const current = await this.request(p, id);
    const project = await this.project(p, current.projectId);
    if (!(await this.isStaff(project, userOf(p)))) throw forbidden('Only the project owner and its moderators change a request’s status');
    if (!(STATUSES as readonly string[]).includes(status)) throw errors.field('status', `must be one of ${STATUSES.join(', ')}`);
    if (!TRANSITIONS[current.status]!.includes(status)) {
      throw errors.conflict(`A ${current.status} request cannot become ${status}`, { status: current.status, allowed: TRANSITIONS[current.status] });
    }
    const request = await requests.setStatus(this.db, id, current.status, status);
    if (!request) throw errors.conflict('The request changed meanwhile: read it again');
    return this.changed(request);
  }

  // ---- votes --------------------------------------------------------------------------------

  async vote(p: Principal, requestId: string, type: string): Promise<VoteSummary> {
    const user = userOf(p);
    if (type !== 'upvote' && type !== 'downvote') throw errors.field('type', 'must be upvote or downvote');
    const request = await this.request(p, requestId);
    await withTransaction(this.db, async (tx) => {
      const m = tx.manager;
      const status = await requests.lockStatus(m, requestId);
      if (status !== 'approved') throw new AppError('request_not_approved', `Votes are taken on approved requests only (this one is ${status})`, { status });
      if ((await requests.voteOf(m, requestId, user)) === type) throw new AppError('already_voted', `You already gave this request an ${type}`, { type });
      await requests.upsertVote(m, requestId, user, type);
      await requests.recount(m, requestId);
      tx.afterCommit(() => this.announce(request));
    });
    return this.summary(p, requestId);
  }

  async unvote(p: Principal, requestId: string): Promise<VoteSummary> {
    const user = userOf(p);
    const request = await this.request(p, requestId);
    await withTransaction(this.db, async (tx) => {
      const m = tx.manager;
      await requests.lockForUpdate(m, requestId);
      if (!(await requests.deleteVote(m, requestId, user))) throw errors.notFound('vote', `${requestId}/${user}`);
      await requests.recount(m, requestId);
      tx.afterCommit(() => this.announce(request));
    });
    return this.summary(p, requestId);
  }

  async summary(p: Principal, requestId: string): Promise<VoteSummary> {
    await this.request(p, requestId);
    return requests.voteSummary(this.db, requestId, optionalUser(p));
  }

  // ---- comments -----------------------------------------------------------------------------

  async comment(p: Principal, requestId: string, body: string): Promise<CommentView> {
    const user = userOf(p);
    const request = await this.request(p, requestId);
    const problems: FieldError[] = [];
    text(problems, 'body', body, 5000, true);
    if (problems.length) throw errors.validation(problems);
    return withTransaction(this.db, async (tx) => {
      const m = tx.manager;
      await requests.lockForUpdate(m, requestId);
      const comment = await requests.insertComment(m, requestId, user, body);
      await requests.recount(m, requestId);
      tx.afterCommit(() => this.announce(request));
      return comment;
    });
  }

  async comments(p: Principal, requestId: string): Promise<CommentView[]> {
    await this.request(p, requestId);
    return requests.comments(this.db, requestId);
  }

  async editComment(p: Principal, id: string, body: string): Promise<CommentView> {
    const c = await this.commentRow(p, id);
    if (c.authorId !== userOf(p)) throw forbidden('Only its author edits a comment');
    const problems: FieldError[] = [];
    text(problems, 'body', body, 5000, true);
    if (problems.length) throw errors.validation(problems);
    const comment = await requests.updateComment(this.db, id, body);
    await this.changed(await requests.byId(this.db, c.requestId));
    return comment;
  }

  async deleteComment(p: Principal, id: string): Promise<{ id: string }> {
    const c = await this.commentRow(p, id);
    const user = userOf(p);
    const request = await requests.byId(this.db, c.requestId);
    if (c.authorId !== user) {
      const project = await this.project(p, request.projectId);
      if (!(await this.isStaff(project, user))) throw forbidden('Only its author, the project owner and moderators delete a comment');
    }
    await withTransaction(this.db, async (tx) => {
      const m = tx.manager;
      await requests.lockForUpdate(m, c.requestId);
      await requests.deleteComment(m, id);
      await requests.recount(m, c.requestId);
      tx.afterCommit(() => this.announce(request));
    });
    return { id };
  }

  // ---- helpers ------------------------------------------------------------------------------

  private async commentRow(p: Principal, id: string): Promise<CommentView> {
    const comment = await requests.commentById(this.db, id);
    await this.request(p, comment.requestId);
    return comment;
  }

  private async isStaff(project: ProjectView, user: string | null, m: Queryable = this.db): Promise<boolean> {
    if (!user) return false;
    if (project.ownerId === user) return true;
    return projects.isModerator(m, project.id, user);
  }

  private async ownerOnly(p: Principal, id: string): Promise<ProjectView> {
    const user = userOf(p);
    const project = await this.project(p, id);
    if (project.ownerId !== user) throw forbidden('Only the project owner may do this');
    return project;
  }

  /** The author, the project owner and moderators may edit and delete a request. */
  private async editable(p: Principal, id: string): Promise<RequestView> {
    const user = userOf(p);
    const req = await this.request(p, id);
    if (req.authorId === user) return req;
    if (await this.isStaff(await this.project(p, req.projectId), user)) return req;
    throw forbidden('Only the author, the project owner and moderators may change this request');
  }

  private async changed(req: RequestView): Promise<RequestView> {
    await this.announce(req);
    return req;
  }

  /**
   * Subscribers refetch the request. Inside a transaction it is sent by `tx.afterCommit`, never
   * before the COMMIT. The change is committed either way, so a failed send is logged, not thrown:
   * `afterCommit` would drop the error unseen, and a caller told "failed" would retry a done change.
   */
  private announce({ id: requestId, projectId }: { id: string; projectId: string }, deletion?: { version: number; deleted: true }): Promise<void> {
    return this.events
      .publish(TOPIC.feedbackRequestUpdated, { requestId, projectId, ...deletion })
      .catch((err) => this.logger.warn('feedback request event not published', { err, requestId }));
  }
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
