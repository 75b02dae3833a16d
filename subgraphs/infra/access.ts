import type { DataSource } from 'typeorm';
import { hasPermission, type Principal } from '../../kernel/auth/principal';
import { AppError, errors } from '../../kernel/errors';

/**
 * Who may do what on the infrastructure service. People hold roles; a role is a set of
 * permissions (the matrix below, also in the README). Infrastructure API keys hold permissions
 * directly and act for the whole organisation. Every operation names its permission
 * (@Authorized); the service checks it again against the person's *current* roles, so a demoted
 * or deleted user loses access at once, not when the token expires. Projects add a second rule:
 * a person changes a project, its services and their deployments only as a member (admins
 * everywhere), and sees a private project only as a member.
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
  constructor(private readonly db: DataSource) {}

  /** The caller with its current rights; 401 when the person behind a token no longer exists. */
  async caller(p: Principal, permission?: string): Promise<Caller> {
    let caller: Caller;
    if (p.kind === 'user') {
      const [u] = await this.db.query(`SELECT id, roles FROM infra.users WHERE id::text = $1`, [p.userId]);
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
    const [m] = await this.db.query(`SELECT role FROM infra.project_members WHERE project_id = $1 AND user_id = $2`, [projectId, caller.id]);
    return m?.role ?? null;
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

/** A SQL condition (over alias `p`) for the projects `caller` may see; pushes its parameter onto `params`. */
export function visibleProjects(caller: Pick<Caller, 'id' | 'admin'>, params: unknown[]): string {
  if (caller.admin) return 'true';
  return `(p.visibility <> 'private' OR EXISTS (SELECT 1 FROM infra.project_members m WHERE m.project_id = p.id AND m.user_id::text = $${params.push(caller.id)}))`;
}
