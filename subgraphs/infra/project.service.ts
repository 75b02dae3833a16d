import { withTransaction } from '../../kernel/db/transaction';
import type { DataSource } from 'typeorm';
import type { Principal } from '../../kernel/auth/principal';
import { AppError, errors, type FieldError } from '../../kernel/errors';
import { Access } from './access';
import { checkPage } from './account.service';
import { AccountStore } from './account.store';
import { ProjectStore, type ProjectFields } from './project.store';
import { infraPage, type InfraDeletion, type InfraProject, type InfraProjectPage } from './infra.types';

/**
 * Projects: the unit of ownership of services. The creator becomes the owner member; members
 * are owners or contributors. A project's slug (from its name, unique) is the Kubernetes
 * namespace of its services.
 */

export const VISIBILITIES = ['private', 'internal', 'public'];
export const PROJECT_STATUSES = ['active', 'archived'];

export class ProjectService {
  private readonly store: ProjectStore;
  private readonly users: AccountStore;

  constructor(
    private readonly db: DataSource,
    private readonly access: Access,
  ) {
    this.store = new ProjectStore(db);
    this.users = new AccountStore(db);
  }

  async list(p: Principal, args: { page: number; limit: number; status?: string | null }): Promise<InfraProjectPage> {
    const caller = await this.access.caller(p, 'project:read');
    checkPage(args.page, args.limit);
    if (args.status != null && !PROJECT_STATUSES.includes(args.status)) throw errors.field('status', `must be one of ${PROJECT_STATUSES.join(', ')}`);
    const { projects, total } = await this.store.list(caller, args.status, args.page, args.limit);
    return { data: projects, pagination: infraPage(total, args.page, args.limit) };
  }

  async get(p: Principal, id: string): Promise<InfraProject> {
    const caller = await this.access.caller(p, 'project:read');
    return this.load(id, caller.admin || caller.kind !== 'user' ? null : caller.id);
  }

  async create(p: Principal, input: ProjectFields & { name: string }): Promise<InfraProject> {
    const caller = await this.access.caller(p, 'project:write');
    const values = this.validate(input, true);
    const slug = slugOf(values.name!);
    try {
      const id = await withTransaction(this.db, async ({ manager: m }) => {
        const projectId = await this.store.insert(m, slug, caller.kind === 'user' ? caller.id : null, values);
        if (caller.kind === 'user') await this.store.insertOwner(m, projectId, caller.id);
        return projectId;
      });
      return this.load(id, null);
    } catch (err) {
      if ((err as { code?: string }).code === '23505')
        throw new AppError('conflict', `A project named like "${values.name}" (${slug}) already exists`, { field: 'name', slug });
      throw err;
    }
  }

  async update(p: Principal, id: string, input: ProjectFields): Promise<InfraProject> {
    const caller = await this.access.caller(p, 'project:write');
    await this.load(id, caller.admin ? null : caller.id);
    await this.access.mayChange(caller, id);
    const v = this.validate(input, false);
    await this.store.update(id, v);
    // Made private, the project is out of sight of every person not a member.
    if (v.visibility != null) await this.access.changed();
    return this.load(id, null);
  }

  async remove(p: Principal, id: string): Promise<InfraDeletion> {
    const caller = await this.access.caller(p, 'project:write');
    const project = await this.load(id, caller.admin ? null : caller.id);
    await this.access.mayChange(caller, id, true);
    try {
      await this.store.deleteById(id);
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
    await this.users.mustExist(userId);
    await this.store.upsertMember(id, userId, role);
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
    await this.store.deleteMember(id, userId);
    await this.access.changed(userId);
    return this.load(id, null);
  }

  /** The project if `viewer` (a user id; null: organisation-wide) may see it; 404 otherwise, as if absent. */
  load(id: string, viewer: string | null): Promise<InfraProject> {
    return this.store.byId(id, { id: viewer ?? '', admin: viewer === null });
  }

  private validate(input: ProjectFields, creating: boolean): ProjectFields {
    const problems: FieldError[] = [];
    const name = input.name?.trim();
    if ((creating || input.name != null) && (!name || name.length > 100 || !slugOf(name)))
      problems.push({
        field: 'name',
        message: 'must be 1 to 100 characters with at least one letter or digit',
        reason: name && name.length > 100 ? 'too_long' : 'invalid_value',
      });
    if (input.description != null && input.description.length > 2000)
      problems.push({ field: 'description', message: 'must be at most 2000 characters', reason: 'too_long' });
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
