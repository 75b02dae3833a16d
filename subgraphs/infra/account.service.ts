import { withTransaction } from '../../kernel/db/transaction';
import type { DataSource } from 'typeorm';
import { burnVerification, hashSecret, verifySecret } from '../../kernel/auth/passwords';
import type { Principal } from '../../kernel/auth/principal';
import type { TokenSigner } from '../../kernel/auth/jwt';
import type { Queryable } from '../../kernel/db/rows';
import { AppError, errors, type FieldError } from '../../kernel/errors';
import { Access, demand, permissionsOf, ROLES, type Caller } from './access';
import { AccountStore } from './account.store';
import { infraPage, type InfraDeletion, type InfraToken, type InfraUser, type InfraUserPage } from './infra.types';

/**
 * People and their sessions. Passwords are argon2id hashes, checked in constant time (an unknown
 * e-mail costs the same hash). After LOCKOUT.failures failed logins in a row an account is locked
 * for LOCKOUT.seconds: every login, right or wrong, answers 429 with retryAfter until then.
 */

export const TOKEN_TTL_SECONDS = 3600;
export const LOCKOUT = { failures: 5, seconds: 15 * 60 };
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class AccountService {
  private readonly store: AccountStore;

  constructor(
    private readonly db: DataSource,
    private readonly tokens: TokenSigner,
    private readonly access: Access,
  ) {
    this.store = new AccountStore(db);
  }

  // ---- sessions -----------------------------------------------------------------------------

  async login(email: string, password: string): Promise<InfraToken> {
    const problems: FieldError[] = [];
    if (typeof email !== 'string' || !email.trim()) problems.push({ field: 'email', message: 'is required', reason: 'required_field_missing' });
    if (typeof password !== 'string' || !password) problems.push({ field: 'password', message: 'is required', reason: 'required_field_missing' });
    if (problems.length) throw errors.validation(problems);
    const u = await this.store.credentials(email.trim().toLowerCase());
    if (!u) {
      await burnVerification(password);
      throw this.badCredentials();
    }
    if (u.locked_until && u.locked_until > new Date()) throw this.locked(u.locked_until);
    const ok = password.length <= 1024 && (await verifySecret(u.password_hash, password));
    if (!ok) {
      // Counted and locked in one statement, so parallel guesses cannot slip past the limit.
      const after = await this.store.countFailedLogin(u.id, LOCKOUT.failures, LOCKOUT.seconds);
      if (after?.locked_until) throw this.locked(after.locked_until);
      throw this.badCredentials();
    }
    await this.store.loggedIn(u.id);
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

  /** INFRA_ADMIN_EMAIL / _PASSWORD create the first admin when no user exists. */
  async bootstrap(admin: { email?: string; password?: string }): Promise<void> {
    await withTransaction(this.db, async ({ manager: m }) => {
      await this.store.lockBootstrap(m);
      const orgId = (await this.store.firstOrganizationId(m)) ?? (await this.store.insertDefaultOrganization(m));
      if (!admin.email || !admin.password) return;
      if ((await this.store.countUsers(m)) > 0) return;
      await this.store.insertAdmin(m, admin.email.trim().toLowerCase(), await hashSecret(admin.password), orgId);
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
    const { users, total } = await this.store.list(role, page, limit);
    return { data: users, pagination: infraPage(total, page, limit) };
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
      const id = await this.store.insert({ email, name: input.name.trim(), passwordHash: hashed, roles: [...new Set(roles)] });
      return this.byId(id);
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
    await withTransaction(this.db, async ({ manager: m }) => {
      if (input.roles != null && target.roles.includes('admin') && !input.roles.includes('admin')) await this.keepAnAdmin(m, id);
      await this.store.update(m, id, {
        name: input.name?.trim() ?? null,
        roles: input.roles ? [...new Set(input.roles)] : null,
        passwordHash: input.password != null ? await hashSecret(input.password) : null,
      });
    });
    if (input.roles != null) await this.access.changed(id);
    return this.byId(id);
  }

  async remove(p: Principal, id: string): Promise<InfraDeletion> {
    const caller = await this.access.caller(p, 'user:write');
    const target = await this.byId(id);
    if (caller.kind === 'user' && caller.id === id) throw errors.conflict('You cannot delete yourself', { reason: 'self' });
    await withTransaction(this.db, async ({ manager: m }) => {
      if (target.roles.includes('admin')) await this.keepAnAdmin(m, id);
      try {
        await this.store.deleteById(m, id);
      } catch (err) {
        if ((err as { code?: string }).code === '23503')
          throw errors.conflict(`${target.email} owns projects: transfer or delete them first`, { reason: 'owns_projects' });
        throw err;
      }
    });
    await this.access.changed(id);
    return { success: true, message: `User ${target.email} deleted` };
  }

  /** The last admin stays (under a lock, so two parallel demotions cannot both pass). */
  private async keepAnAdmin(m: Queryable, leaving: string): Promise<void> {
    await this.store.lockAdmins(m);
    if ((await this.store.countAdminsExcept(m, leaving)) === 0)
      throw errors.conflict('The organisation must keep at least one admin', { reason: 'last_admin' });
  }

  async byId(id: string): Promise<InfraUser> {
    return this.store.byId(id);
  }
}

export function checkPage(page: number, limit: number): void {
  const problems: FieldError[] = [];
  if (!Number.isInteger(page) || page < 1 || page > 1_000_000) problems.push({ field: 'page', message: 'must be an integer of at least 1' });
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) problems.push({ field: 'limit', message: 'must be an integer from 1 to 100' });
  if (problems.length) throw errors.validation(problems);
}

function checkName(name: unknown, problems: FieldError[]): void {
  if (typeof name !== 'string' || !name.trim() || name.length > 200)
    problems.push({
      field: 'name',
      message: 'must be 1 to 200 characters',
      reason: typeof name === 'string' && name.length > 200 ? 'too_long' : 'invalid_value',
    });
}

function checkPassword(password: unknown, problems: FieldError[]): void {
  if (typeof password !== 'string' || password.length < 8 || password.length > 128)
    problems.push({
      field: 'password',
      message: 'must be 8 to 128 characters',
      reason: typeof password === 'string' && password.length > 128 ? 'too_long' : 'invalid_value',
    });
}

function checkRoles(roles: string[], problems: FieldError[]): void {
  if (!roles.length || roles.some((r) => !ROLES.includes(r as never))) problems.push({ field: 'roles', message: `must be one or more of ${ROLES.join(', ')}` });
}
