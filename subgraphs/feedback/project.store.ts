import { page } from '../../kernel/db/page';
import { exec, one, rowById, rows, type Queryable } from '../../kernel/db/rows';

/**
 * Where feedback.projects and feedback.moderators are read and written. A project is read with
 * its stats, summed from its requests' counters at every read (the counters themselves are kept
 * by request.store.ts `recount`).
 */

interface ProjectRow {
  id: string;
  name: string;
  description: string;
  slug: string;
  owner_id: string;
  is_public: boolean;
  allow_anonymous: boolean;
  require_approval: boolean;
  created_at: Date;
  total_requests: number;
  total_votes: number;
  total_comments: number;
}

interface ModeratorRow {
  project_id: string;
  user_id: string;
}

export interface ProjectSettings {
  isPublic: boolean;
  allowAnonymous: boolean;
  requireApproval: boolean;
}

export interface ProjectView {
  id: string;
  name: string;
  description: string;
  slug: string;
  ownerId: string;
  settings: ProjectSettings;
  stats: { totalRequests: number; totalVotes: number; totalComments: number };
  createdAt: Date;
}

const PROJECT = `p.id, p.name, p.description, p.slug, p.owner_id, p.is_public, p.allow_anonymous, p.require_approval, p.created_at,
  (SELECT count(*)::int FROM feedback.requests r WHERE r.project_id = p.id) AS total_requests,
  (SELECT coalesce(sum(r.up_votes + r.down_votes), 0)::int FROM feedback.requests r WHERE r.project_id = p.id) AS total_votes,
  (SELECT coalesce(sum(r.comments_count), 0)::int FROM feedback.requests r WHERE r.project_id = p.id) AS total_comments`;

const toView = (r: ProjectRow): ProjectView => ({
  id: r.id,
  name: r.name,
  description: r.description,
  slug: r.slug,
  ownerId: r.owner_id,
  settings: { isPublic: r.is_public, allowAnonymous: r.allow_anonymous, requireApproval: r.require_approval },
  stats: { totalRequests: r.total_requests, totalVotes: r.total_votes, totalComments: r.total_comments },
  createdAt: r.created_at,
});

/** Inserts a project (a taken slug fails with PostgreSQL's unique violation, 23505); its id. */
export async function insert(q: Queryable, p: { name: string; description: string; slug: string; ownerId: string }): Promise<string> {
  const row = await one<{ id: string }>(q, `INSERT INTO feedback.projects (name, description, slug, owner_id) VALUES ($1, $2, $3, $4) RETURNING id`, [
    p.name,
    p.description,
    p.slug,
    p.ownerId,
  ]);
  return row!.id;
}

/** The project `id` names, whoever may see it, or 404 `resource_not_found` (also for an id that is no UUID). */
export async function byId(q: Queryable, id: string): Promise<ProjectView> {
  return toView(await rowById<ProjectRow>(q, 'project', id, `SELECT ${PROJECT} FROM feedback.projects p WHERE p.id = $1`));
}

/** A page of the public projects, newest first, and their total. */
export async function publicPage(q: Queryable, limit: number, offset: number): Promise<{ projects: ProjectView[]; total: number }> {
  // Counted apart: the figures (subqueries) only for the page's rows.
  const found = await page<ProjectRow>(
    q,
    { select: PROJECT, from: 'FROM feedback.projects p WHERE p.is_public', orderBy: 'p.created_at DESC, p.id' },
    { limit, offset },
    { count: 'apart' },
  );
  return { projects: found.rows.map(toView), total: found.total };
}

/** Every project of `ownerId`, newest first. */
export async function ofOwner(q: Queryable, ownerId: string): Promise<ProjectView[]> {
  return (await rows<ProjectRow>(q, `SELECT ${PROJECT} FROM feedback.projects p WHERE p.owner_id = $1 ORDER BY p.created_at DESC`, [ownerId])).map(toView);
}

export async function update(q: Queryable, id: string, v: { name: string; description: string; settings: ProjectSettings }): Promise<void> {
  await exec(
    q,
    `UPDATE feedback.projects SET name = $2, description = $3, is_public = $4, allow_anonymous = $5, require_approval = $6, updated_at = now() WHERE id = $1`,
    [id, v.name, v.description, v.settings.isPublic, v.settings.allowAnonymous, v.settings.requireApproval],
  );
}

/** Deletes the project; its requests, votes, comments and moderators go with it. */
export async function deleteById(q: Queryable, id: string): Promise<void> {
  await exec(q, `DELETE FROM feedback.projects WHERE id = $1`, [id]);
}

// ---- moderators -----------------------------------------------------------------------------

/** Names `userId` a moderator of the project (again is a no-op). */
export async function addModerator(q: Queryable, projectId: string, userId: string): Promise<void> {
  await exec(q, `INSERT INTO feedback.moderators (project_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [projectId, userId]);
}

/** The moderators of the projects, by project, each project's in the order they were named. */
export async function moderators(q: Queryable, projectIds: string[]): Promise<ModeratorRow[]> {
  return rows<ModeratorRow>(q, `SELECT project_id, user_id FROM feedback.moderators WHERE project_id = ANY($1::uuid[]) ORDER BY project_id, created_at`, [
    projectIds,
  ]);
}

export async function isModerator(q: Queryable, projectId: string, userId: string): Promise<boolean> {
  return (await rows(q, `SELECT 1 FROM feedback.moderators WHERE project_id = $1 AND user_id = $2`, [projectId, userId])).length > 0;
}
