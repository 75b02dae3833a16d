import type { DataSource } from 'typeorm';
import type { Principal } from '../../kernel/auth/principal';
import { AppError, errors, type FieldError } from '../../kernel/errors';
import { rowById } from '../../kernel/db/rows';
import { Access, visibleProjects } from './access';
import { checkPage } from './account.service';
import { infraPage, type InfraDeletion, type InfraProject, type InfraProjectPage } from './infra.types';

/**
 * Projects: the unit of ownership of services. The creator becomes the owner member; members
 * are owners or contributors. A project's slug (from its name, unique) is the Kubernetes
 * namespace of its services.
 */

export const VISIBILITIES = ['private', 'internal', 'public'];
export const PROJECT_STATUSES = ['active', 'archived'];

interface ProjectInput {
  name?: string | null;
  description?: string | null;
  visibility?: string | null;
  status?: string | null;
  repository?: { url?: string | null; branch?: string | null } | null;
  ci?: { enabled?: boolean | null; provider?: string | null } | null;
}

const COLUMNS = `p.*, o.name AS owner_name, o.email AS owner_email,
  (SELECT count(*)::int FROM infra.project_members m WHERE m.project_id = p.id) AS member_count`;
const FROM = `infra.projects p LEFT JOIN infra.users o ON o.id = p.owner_id`;

export class ProjectService {
  constructor(
    private readonly db: DataSource,
    private readonly access: Access,
  ) {}

  async list(p: Principal, args: { page: number; limit: number; status?: string | null }): Promise<InfraProjectPage> {
    const caller = await this.access.caller(p, 'project:read');
    checkPage(args.page, args.limit);
    if (args.status != null && !PROJECT_STATUSES.includes(args.status)) throw errors.field('status', `must be one of ${PROJECT_STATUSES.join(', ')}`);
    const params: unknown[] = [];
    const where = [visibleProjects(caller, params)];
    if (args.status) where.push(`p.status = $${params.push(args.status)}`);
    const sql = `FROM ${FROM} WHERE ${where.join(' AND ')}`;
    const [{ n }] = await this.db.query(`SELECT count(*)::int AS n ${sql}`, params);
    const rows = await this.db.query(`SELECT ${COLUMNS} ${sql} ORDER BY p.created_at DESC, p.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`, [
      ...params,
      args.limit,
      (args.page - 1) * args.limit,
    ]);
    return { data: rows.map((r: any) => toProject(r, [])), pagination: infraPage(n, args.page, args.limit) };
  }

  async get(p: Principal, id: string): Promise<InfraProject> {
    const caller = await this.access.caller(p, 'project:read');
    return this.load(id, caller.admin || caller.kind !== 'user' ? null : caller.id);
  }

  async create(p: Principal, input: ProjectInput & { name: string }): Promise<InfraProject> {
    const caller = await this.access.caller(p, 'project:write');
    const values = this.validate(input, true);
    const slug = slugOf(values.name!);
    try {
      const id = await this.db.transaction(async (m) => {
        const [row] = await m.query(
          `INSERT INTO infra.projects (name, slug, description, visibility, owner_id, repository_url, repository_branch, ci_enabled, ci_provider)
           VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, 'main'), coalesce($8, false), $9) RETURNING id`,
          [
            values.name,
            slug,
            values.description ?? '',
            values.visibility ?? 'private',
            caller.kind === 'user' ? caller.id : null,
            values.repository?.url ?? null,
            values.repository?.branch ?? null,
            values.ci?.enabled ?? null,
            values.ci?.provider ?? null,
          ],
        );
        if (caller.kind === 'user')
          await m.query(`INSERT INTO infra.project_members (project_id, user_id, role) VALUES ($1, $2, 'owner')`, [row.id, caller.id]);
        return row.id as string;
      });
      return this.load(id, null);
    } catch (err) {
      if ((err as { code?: string }).code === '23505')
        throw new AppError('conflict', `A project named like "${values.name}" (${slug}) already exists`, { field: 'name', slug });
      throw err;
    }
  }

  async update(p: Principal, id: string, input: ProjectInput): Promise<InfraProject> {
    const caller = await this.access.caller(p, 'project:write');
    await this.load(id, caller.admin ? null : caller.id);
    await this.access.mayChange(caller, id);
    const v = this.validate(input, false);
    await this.db.query(
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
    return this.load(id, null);
  }

  async remove(p: Principal, id: string): Promise<InfraDeletion> {
    const caller = await this.access.caller(p, 'project:write');
    const project = await this.load(id, caller.admin ? null : caller.id);
    await this.access.mayChange(caller, id, true);
    try {
      await this.db.query(`DELETE FROM infra.projects WHERE id = $1`, [id]);
    } catch (err) {
      if ((err as { code?: string }).code === '23503')
        throw errors.conflict(`Project ${project.name} still has services: delete them first`, { reason: 'has_services' });
      throw err;
    }
    return { success: true, message: `Project ${project.name} deleted` };
  }

  async addMember(p: Principal, id: string, userId: string, role: string): Promise<InfraProject> {
    const caller = await this.access.caller(p, 'project:write');
    await this.load(id, caller.admin ? null : caller.id);
    await this.access.mayChange(caller, id, true);
    if (role !== 'owner' && role !== 'contributor') throw errors.field('role', 'must be owner or contributor');
    await rowById(this.db, 'user', userId, `SELECT 1 FROM infra.users WHERE id = $1`);
    await this.db.query(
      `INSERT INTO infra.project_members (project_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
      [id, userId, role],
    );
    return this.load(id, null);
  }

  async removeMember(p: Principal, id: string, userId: string): Promise<InfraProject> {
    const caller = await this.access.caller(p, 'project:write');
    const project = await this.load(id, caller.admin ? null : caller.id);
    await this.access.mayChange(caller, id, true);
    const member = project.members.find((m) => m.id === userId);
    if (!member) throw errors.notFound('project member', userId);
    if (member.role === 'owner' && project.members.filter((m) => m.role === 'owner').length === 1)
      throw errors.conflict('A project keeps at least one owner', { reason: 'last_owner' });
    await this.db.query(`DELETE FROM infra.project_members WHERE project_id = $1 AND user_id = $2`, [id, userId]);
    return this.load(id, null);
  }

  /** The project if `viewer` (a user id; null: organisation-wide) may see it; 404 otherwise, as if absent. */
  async load(id: string, viewer: string | null): Promise<InfraProject> {
    const params: unknown[] = [id];
    const row = await rowById(
      this.db,
      'project',
      id,
      `SELECT ${COLUMNS} FROM ${FROM} WHERE p.id = $1 AND ${visibleProjects({ id: viewer ?? '', admin: viewer === null }, params)}`,
      params,
    );
    const members = await this.db.query(
      `SELECT u.id, u.name, m.role FROM infra.project_members m JOIN infra.users u ON u.id = m.user_id WHERE m.project_id = $1 ORDER BY m.added_at, u.id`,
      [id],
    );
    return toProject(row, members);
  }

  private validate(input: ProjectInput, creating: boolean): ProjectInput {
    const problems: FieldError[] = [];
    const name = input.name?.trim();
    if ((creating || input.name != null) && (!name || name.length > 100 || !slugOf(name)))
      problems.push({ field: 'name', message: 'must be 1 to 100 characters with at least one letter or digit' });
    if (input.description != null && input.description.length > 2000) problems.push({ field: 'description', message: 'must be at most 2000 characters' });
    if (input.visibility != null && !VISIBILITIES.includes(input.visibility))
      problems.push({ field: 'visibility', message: `must be one of ${VISIBILITIES.join(', ')}` });
    if (input.status != null && !PROJECT_STATUSES.includes(input.status))
      problems.push({ field: 'status', message: `must be one of ${PROJECT_STATUSES.join(', ')}` });
    const url = input.repository?.url;
    if (url != null && (url.length > 2048 || !/^https?:\/\/[^\s]+$/.test(url)))
      problems.push({ field: 'repository.url', message: 'must be an http or https URL' });
    const branch = input.repository?.branch;
    if (branch != null && (!branch.trim() || branch.length > 255)) problems.push({ field: 'repository.branch', message: 'must be 1 to 255 characters' });
    if (input.ci?.provider != null && input.ci.provider.length > 100) problems.push({ field: 'ci.provider', message: 'must be at most 100 characters' });
    if (problems.length) throw errors.validation(problems);
    return { ...input, name };
  }
}

/** A DNS label from a name: lowercase letters, digits and single hyphens, at most 63. */
export function slugOf(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

function toProject(r: any, members: { id: string; name: string; role: string }[]): InfraProject {
  return {
    id: r.id,
    name: r.name,
    slug: r.slug,
    description: r.description,
    status: r.status,
    visibility: r.visibility,
    owner: r.owner_id ? { id: r.owner_id, name: r.owner_name, email: r.owner_email } : null,
    memberCount: r.member_count,
    members,
    repository: { url: r.repository_url, branch: r.repository_branch },
    ci: { enabled: r.ci_enabled, provider: r.ci_provider },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
