import type { DataSource } from 'typeorm';
import { hasPermission, type Principal } from '../../kernel/auth/principal';
import { AppError, errors } from '../../kernel/errors';
import type { EventBus } from '../../kernel/events';
import { TOPIC } from '../../kernel/topics';
import { AccountStore } from './account.store';
import { ProjectStore } from './project.store';

/**
 * Who may do what on the infrastructure service (the role matrix is also in the README). Each
 * operation's permission is checked again against the person's *current* roles, so a demoted user
 * loses access at once, not when the token expires. A change that may take rights away is announced
 * (`changed`), so that person's open streams and subscriptions are checked again.
 */

export const ROLES = ['admin', 'maintainer', 'developer'] as const;
export type Role = (typeof ROLES)[number];

const DEVELOPER = ['project:read', 'service:read', 'service:logs', 'cluster:read'];
const MAINTAINER = [...DEVELOPER, 'user:read', 'project:write', 'service:write', 'service:deploy', 'webhook:read', 'webhook:write'];

export const ROLE_PERMISSIONS: Record<Role, string[]> = {
  developer: DEVELOPER,
  maintainer: MAINTAINER,
  admin: ['*'],
};

export function permissionsOf(roles: readonly string[]): string[] {
  return [...new Set(roles.flatMap((r) => ROLE_PERMISSIONS[r as Role] ?? []))];
}

export type Caller =
  | { kind: 'user'; id: string; roles: string[]; permissions: string[]; admin: boolean }
  /** An infrastructure API key (or a platform admin key): organisation-wide within its permissions. */
  | { kind: 'key'; id: string; permissions: string[]; admin: true };

export class Access {
  private readonly accounts: AccountStore;
  private readonly projects: ProjectStore;

  constructor(
    db: DataSource,
    private readonly events: EventBus,
  ) {
    this.accounts = new AccountStore(db);
    this.projects = new ProjectStore(db);
  }

  /**
   * After the commit of a change that may take rights away from `userId` (deleted, roles changed,
   * out of a project; none: from anyone, as a project turning private does): every process checks
   * that person's open streams and subscriptions again. A failed send leaves them to the next event.
   */
  async changed(userId?: string): Promise<void> {
    await this.events.publish(TOPIC.infraAccessChanged, userId === undefined ? {} : { userId }).catch(() => undefined);
  }

  /** The caller with its current rights; 401 when the person behind a token no longer exists. */
  async caller(p: Principal, permission?: string): Promise<Caller> {
    let caller: Caller;
    if (p.kind === 'user') {
      const u = await this.accounts.identity(p.userId);
      if (!u) throw new AppError('unauthorized', 'The user of this token no longer exists');
      caller = { kind: 'user', id: u.id, roles: u.roles, permissions: permissionsOf(u.roles), admin: u.roles.includes('admin') };
    } else if (p.kind === 'apiKey') {
      caller = { kind: 'key', id: p.keyId, permissions: p.permissions, admin: true };
    } else if (p.kind === 'service') {
      caller = { kind: 'key', id: `service:${p.name}`, permissions: ['*'], admin: true };
    } else {
      throw errors.missingAuthorization();
    }
    if (permission) demand(caller, permission);
    return caller;
  }

  /** The caller's role in a project (`null`: not a member). */
  async membership(caller: Caller, projectId: string): Promise<'owner' | 'contributor' | null> {
    if (caller.kind !== 'user') return null;
    return this.projects.memberRole(projectId, caller.id);
  }

  /** Changes to a project's services and deployments: members and admins. */
  async mayChange(caller: Caller, projectId: string, owner = false): Promise<void> {
    if (caller.admin) return;
    const role = await this.membership(caller, projectId);
    if (role === 'owner' || (role && !owner)) return;
    throw new AppError(
      'insufficient_permissions',
      owner ? 'Only the project owner or an admin may do this' : 'Only members of the project or an admin may do this',
      {
        required: owner ? 'project owner' : 'project member',
        project: projectId,
      },
    );
  }
}

/** 403 unless the (already resolved) caller holds `permission`. */
export function demand(caller: Caller, permission: string): void {
  if (!hasPermission(caller.permissions, permission)) throw errors.insufficientPermissions(permission, caller.permissions);
}
