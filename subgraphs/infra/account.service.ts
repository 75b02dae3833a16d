import type { DataSource } from 'typeorm';
import { burnVerification, hashSecret, verifySecret } from '../../kernel/auth/passwords';
import type { Principal } from '../../kernel/auth/principal';
import type { TokenSigner } from '../../kernel/auth/jwt';
import { rowById, rowsOf } from '../../kernel/db/rows';
import { AppError, errors, type FieldError } from '../../kernel/errors';
import { Access, demand, permissionsOf, ROLES, type Caller } from './access';
import { infraPage, type InfraDeletion, type InfraToken, type InfraUser, type InfraUserPage } from './infra.types';

/**
 * People and their sessions. Passwords are argon2id hashes, checked in constant time (an unknown
 * e-mail costs the same hash). After LOCKOUT.failures failed logins in a row an account is locked
 * for LOCKOUT.seconds: every login, right or wrong, answers 429 with retryAfter until then.
 */

export const TOKEN_TTL_SECONDS = 3600;
export const LOCKOUT = { failures: 5, seconds: 15 * 60 };
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const USER_COLUMNS = `u.id, u.email, u.name, u.roles, u.created_at, u.updated_at, u.last_login_at, o.id AS org_id, o.name AS org_name`;
const USER_FROM = `infra.users u JOIN infra.organizations o ON o.id = u.organization_id`;

export class AccountService {
  constructor(
    private readonly db: DataSource,
    private readonly tokens: TokenSigner,
    private readonly access: Access,
  ) {}

  // ---- sessions -----------------------------------------------------------------------------

  async login(email: string, password: string): Promise<InfraToken> {
    const problems: FieldError[] = [];
    if (typeof email !== 'string' || !email.trim()) problems.push({ field: 'email', message: 'is required' });
    if (typeof password !== 'string' || !password) problems.push({ field: 'password', message: 'is required' });
    if (problems.length) throw errors.validation(problems);
    const [u] = await this.db.query(`SELECT id, roles, password_hash, locked_until FROM infra.users WHERE email = $1`, [email.trim().toLowerCase()]);
    if (!u) {
      await burnVerification(password);
      throw this.badCredentials();
    }
    if (u.locked_until && u.locked_until > new Date()) throw this.locked(u.locked_until);
    const ok = password.length <= 1024 && (await verifySecret(u.password_hash, password));
    if (!ok) {
      // Counted and locked in one statement, so parallel guesses cannot slip past the limit.
      const [after] = rowsOf(
        await this.db.query(
          `UPDATE infra.users
            SET failed_logins = failed_logins + 1,
                locked_until = CASE WHEN failed_logins + 1 >= $2 THEN now() + make_interval(secs => $3) END
          WHERE id = $1 RETURNING failed_logins, locked_until`,
          [u.id, LOCKOUT.failures, LOCKOUT.seconds],
        ),
      );
      if (after?.locked_until) throw this.locked(after.locked_until);
      throw this.badCredentials();
    }
    await this.db.query(`UPDATE infra.users SET failed_logins = 0, locked_until = NULL, last_login_at = now() WHERE id = $1`, [u.id]);
    return this.issue(u.id, u.roles);
  }

  /** A new token for the person behind a valid one, with their current roles. */
  async refresh(p: Principal): Promise<InfraToken> {
    if (p.kind !== 'user')
      throw new AppError('validation_error', 'Refreshing needs a user token (Authorization: Bearer <token from /auth/login>)', { reason: 'not_a_user_token' });
    const caller = await this.access.caller(p);
    return this.issue(caller.id, (caller as Extract<Caller, { kind: 'user' }>).roles);
  }

  private async issue(userId: string, roles: string[]): Promise<InfraToken> {
    const token = await this.tokens.issue({ userId, service: 'infra', roles, permissions: permissionsOf(roles) }, TOKEN_TTL_SECONDS);
    return { token, expiresIn: TOKEN_TTL_SECONDS };
  }

  private badCredentials() {
    return new AppError('unauthorized', 'Invalid e-mail or password', { reason: 'invalid_credentials' });
  }

  private locked(until: Date) {
    const retryAfter = Math.max(1, Math.ceil((until.getTime() - Date.now()) / 1000));
    return new AppError('rate_limit_exceeded', `Too many failed logins: the account is locked for ${retryAfter} s`, { reason: 'account_locked', retryAfter });
  }

  /** CONTRACT.md section 3: INFRA_ADMIN_EMAIL / _PASSWORD create the first admin when no user exists. */
  async bootstrap(admin: { email?: string; password?: string }): Promise<void> {
    await this.db.transaction(async (m) => {
      await m.query(`SELECT pg_advisory_xact_lock(hashtextextended('infra.bootstrap', 0))`);
      let [org] = await m.query(`SELECT id FROM infra.organizations ORDER BY created_at LIMIT 1`);
      if (!org) [org] = await m.query(`INSERT INTO infra.organizations (name) VALUES ('Default organization') RETURNING id`);
      if (!admin.email || !admin.password) return;
      const [{ n }] = await m.query(`SELECT count(*)::int AS n FROM infra.users`);
      if (n > 0) return;
      await m.query(`INSERT INTO infra.users (email, name, password_hash, roles, organization_id) VALUES ($1, 'Administrator', $2, '{admin}', $3)`, [
        admin.email.trim().toLowerCase(),
        await hashSecret(admin.password),
        org.id,
      ]);
    });
  }

  // ---- users --------------------------------------------------------------------------------

  async me(p: Principal): Promise<InfraUser> {
    const caller = await this.access.caller(p);
    if (caller.kind !== 'user')
      throw new AppError('validation_error', 'An API key is not a user: /users/me needs a user token', { reason: 'not_a_user_token' });
    return this.byId(caller.id);
  }

  async list(p: Principal, page: number, limit: number, role?: string | null): Promise<InfraUserPage> {
    await this.access.caller(p, 'user:read');
    checkPage(page, limit);
    if (role != null && !ROLES.includes(role as never)) throw errors.field('role', `must be one of ${ROLES.join(', ')}`);
    const where = role ? `WHERE $3 = ANY(u.roles)` : '';
    const params = role ? [limit, (page - 1) * limit, role] : [limit, (page - 1) * limit];
    const rows = await this.db.query(
      `SELECT ${USER_COLUMNS}, count(*) OVER ()::int AS total FROM ${USER_FROM} ${where} ORDER BY u.created_at, u.id LIMIT $1 OFFSET $2`,
      params,
    );
    const total = rows[0]?.total ?? (page > 1 ? (await this.db.query(`SELECT count(*)::int AS n FROM ${USER_FROM} ${where}`, role ? [role] : []))[0].n : 0);
    return { data: rows.map(toUser), pagination: infraPage(total, page, limit) };
  }

  /** Anyone reads themself; `user:read` reads everyone. */
  async get(p: Principal, id: string): Promise<InfraUser> {
    const caller = await this.access.caller(p);
    if (!(caller.kind === 'user' && caller.id === id)) demand(caller, 'user:read');
    return this.byId(id);
  }

  async create(p: Principal, input: { email: string; name: string; password: string; roles?: string[] | null }): Promise<InfraUser> {
    await this.access.caller(p, 'user:write');
    const problems: FieldError[] = [];
    const email = String(input.email ?? '')
      .trim()
      .toLowerCase();
    if (!EMAIL.test(email) || email.length > 254) problems.push({ field: 'email', message: 'must be an e-mail address' });
    checkName(input.name, problems);
    checkPassword(input.password, problems);
    const roles = input.roles ?? ['developer'];
    checkRoles(roles, problems);
    if (problems.length) throw errors.validation(problems);
    const hashed = await hashSecret(input.password);
    try {
      const [row] = await this.db.query(
        `INSERT INTO infra.users (email, name, password_hash, roles, organization_id)
         SELECT $1, $2, $3, $4, id FROM infra.organizations ORDER BY created_at LIMIT 1 RETURNING id`,
        [email, input.name.trim(), hashed, [...new Set(roles)]],
      );
      return this.byId(row.id);
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new AppError('conflict', `A user with e-mail ${email} already exists`, { field: 'email' });
      throw err;
    }
  }

  /** Admins change anyone's name, roles and password; a person changes their own name and password. */
  async update(p: Principal, id: string, input: { name?: string | null; roles?: string[] | null; password?: string | null }): Promise<InfraUser> {
    const caller = await this.access.caller(p);
    const self = caller.kind === 'user' && caller.id === id;
    if (!self || input.roles != null) demand(caller, 'user:write');
    const target = await this.byId(id);
    const problems: FieldError[] = [];
    if (input.name != null) checkName(input.name, problems);
    if (input.password != null) checkPassword(input.password, problems);
    if (input.roles != null) checkRoles(input.roles, problems);
    if (problems.length) throw errors.validation(problems);
    await this.db.transaction(async (m) => {
      if (input.roles != null && target.roles.includes('admin') && !input.roles.includes('admin')) await this.keepAnAdmin(m, id);
      await m.query(
        `UPDATE infra.users SET name = coalesce($2, name), roles = coalesce($3, roles), password_hash = coalesce($4, password_hash), updated_at = now() WHERE id = $1`,
        [id, input.name?.trim() ?? null, input.roles ? [...new Set(input.roles)] : null, input.password != null ? await hashSecret(input.password) : null],
      );
    });
    return this.byId(id);
  }

  async remove(p: Principal, id: string): Promise<InfraDeletion> {
    const caller = await this.access.caller(p, 'user:write');
    const target = await this.byId(id);
    if (caller.kind === 'user' && caller.id === id) throw errors.conflict('You cannot delete yourself', { reason: 'self' });
    await this.db.transaction(async (m) => {
      if (target.roles.includes('admin')) await this.keepAnAdmin(m, id);
      try {
        await m.query(`DELETE FROM infra.users WHERE id = $1`, [id]);
      } catch (err) {
        if ((err as { code?: string }).code === '23503')
          throw errors.conflict(`${target.email} owns projects: transfer or delete them first`, { reason: 'owns_projects' });
        throw err;
      }
    });
    return { success: true, message: `User ${target.email} deleted` };
  }

  /** The last admin stays (under a lock, so two parallel demotions cannot both pass). */
  private async keepAnAdmin(m: { query: DataSource['query'] }, leaving: string): Promise<void> {
    await m.query(`SELECT pg_advisory_xact_lock(hashtextextended('infra.admins', 0))`);
    const [{ n }] = await m.query(`SELECT count(*)::int AS n FROM infra.users WHERE 'admin' = ANY(roles) AND id <> $1`, [leaving]);
    if (n === 0) throw errors.conflict('The organisation must keep at least one admin', { reason: 'last_admin' });
  }

  async byId(id: string): Promise<InfraUser> {
    return toUser(await rowById(this.db, 'user', id, `SELECT ${USER_COLUMNS} FROM ${USER_FROM} WHERE u.id = $1`));
  }
}

export function checkPage(page: number, limit: number): void {
  const problems: FieldError[] = [];
  if (!Number.isInteger(page) || page < 1 || page > 1_000_000) problems.push({ field: 'page', message: 'must be an integer of at least 1' });
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) problems.push({ field: 'limit', message: 'must be an integer from 1 to 100' });
  if (problems.length) throw errors.validation(problems);
}

function checkName(name: unknown, problems: FieldError[]): void {
  if (typeof name !== 'string' || !name.trim() || name.length > 200) problems.push({ field: 'name', message: 'must be 1 to 200 characters' });
}

function checkPassword(password: unknown, problems: FieldError[]): void {
  if (typeof password !== 'string' || password.length < 8 || password.length > 128)
    problems.push({ field: 'password', message: 'must be 8 to 128 characters' });
}

function checkRoles(roles: string[], problems: FieldError[]): void {
  if (!roles.length || roles.some((r) => !ROLES.includes(r as never))) problems.push({ field: 'roles', message: `must be one or more of ${ROLES.join(', ')}` });
}

function toUser(r: any): InfraUser {
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
