import { page, Where } from '../../kernel/db/page';
import { exec, one, rowById, rows, type Queryable } from '../../kernel/db/rows';
import type { InfraProject, InfraProjectMember } from './infra.types';

/**
 * How projects are kept: infra.projects and their members in infra.project_members. Methods that
 * take a `Queryable` run in the caller's transaction.
 */

/** Who looks: a user id, or `admin` for the organisation-wide view (API keys, admins). */
export interface Viewer {
  id: string;
  admin: boolean;
}

export type MemberRole = 'owner' | 'contributor';

/** The fields of a project as written: null (or absent) leaves a field as it is on update. */
export interface ProjectFields {
  name?: string | null;
  description?: string | null;
  visibility?: string | null;
  status?: string | null;
  repository?: { url?: string | null; branch?: string | null } | null;
  ci?: { enabled?: boolean | null; provider?: string | null } | null;
}

interface ProjectRow {
  id: string;
  name: string;
  slug: string;
  description: string;
  status: string;
  visibility: string;
  owner_id: string | null;
  repository_url: string | null;
  repository_branch: string;
  ci_enabled: boolean;
  ci_provider: string | null;
  created_at: Date;
  updated_at: Date;
  owner_name: string | null;
  owner_email: string | null;
  member_count: number;
}

const COLUMNS = `p.*, o.name AS owner_name, o.email AS owner_email,
  (SELECT count(*)::int FROM infra.project_members m WHERE m.project_id = p.id) AS member_count`;
const FROM = `infra.projects p LEFT JOIN infra.users o ON o.id = p.owner_id`;

export class ProjectStore {
  constructor(private readonly db: Queryable) {}

  /** A page of the projects `viewer` may see (newest first), of `status` when given. */
  async list(viewer: Viewer, status: string | null | undefined, pageNumber: number, limit: number): Promise<{ projects: InfraProject[]; total: number }> {
    const params: unknown[] = [];
    const where = new Where(params).always(visibleProjects(viewer, params)).equals('p.status', status);
    // Counted apart: the member count (a subquery) only for the page's rows.
    const found = await page<ProjectRow>(
      this.db,
      { select: COLUMNS, from: `FROM ${FROM} ${where}`, orderBy: 'p.created_at DESC, p.id', params },
      { limit, offset: (pageNumber - 1) * limit },
      { count: 'apart' },
    );
    return { projects: found.rows.map((r) => toProject(r, [])), total: found.total };
  }

  /** The project with its members if `viewer` may see it; 404 otherwise, as if absent. */
  async byId(id: string, viewer: Viewer): Promise<InfraProject> {
    const params: unknown[] = [id];
    const row = await rowById<ProjectRow>(
      this.db,
      'project',
      id,
      `SELECT ${COLUMNS} FROM ${FROM} WHERE p.id = $1 AND ${visibleProjects(viewer, params)}`,
      params,
    );
    const members = await rows<InfraProjectMember>(
      this.db,
      `SELECT u.id, u.name, m.role FROM infra.project_members m JOIN infra.users u ON u.id = m.user_id WHERE m.project_id = $1 ORDER BY m.added_at, u.id`,
      [id],
    );
    return toProject(row, members);
  }

  /** A new project (defaults: private, branch main, CI off); 23505 when the slug is taken. */
  async insert(q: Queryable, slug: string, ownerId: string | null, v: ProjectFields): Promise<string> {
    const row = await one<{ id: string }>(
      q,
      `INSERT INTO infra.projects (name, slug, description, visibility, owner_id, repository_url, repository_branch, ci_enabled, ci_provider)
           VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, 'main'), coalesce($8, false), $9) RETURNING id`,
      [
        v.name,
        slug,
        v.description ?? '',
        v.visibility ?? 'private',
        ownerId,
        v.repository?.url ?? null,
        v.repository?.branch ?? null,
        v.ci?.enabled ?? null,
        v.ci?.provider ?? null,
      ],
    );
    return row!.id;
  }

  update(id: string, v: ProjectFields): Promise<void> {
    return exec(
      this.db,
      `UPDATE infra.projects SET name = coalesce($2, name), description = coalesce($3, description), visibility = coalesce($4, visibility),
              status = coalesce($5, status), repository_url = coalesce($6, repository_url), repository_branch = coalesce($7, repository_branch),
              ci_enabled = coalesce($8, ci_enabled), ci_provider = coalesce($9, ci_provider), updated_at = now()
        WHERE id = $1`,
      [
        id,
        v.name ?? null,
        v.description ?? null,
        v.visibility ?? null,
        v.status ?? null,
        v.repository?.url ?? null,
        v.repository?.branch ?? null,
        v.ci?.enabled ?? null,
        v.ci?.provider ?? null,
      ],
    );
  }

  /** 23503 while the project has services. */
  deleteById(id: string): Promise<void> {
    return exec(this.db, `DELETE FROM infra.projects WHERE id = $1`, [id]);
  }

  // ---- members ------------------------------------------------------------------------------

  insertOwner(q: Queryable, projectId: string, userId: string): Promise<void> {
    return exec(q, `INSERT INTO infra.project_members (project_id, user_id, role) VALUES ($1, $2, 'owner')`, [projectId, userId]);
  }

  /** Adds the member, or changes the role of one already there. */
  upsertMember(projectId: string, userId: string, role: MemberRole): Promise<void> {
    return exec(
      this.db,
      `INSERT INTO infra.project_members (project_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
      [projectId, userId, role],
    );
  }

  deleteMember(projectId: string, userId: string): Promise<void> {
    return exec(this.db, `DELETE FROM infra.project_members WHERE project_id = $1 AND user_id = $2`, [projectId, userId]);
  }

  /** The user's role in the project (`null`: not a member). */
  async memberRole(projectId: string, userId: string): Promise<MemberRole | null> {
    const m = await one<{ role: MemberRole }>(this.db, `SELECT role FROM infra.project_members WHERE project_id = $1 AND user_id = $2`, [projectId, userId]);
    return m?.role ?? null;
  }
}

/** A SQL condition (over alias `p`) for the projects `viewer` may see; pushes its parameter onto `params`. */
function visibleProjects(viewer: Viewer, params: unknown[]): string {
  if (viewer.admin) return 'true';
  return `(p.visibility <> 'private' OR EXISTS (SELECT 1 FROM infra.project_members m WHERE m.project_id = p.id AND m.user_id::text = $${params.push(viewer.id)}))`;
}

function toProject(r: ProjectRow, members: InfraProjectMember[]): InfraProject {
  return {
    id: r.id,
    name: r.name,
    slug: r.slug,
    description: r.description,
    status: r.status,
    visibility: r.visibility,
    owner: r.owner_id ? { id: r.owner_id, name: r.owner_name!, email: r.owner_email! } : null,
    memberCount: r.member_count,
    members,
    repository: { url: r.repository_url, branch: r.repository_branch },
    ci: { enabled: r.ci_enabled, provider: r.ci_provider },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
