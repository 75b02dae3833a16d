import { page, Where } from '../../kernel/db/page';
import { count, exec, one, rowById, type Queryable } from '../../kernel/db/rows';
import type { InfraUser } from './infra.types';

/**
 * How people and their organisation are kept: infra.users (with the login counters) and
 * infra.organizations. Methods that take a `Queryable` run in the caller's transaction.
 */

/** What a login checks. */
export interface CredentialsRow {
  id: string;
  roles: string[];
  password_hash: string;
  locked_until: Date | null;
}

/** The login counters after a failed attempt. */
export interface FailedLoginRow {
  failed_logins: number;
  locked_until: Date | null;
}

/** A person's current roles, as every call checks them. */
export interface IdentityRow {
  id: string;
  roles: string[];
}

interface UserRow {
  id: string;
  email: string;
  name: string;
  roles: string[];
  created_at: Date;
  updated_at: Date;
  last_login_at: Date | null;
  org_id: string;
  org_name: string;
}

const USER_COLUMNS = `u.id, u.email, u.name, u.roles, u.created_at, u.updated_at, u.last_login_at, o.id AS org_id, o.name AS org_name`;
const USER_FROM = `infra.users u JOIN infra.organizations o ON o.id = u.organization_id`;

export class AccountStore {
  constructor(private readonly db: Queryable) {}

  // ---- sessions -----------------------------------------------------------------------------

  credentials(email: string): Promise<CredentialsRow | undefined> {
    return one<CredentialsRow>(this.db, `SELECT id, roles, password_hash, locked_until FROM infra.users WHERE email = $1`, [email]);
  }

  /** Counts a failed login; the `failures`-th in a row locks the account for `lockSeconds`. */
  countFailedLogin(id: string, failures: number, lockSeconds: number): Promise<FailedLoginRow | undefined> {
    return one<FailedLoginRow>(
      this.db,
      `UPDATE infra.users
            SET failed_logins = failed_logins + 1,
                locked_until = CASE WHEN failed_logins + 1 >= $2 THEN now() + make_interval(secs => $3) END
          WHERE id = $1 RETURNING failed_logins, locked_until`,
      [id, failures, lockSeconds],
    );
  }

  loggedIn(id: string): Promise<void> {
    return exec(this.db, `UPDATE infra.users SET failed_logins = 0, locked_until = NULL, last_login_at = now() WHERE id = $1`, [id]);
  }

  /** The person behind a token (`userId` compared as text: a token's id need not be a UUID). */
  identity(userId: string): Promise<IdentityRow | undefined> {
    return one<IdentityRow>(this.db, `SELECT id, roles FROM infra.users WHERE id::text = $1`, [userId]);
  }

  // ---- bootstrap ----------------------------------------------------------------------------

  /** Serialises bootstraps (several processes start at once) until `q`'s transaction ends. */
  lockBootstrap(q: Queryable): Promise<void> {
    return exec(q, `SELECT pg_advisory_xact_lock(hashtextextended('infra.bootstrap', 0))`);
  }

  async firstOrganizationId(q: Queryable): Promise<string | undefined> {
    return (await one<{ id: string }>(q, `SELECT id FROM infra.organizations ORDER BY created_at LIMIT 1`))?.id;
  }

  async insertDefaultOrganization(q: Queryable): Promise<string> {
    return (await one<{ id: string }>(q, `INSERT INTO infra.organizations (name) VALUES ('Default organization') RETURNING id`))!.id;
  }

  countUsers(q: Queryable): Promise<number> {
    return count(q, `SELECT count(*)::int AS n FROM infra.users`);
  }

  insertAdmin(q: Queryable, email: string, passwordHash: string, organizationId: string): Promise<void> {
    return exec(q, `INSERT INTO infra.users (email, name, password_hash, roles, organization_id) VALUES ($1, 'Administrator', $2, '{admin}', $3)`, [
      email,
      passwordHash,
      organizationId,
    ]);
  }

  // ---- users --------------------------------------------------------------------------------

  /** A page of users (oldest first), with `role` among their roles when given. */
  async list(role: string | null | undefined, pageNumber: number, limit: number): Promise<{ users: InfraUser[]; total: number }> {
    const where = new Where().and(role, (p) => `${p} = ANY(u.roles)`);
    const found = await page<UserRow>(
      this.db,
      { select: USER_COLUMNS, from: `FROM ${USER_FROM} ${where}`, orderBy: 'u.created_at, u.id', params: where.params },
      { limit, offset: (pageNumber - 1) * limit },
    );
    return { users: found.rows.map(toUser), total: found.total };
  }

  /** A new user of the (first) organisation; 23505 when the e-mail is taken. */
  async insert(user: { email: string; name: string; passwordHash: string; roles: string[] }): Promise<string> {
    const row = await one<{ id: string }>(
      this.db,
      `INSERT INTO infra.users (email, name, password_hash, roles, organization_id)
         SELECT $1, $2, $3, $4, id FROM infra.organizations ORDER BY created_at LIMIT 1 RETURNING id`,
      [user.email, user.name, user.passwordHash, user.roles],
    );
    return row!.id;
  }

  /** Sets the fields given (null: unchanged). */
  update(q: Queryable, id: string, set: { name: string | null; roles: string[] | null; passwordHash: string | null }): Promise<void> {
    return exec(
      q,
      `UPDATE infra.users SET name = coalesce($2, name), roles = coalesce($3, roles), password_hash = coalesce($4, password_hash), updated_at = now() WHERE id = $1`,
      [id, set.name, set.roles, set.passwordHash],
    );
  }

  /** 23503 while the user owns projects. */
  deleteById(q: Queryable, id: string): Promise<void> {
    return exec(q, `DELETE FROM infra.users WHERE id = $1`, [id]);
  }

  /** Serialises changes to who is admin until `q`'s transaction ends. */
  lockAdmins(q: Queryable): Promise<void> {
    return exec(q, `SELECT pg_advisory_xact_lock(hashtextextended('infra.admins', 0))`);
  }

  countAdminsExcept(q: Queryable, id: string): Promise<number> {
    return count(q, `SELECT count(*)::int AS n FROM infra.users WHERE 'admin' = ANY(roles) AND id <> $1`, [id]);
  }

  async byId(id: string): Promise<InfraUser> {
    return toUser(await rowById<UserRow>(this.db, 'user', id, `SELECT ${USER_COLUMNS} FROM ${USER_FROM} WHERE u.id = $1`));
  }

  /** 404 unless the user exists. */
  async mustExist(id: string): Promise<void> {
    await rowById(this.db, 'user', id, `SELECT 1 FROM infra.users WHERE id = $1`);
  }
}

function toUser(r: UserRow): InfraUser {
  return {
    id: r.id,
    email: r.email,
    name: r.name,
    roles: r.roles,
    organization: { id: r.org_id, name: r.org_name },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    lastLoginAt: r.last_login_at,
  };
}
