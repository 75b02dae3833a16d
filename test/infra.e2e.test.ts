import assert from 'node:assert/strict';
import os from 'node:os';
import { verifySignature } from '../kernel/webhooks';
import type { Gql, InfraError } from './support/answers';
import { localWebhooksEnv } from './support/fixtures';
import type { Answer as DocumentedAnswer } from './support/openapi-client';
import type { operations } from './support/openapi-types';
import { startTestPlatform, type Answer, type TestPlatform } from './support/platform';
import { subscribe, wsClient } from './support/subscribe';
import { readUntil, until } from './support/until';
import { webhookReceiver, type ReceivedRequest } from './support/webhook-receiver';

/**
 * The infrastructure service on the local driver: sign-in and lockout, roles
 * on every path, users, projects and members, services with deploy and rollback through the
 * rollout state machine, logs (also followed), cluster figures of this host, signed webhooks,
 * alerts, the hourly limits, and the same operations over GraphQL with deploymentUpdated.
 */

const API = '/infra/api/v1';

/** The 2xx answer the API description documents for an infra operation. */
type Ok<K extends keyof operations> = DocumentedAnswer<operations[K]>;
type Token = Ok<'infraPostAuthLogin'>;
type User = Ok<'infraGetUsersById'>;
type Users = Ok<'infraGetUsers'>;
type Project = Ok<'infraGetProjectsById'>;
type Projects = Ok<'infraGetProjects'>;
type Service = Ok<'infraGetServicesById'>;
type Services = Ok<'infraGetServices'>;
type Deployment = Ok<'infraGetDeploymentsById'>;
type Deployments = Ok<'infraGetServicesByIdDeployments'>;
type Alerts = Ok<'infraGetInfrastructureAlerts'>;
type Webhooks = Ok<'infraGetWebhooks'>;
type Deliveries = Ok<'infraGetWebhooksByIdDeliveries'>;
/** `{success, message}`, the answer of a DELETE. */
type Deleted = Ok<'infraDeleteUsersById'>;
/** A registration as created: its secret is shown this once. */
type Registration = Ok<'infraPostWebhooks'> & { secret: string };
/** The log lines (the description leaves their fields open). */
interface Logs {
  logs: { timestamp: string; level: string; message: string; pod: string }[];
}
/** A 400 listing every refused field. */
type Refusal = InfraError & { details: { errors: { field: string }[] } };
/** A 429, with the seconds to wait. */
type Limited = InfraError & { retryAfter: number };
/** The body of a webhook delivery, with the fields of the deployment and alert events the tests read. */
interface InfraEvent {
  id: string;
  event: string;
  timestamp: string;
  data: {
    deploymentId: string;
    status: string;
    supersededBy?: string;
    image: string;
    service: { name: string };
    duration: number;
    rule?: string;
    subject?: string;
  };
}

const ADMIN = { email: 'root@infra.test', password: 'admin-password-1' };
let p: TestPlatform;
let admin: string;

const receiver = webhookReceiver(() => 204);
const received = receiver.requests as (ReceivedRequest & { body: InfraEvent })[];
let hookUrl: string;

beforeAll(async () => {
  p = await startTestPlatform({
    INFRA_ADMIN_EMAIL: ADMIN.email,
    INFRA_ADMIN_PASSWORD: ADMIN.password,
    LOCAL_ROLLOUT_STEP_MS: '25',
    INFRA_WATCH_INTERVAL_MS: '20',
    // Idle workers look for jobs hourly: a delivery that starts promptly was woken after its COMMIT.
    WORKER_POLL_MS: '3600000',
    ...localWebhooksEnv,
  });
  hookUrl = `${(await receiver.start()).url}/hooks/infra`;
  admin = (await login(ADMIN.email, ADMIN.password)).body.token;
});
afterAll(async () => {
  await p?.stop();
  await receiver.close();
});

/** Calls the infra surface with a JWT (Bearer) or an API key (X-API-Key). */
function call<T = InfraError>(method: string, path: string, o: { token?: string | null; apiKey?: string; body?: unknown } = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = o.apiKey ? { 'x-api-key': o.apiKey } : {};
  const token = o.token === undefined ? admin : o.token;
  return p.rest<T>(method, API + path, { key: o.apiKey ? null : token, body: o.body, headers });
}
const login = <T = Token>(email: string, password: string) => call<T>('POST', '/auth/login', { token: null, body: { email, password } });

function assertError(res: Answer<unknown>, status: number, code: string) {
  const body = res.body as InfraError;
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.error, code, JSON.stringify(body));
  assert.equal(typeof body.message, 'string');
  assert.equal(typeof body.details, 'object');
  assert.match(body.requestId, /^req_/);
}

let seq = 0;
async function user(roles: string[], password = 'user-password-1') {
  const email = `u${++seq}-${roles.join('-')}@infra.test`;
  const created = await call<User>('POST', '/users', { body: { email, name: `User ${seq}`, password, roles } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const token = (await login(email, password)).body.token;
  return { id: created.body.id, email, token };
}

async function project(token = admin, body: Record<string, unknown> = {}) {
  const res = await call<Project>('POST', '/projects', { token, body: { name: `Project ${++seq}`, description: 'd', ...body } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

async function settled(deploymentId: string) {
  return until(`deployment ${deploymentId} to finish`, async () => {
    const d = (await call<Deployment>('GET', `/deployments/${deploymentId}`)).body;
    return d.status !== 'in-progress' ? d : null;
  });
}

describe('auth', () => {
  test('POST /auth/login: {token, expiresIn 3600}; the token opens /users/me; refresh gives a new one', async () => {
    const res = await login(ADMIN.email, ADMIN.password);
    assert.equal(res.status, 200);
    assert.equal(res.body.expiresIn, 3600);
    assert.equal(res.body.token.split('.').length, 3);
    const me = await call<User>('GET', '/users/me', { token: res.body.token });
    assert.equal(me.status, 200);
    assert.deepEqual({ email: me.body.email, roles: me.body.roles }, { email: ADMIN.email, roles: ['admin'] });
    assert.ok(me.body.organization.id && me.body.organization.name);
    assert.ok(me.body.lastLoginAt);
    const refreshed = await call<Token>('POST', '/auth/refresh', { token: res.body.token });
    assert.equal(refreshed.status, 200);
    assert.equal(refreshed.body.expiresIn, 3600);
    assert.equal((await call('GET', '/users/me', { token: refreshed.body.token })).status, 200);
  });

  test('wrong password and unknown e-mail: 401 authentication_failed; missing fields 400 invalid_request', async () => {
    assertError(await login(ADMIN.email, 'not-the-password'), 401, 'authentication_failed');
    assertError(await login('nobody@infra.test', 'whatever-1'), 401, 'authentication_failed');
    const missing = await login<Refusal>('', '');
    assertError(missing, 400, 'invalid_request');
    assert.deepEqual(missing.body.details.errors.map((e: { field: unknown }) => e.field).sort(), ['email', 'password']);
  });

  test('no credential, a forged token, a feedback token: 401 authentication_failed', async () => {
    assertError(await call('GET', '/users/me', { token: null }), 401, 'authentication_failed');
    assertError(await call('GET', '/users/me', { token: `${admin.slice(0, -4)}AAAA` }), 401, 'authentication_failed');
    const feedbackToken = await p.platform.kernel.tokens.issue({ userId: 'x', service: 'feedback', roles: [], permissions: ['*'] }, 60);
    assertError(await call('GET', '/projects', { token: feedbackToken }), 401, 'authentication_failed');
  });

  test('5 failed logins in a row lock the account: 429 rate_limit_exceeded with retryAfter, even with the right password', async () => {
    const u = await user(['developer'], 'locked-out-pass');
    for (let i = 0; i < 4; i++) assertError(await login(u.email, `wrong-${i}-password`), 401, 'authentication_failed');
    const fifth = await login<Limited>(u.email, 'wrong-5-password');
    assertError(fifth, 429, 'rate_limit_exceeded');
    assert.ok(fifth.body.retryAfter > 800 && fifth.body.retryAfter <= 900, String(fifth.body.retryAfter));
    const right = await login<InfraError>(u.email, 'locked-out-pass');
    assertError(right, 429, 'rate_limit_exceeded');
    assert.equal(right.body.details.reason, 'account_locked');
    // The token issued before the lockout still works: the lock is on signing in.
    assert.equal((await call('GET', '/users/me', { token: u.token })).status, 200);
  });

  test('the password is stored as an argon2id hash, never in a response', async () => {
    const u = await user(['developer'], 'visible-nowhere-1');
    const { Client } = await import('pg');
    const c = new Client({ connectionString: p.db.url });
    await c.connect();
    const { rows } = await c.query(`SELECT password_hash FROM infra.users WHERE id = $1`, [u.id]);
    await c.end();
    assert.match(rows[0].password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    const got = await call<User>('GET', `/users/${u.id}`);
    assert.ok(!JSON.stringify(got.body).includes('visible-nowhere-1') && !('password' in got.body) && !('passwordHash' in got.body));
  });
});

describe('users and roles', () => {
  test('POST /users (admin): 201 with the documented fields; duplicate e-mail 409 conflict; bad fields 400 with details', async () => {
    const res = await call<User>('POST', '/users', {
      body: { email: 'New.Person@Infra.test', name: 'New Person', password: 'long-enough-1', roles: ['maintainer'] },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(
      { email: res.body.email, name: res.body.name, roles: res.body.roles },
      { email: 'new.person@infra.test', name: 'New Person', roles: ['maintainer'] },
    );
    assert.ok(res.body.id && res.body.createdAt);
    assertError(await call('POST', '/users', { body: { email: 'new.person@infra.test', name: 'Again', password: 'long-enough-1' } }), 409, 'conflict');
    const bad = await call<Refusal>('POST', '/users', { body: { email: 'not-an-email', name: '', password: 'short', roles: ['root'] } });
    assertError(bad, 400, 'invalid_request');
    assert.deepEqual(bad.body.details.errors.map((e: { field: unknown }) => e.field).sort(), ['email', 'name', 'password', 'roles']);
    const missing = await call('POST', '/users', { body: { name: 'x' } });
    assertError(missing, 400, 'invalid_request');
  });

  test('a 400 names the first refused field and why in details.field and details.reason; details.errors keeps them all', async () => {
    const reasonOf = (res: Answer<InfraError>) => ({ field: res.body.details.field, reason: res.body.details.reason });
    const missing = await call<Refusal>('POST', '/users', { body: { name: 'No Mail', password: 'long-enough-1' } });
    assertError(missing, 400, 'invalid_request');
    assert.deepEqual(reasonOf(missing), { field: 'email', reason: 'required_field_missing' });
    assert.deepEqual(
      missing.body.details.errors.map((e: { field: unknown }) => e.field),
      ['email'],
    );
    const wrongType = await call('POST', '/auth/login', { token: null, body: { email: 42, password: 'whatever-1' } });
    assertError(wrongType, 400, 'invalid_request');
    assert.deepEqual(reasonOf(wrongType), { field: 'email', reason: 'invalid_type' });
    const notAList = await call('POST', '/users', { body: { email: 'list@infra.test', name: 'L', password: 'long-enough-1', roles: 'developer' } });
    assert.deepEqual(reasonOf(notAList), { field: 'roles', reason: 'invalid_type' });
    const badValue = await call('GET', '/users?role=root');
    assertError(badValue, 400, 'invalid_request');
    assert.deepEqual(reasonOf(badValue), { field: 'role', reason: 'invalid_value' });
    const tooLong = await call('POST', '/projects', { body: { name: 'x'.repeat(101), visibility: 'private' } });
    assertError(tooLong, 400, 'invalid_request');
    assert.deepEqual(reasonOf(tooLong), { field: 'name', reason: 'too_long' });
    const unknown = await call('POST', '/users', { body: { email: 'u@infra.test', name: 'U', password: 'long-enough-1', nickname: 'u' } });
    assert.deepEqual(reasonOf(unknown), { field: 'nickname', reason: 'unknown_field' });
    // A refusal that is not about one field keeps the platform's own reason.
    assert.equal((await call('GET', '/users/me', { token: null })).body.details.reason, 'missing_authorization');
  });

  test('GET /users: {data, pagination {page, limit, total, totalPages}} and the role filter', async () => {
    await user(['developer']);
    await user(['developer']);
    const all = await call<Users>('GET', '/users?page=1&limit=2');
    assert.equal(all.status, 200);
    assert.equal(all.body.data.length, 2);
    const { total } = all.body.pagination;
    assert.deepEqual(all.body.pagination, { page: 1, limit: 2, total, totalPages: Math.ceil(total / 2) });
    const last = await call<Users>('GET', `/users?page=${Math.ceil(total / 2)}&limit=2`);
    assert.equal(last.body.data.length, total % 2 || 2);
    const devs = await call<Users>('GET', '/users?role=developer&limit=100');
    assert.ok(devs.body.data.length >= 2 && devs.body.data.every((u: { roles: string[] }) => u.roles.includes('developer')));
    assertError(await call('GET', '/users?role=root'), 400, 'invalid_request');
    assertError(await call('GET', '/users?limit=500'), 400, 'invalid_request');
  });

  test('the permission matrix: developers read, maintainers write projects, only admins manage users', async () => {
    const dev = await user(['developer']);
    const maint = await user(['maintainer']);
    assertError(await call('GET', '/users', { token: dev.token }), 403, 'insufficient_permissions');
    assert.equal((await call('GET', '/users', { token: maint.token })).status, 200);
    assertError(
      await call('POST', '/users', { token: maint.token, body: { email: 'x@infra.test', name: 'x', password: 'long-enough-1' } }),
      403,
      'insufficient_permissions',
    );
    assertError(await call('POST', '/projects', { token: dev.token, body: { name: 'Not mine' } }), 403, 'insufficient_permissions');
    assert.equal((await call('POST', '/projects', { token: maint.token, body: { name: `Maint ${seq}` } })).status, 201);
    assertError(await call('POST', '/webhooks', { token: dev.token, body: { url: hookUrl, events: ['deployment.created'] } }), 403, 'insufficient_permissions');
    assert.equal((await call('GET', '/infrastructure/cluster', { token: dev.token })).status, 200);
    // A person reads themself without user:read.
    assert.equal((await call('GET', `/users/${dev.id}`, { token: dev.token })).status, 200);
    assertError(await call('GET', `/users/${maint.id}`, { token: dev.token }), 403, 'insufficient_permissions');
  });

  test('PATCH /users/:id: admins change roles (a demotion at once, not at token expiry); people their own name only', async () => {
    const u = await user(['developer']);
    const renamed = await call<User>('PATCH', `/users/${u.id}`, { token: u.token, body: { name: 'Renamed' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'Renamed');
    assert.ok(new Date(renamed.body.updatedAt) >= new Date(renamed.body.createdAt));
    assertError(await call('PATCH', `/users/${u.id}`, { token: u.token, body: { roles: ['admin'] } }), 403, 'insufficient_permissions');
    const promoted = await call<User>('PATCH', `/users/${u.id}`, { body: { roles: ['maintainer'] } });
    assert.deepEqual(promoted.body.roles, ['maintainer']);
    // A promotion comes with the next token; a demotion takes effect at once, on the old token too.
    const promotedToken = (await call<Token>('POST', '/auth/refresh', { token: u.token })).body.token;
    assert.equal((await call('GET', '/users', { token: promotedToken })).status, 200);
    await call('PATCH', `/users/${u.id}`, { body: { roles: ['developer'] } });
    assertError(await call('GET', '/users', { token: promotedToken }), 403, 'insufficient_permissions');
  });

  test("DELETE /users/:id: {success, message}; the deleted person's token stops working; the last admin stays", async () => {
    const u = await user(['developer']);
    const res = await call<Deleted>('DELETE', `/users/${u.id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    assert.equal(typeof res.body.message, 'string');
    assertError(await call('GET', '/users/me', { token: u.token }), 401, 'authentication_failed');
    assertError(await call('GET', `/users/${u.id}`), 404, 'not_found');
    const me = (await call<User>('GET', '/users/me')).body;
    assertError(await call('DELETE', `/users/${me.id}`), 409, 'conflict');
    assertError(await call('PATCH', `/users/${me.id}`, { body: { roles: ['developer'] } }), 409, 'conflict');
  });
});

describe('projects', () => {
  test('POST /projects: status active, owner, members, repository and ci; GET one has members, the list their count', async () => {
    const maint = await user(['maintainer']);
    const created = await project(maint.token, {
      visibility: 'private',
      repository: { url: 'https://git.example/acme/api', branch: 'trunk' },
      ci: { enabled: true, provider: 'github-actions' },
    });
    assert.equal(created.status, 'active');
    assert.equal(created.visibility, 'private');
    assert.deepEqual(created.owner, { id: maint.id, name: `User ${seq - 1}`, email: maint.email });
    assert.deepEqual(created.members, [{ id: maint.id, name: `User ${seq - 1}`, role: 'owner' }]);
    assert.deepEqual(created.repository, { url: 'https://git.example/acme/api', branch: 'trunk' });
    assert.deepEqual(created.ci, { enabled: true, provider: 'github-actions' });
    const list = await call<Projects>('GET', '/projects?limit=100', { token: maint.token });
    assert.equal(list.status, 200);
    const listed = list.body.data.find((x: { id: unknown }) => x.id === created.id);
    assert.equal(listed!.members, 1);
    assert.ok(['page', 'limit', 'total'].every((k) => k in list.body.pagination));
    const got = await call<Project>('GET', `/projects/${created.id}`, { token: maint.token });
    assert.deepEqual(got.body.members, created.members);
    assertError(await call('POST', '/projects', { token: maint.token, body: { name: created.name } }), 409, 'conflict');
    assertError(
      await call('POST', '/projects', { token: maint.token, body: { name: 'x', visibility: 'secret', repository: { url: 'ftp://x' } } }),
      400,
      'invalid_request',
    );
  });

  test('a private project is invisible to non-members (404), visible once they are added; only owners manage members', async () => {
    const owner = await user(['maintainer']);
    const dev = await user(['developer']);
    const other = await user(['maintainer']);
    const pr = await project(owner.token, { visibility: 'private' });
    assertError(await call('GET', `/projects/${pr.id}`, { token: dev.token }), 404, 'not_found');
    assert.ok(!(await call<Projects>('GET', '/projects?limit=100', { token: dev.token })).body.data.some((x: { id: unknown }) => x.id === pr.id));
    assertError(await call('POST', `/projects/${pr.id}/members`, { token: dev.token, body: { userId: dev.id } }), 403, 'insufficient_permissions');
    const added = await call('POST', `/projects/${pr.id}/members`, { token: owner.token, body: { userId: dev.id, role: 'contributor' } });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    assert.equal((await call('GET', `/projects/${pr.id}`, { token: dev.token })).status, 200);
    await call('POST', `/projects/${pr.id}/members`, { token: owner.token, body: { userId: other.id } });
    const updated = await call('PATCH', `/projects/${pr.id}`, { token: other.token, body: { description: 'changed by a contributor' } });
    assert.equal(updated.status, 200);
    const archived = await call<Project>('PATCH', `/projects/${pr.id}`, { token: owner.token, body: { status: 'archived' } });
    assert.equal(archived.body.status, 'archived');
    const ids = async (status: string) =>
      (await call<Projects>('GET', `/projects?status=${status}&limit=100`, { token: owner.token })).body.data.map((x: { id: unknown }) => x.id);
    assert.ok((await ids('archived')).includes(pr.id));
    assert.ok(!(await ids('active')).includes(pr.id));
    assertError(await call('DELETE', `/projects/${pr.id}`, { token: other.token }), 403, 'insufficient_permissions');
    assertError(await call('DELETE', `/projects/${pr.id}/members/${owner.id}`, { token: owner.token }), 409, 'conflict');
    assert.equal((await call('DELETE', `/projects/${pr.id}`, { token: owner.token })).status, 200);
  });

  test('an infrastructure API key (X-API-Key) acts organisation-wide within its permissions', async () => {
    const key = (await p.createKey({ service: 'infra', permissions: ['project:read', 'project:write'] })).key;
    assert.match(key, /^inf_live_/);
    const res = await call<Project>('POST', '/projects', { apiKey: key, body: { name: `Keyed ${++seq}` } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.owner, null);
    assert.equal((await call('GET', `/projects/${res.body.id}`, { apiKey: key })).status, 200);
    assertError(await call('GET', '/services', { apiKey: key }), 403, 'insufficient_permissions');
    assertError(await call('GET', '/services', { apiKey: 'inf_live_notakey' }), 401, 'authentication_failed');
  });
});

describe('services, deploy, rollback (local driver)', () => {
  let pr: { id: string; slug: string };
  let svc: Service;

  beforeAll(async () => {
    pr = await project(admin, { name: `Shop ${++seq}` });
  });

  test('POST /services creates the service and rolls it out: deploying, then running with every replica', async () => {
    const res = await call<Service>('POST', '/services', {
      body: { project: pr.id, name: 'api', type: 'backend', image: 'registry.example.com/shop/api:1.0.0', replicas: 3 },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    svc = res.body;
    assert.deepEqual(
      { name: svc.name, type: svc.type, image: svc.image, status: svc.status, desired: svc.replicas.desired },
      { name: 'api', type: 'backend', image: 'registry.example.com/shop/api:1.0.0', status: 'deploying', desired: 3 },
    );
    assert.deepEqual(svc.endpoints, [`http://api.${pr.slug}.svc.cluster.local`]);
    const running = await until('the service to run', async () => {
      const s = (await call<Service>('GET', `/services/${svc.id}`)).body;
      return s.status === 'running' ? s : null;
    });
    assert.deepEqual(running.replicas, { desired: 3, ready: 3, available: 3 });
    assert.equal(running.health.status, 'healthy');
    assert.ok(running.health.lastCheck);
    const list = await call<Services>('GET', `/services?project=${pr.id}&status=running`);
    assert.deepEqual(
      list.body.data.map((s: { id: unknown }) => s.id),
      [svc.id],
    );
    assert.deepEqual(list.body.pagination, { page: 1, limit: 20, total: 1, totalPages: 1 });
    assertError(await call('POST', '/services', { body: { project: pr.id, name: 'api', image: 'x:1' } }), 409, 'conflict');
    const bad = await call<Refusal>('POST', '/services', {
      body: { project: pr.id, name: 'Not_A_Label', image: 'UPPER CASE', replicas: 1000, strategy: 'blue-green' },
    });
    assertError(bad, 400, 'invalid_request');
    assert.deepEqual(bad.body.details.errors.map((e: { field: unknown }) => e.field).sort(), ['image', 'name', 'replicas', 'strategy']);
    assertError(await call('POST', '/services', { body: { project: '00000000-0000-4000-8000-000000000000', name: 'x', image: 'x:1' } }), 404, 'not_found');
  });

  test('POST /services/:id/deploy: 202 {deploymentId, status in-progress, progress, createdAt}; it completes', async () => {
    const res = await call<Deployment>('POST', `/services/${svc.id}/deploy`, {
      body: { image: 'registry.example.com/shop/api:1.1.0', replicas: 3, strategy: 'rolling-update' },
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.status, 'in-progress');
    assert.deepEqual(Object.keys(res.body.progress).sort(), ['available', 'desired', 'ready', 'updated']);
    assert.ok(res.body.deploymentId && res.body.createdAt);
    assert.equal(res.body.previousImage, 'registry.example.com/shop/api:1.0.0');
    const done = await settled(res.body.deploymentId);
    assert.equal(done.status, 'success');
    assert.deepEqual(done.progress, { updated: 3, ready: 3, available: 3, desired: 3 });
    assert.equal(done.message, 'deployment "api" successfully rolled out');
    assert.equal(done.revision, '2');
    const history = await call<Deployments>('GET', `/services/${svc.id}/deployments`);
    assert.deepEqual(
      history.body.data.map((d: { kind: unknown; targetImage: unknown; status: unknown }) => [d.kind, d.targetImage, d.status]),
      [
        ['deploy', 'registry.example.com/shop/api:1.1.0', 'success'],
        ['create', 'registry.example.com/shop/api:1.0.0', 'success'],
      ],
    );
  });

  test('POST /services/:id/rollback: default the previous revision; a named revision; an unknown one 400', async () => {
    const back = await call<Deployment>('POST', `/services/${svc.id}/rollback`, { body: {} });
    assert.equal(back.status, 202, JSON.stringify(back.body));
    assert.deepEqual(
      { status: back.body.status, targetImage: back.body.targetImage, previousImage: back.body.previousImage },
      {
        status: 'in-progress',
        targetImage: 'registry.example.com/shop/api:1.0.0',
        previousImage: 'registry.example.com/shop/api:1.1.0',
      },
    );
    const done = await settled(back.body.deploymentId);
    assert.equal(done.status, 'success');
    assert.equal(done.revision, '3', 'kubectl numbering: the rolled-back template becomes the newest revision');
    assert.equal((await call<Service>('GET', `/services/${svc.id}`)).body.image, 'registry.example.com/shop/api:1.0.0');
    const unknown = await call<InfraError>('POST', `/services/${svc.id}/rollback`, { body: { revision: '99' } });
    assertError(unknown, 400, 'invalid_request');
    assert.deepEqual(unknown.body.details.available, ['2', '3']);
    const named = await call<Deployment>('POST', `/services/${svc.id}/rollback`, { body: { revision: '2' } });
    assert.equal(named.body.targetImage, 'registry.example.com/shop/api:1.1.0');
    await settled(named.body.deploymentId);
  });

  test('recreate: every old replica goes before the new ones come', async () => {
    const res = await call<Deployment>('POST', `/services/${svc.id}/deploy`, { body: { image: 'registry.example.com/shop/api:2.0.0', strategy: 'recreate' } });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal((await settled(res.body.deploymentId)).status, 'success');
    // The rollout's own events, in order: the old replicas all stop before the first new one starts.
    const lines = (await call<Logs>('GET', `/services/${svc.id}/logs?lines=50`)).body.logs.map((l: { message: string }) => l.message as string);
    const scaled = lines.findIndex((m: string) => m.includes('api:2.0.0') && m.startsWith('Scaling up'));
    const stopped = lines.findIndex((m: string, i: number) => i > scaled && m === 'Stopped an old replica (0 left)');
    const started = lines.findIndex((m: string, i: number) => i > scaled && m.startsWith('Container started from registry.example.com/shop/api:2.0.0'));
    assert.ok(scaled >= 0 && stopped > scaled && started > stopped, lines.slice(scaled).join(' | '));
  });

  test('a rollout that cannot progress fails: deployment failed, service failed, a deployment_failed alert', async () => {
    const s = (
      await call<Service>('POST', '/services', {
        body: { project: pr.id, name: 'worker', type: 'worker', image: 'registry.example.com/shop/worker:1.0.0', replicas: 1 },
      })
    ).body;
    await until('worker running', async () => (await call<Service>('GET', `/services/${s.id}`)).body.status === 'running');
    const res = await call<Deployment>('POST', `/services/${s.id}/deploy`, { body: { image: 'registry.example.com/shop/worker:fail-missing' } });
    const done = await settled(res.body.deploymentId);
    assert.equal(done.status, 'failed');
    assert.equal(done.message, 'deployment "worker" exceeded its progress deadline');
    assert.equal((await call<Service>('GET', `/services/${s.id}`)).body.status, 'failed');
    const alerts = await until('the alert', async () => {
      const a = (await call<Alerts>('GET', '/infrastructure/alerts?open=true')).body.data.filter(
        (x: { rule: unknown; subject: unknown }) => x.rule === 'deployment_failed' && x.subject === s.id,
      );
      return a.length ? a : null;
    });
    assert.equal(alerts[0].severity, 'critical');
    // Rolling back repairs it and resolves the alert.
    const back = await call<Deployment>('POST', `/services/${s.id}/rollback`, { body: {} });
    assert.equal((await settled(back.body.deploymentId)).status, 'success');
    await until(
      'the alert resolved',
      async () => !(await call<Alerts>('GET', '/infrastructure/alerts?open=true')).body.data.some((x: { subject: unknown }) => x.subject === s.id),
    );
  });

  test('developers read services and logs but cannot deploy; members of other projects cannot touch this one', async () => {
    const dev = await user(['developer']);
    const maint = await user(['maintainer']);
    const internal = await project(admin, { visibility: 'internal' });
    const s = (await call<Service>('POST', '/services', { body: { project: internal.id, name: 'web', type: 'frontend', image: 'web:1' } })).body;
    assert.equal((await call('GET', `/services/${s.id}`, { token: dev.token })).status, 200);
    assertError(await call('POST', `/services/${s.id}/deploy`, { token: dev.token, body: { image: 'web:2' } }), 403, 'insufficient_permissions');
    assertError(await call('POST', `/services/${s.id}/deploy`, { token: maint.token, body: { image: 'web:2' } }), 403, 'insufficient_permissions');
    await call('POST', `/projects/${internal.id}/members`, { body: { userId: maint.id } });
    await until('web running', async () => (await call<Service>('GET', `/services/${s.id}`)).body.status === 'running');
    const ok = await call<Deployment>('POST', `/services/${s.id}/deploy`, { token: maint.token, body: { image: 'web:2' } });
    assert.equal(ok.status, 202, JSON.stringify(ok.body));
    await settled(ok.body.deploymentId);
    assertError(await call('DELETE', `/projects/${internal.id}`), 409, 'conflict');
    const del = await call<Deleted>('DELETE', `/services/${s.id}`);
    assert.equal(del.body.success, true);
    assertError(await call('GET', `/services/${s.id}`), 404, 'not_found');
  });

  test('GET /services/:id/logs: {logs: [{timestamp, level, message, pod}]}, lines honoured; follow=true streams new lines', async () => {
    const logs = await call<Logs>('GET', `/services/${svc.id}/logs?lines=5`);
    assert.equal(logs.status, 200, JSON.stringify(logs.body));
    assert.equal(logs.body.logs.length, 5);
    for (const l of logs.body.logs) assert.deepEqual(Object.keys(l).sort(), ['level', 'message', 'pod', 'timestamp']);
    assertError(await call('GET', `/services/${svc.id}/logs?lines=abc`), 400, 'invalid_request');
    assertError(await call('GET', `/services/${svc.id}/logs`, { token: null }), 401, 'authentication_failed');

    const abort = new AbortController();
    const res = await fetch(`${p.url}${API}/services/${svc.id}/logs?lines=1&follow=true`, {
      headers: { authorization: `Bearer ${admin}` },
      signal: abort.signal,
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/x-ndjson/);
    const reader = res.body!.getReader();
    const lines: { message: string }[] = [];
    let buffer = '';
    const read = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += Buffer.from(value).toString('utf8');
        const parts = buffer.split('\n');
        buffer = parts.pop()!;
        for (const part of parts) if (part) lines.push(JSON.parse(part));
      }
    })().catch(() => undefined);
    await until('the tail line', async () => lines.length >= 1);
    const d = await call<Deployment>('POST', `/services/${svc.id}/deploy`, { body: { image: 'registry.example.com/shop/api:3.0.0' } });
    await until('lines of the new rollout', async () => lines.some((l) => l.message.includes('api:3.0.0')));
    await settled(d.body.deploymentId);
    abort.abort();
    await read;
    assert.ok(lines.length >= 3);
  });
});

describe('a deploy or rollback during a rollout supersedes it, as kubectl set image does', () => {
  let pr: { id: string };
  const deployments = async (serviceId: string) => (await call<Deployments>('GET', `/services/${serviceId}/deployments?limit=100`)).body.data;

  beforeAll(async () => {
    pr = await project(admin, { name: `Rolling ${++seq}` });
  });

  test('a deploy right after create: 202, the create ends superseded, the new image rolls out; a signed deployment.superseded', async () => {
    const reg = await call<Registration>('POST', '/webhooks', { body: { url: `${receiver.url}/reach/superseded`, events: ['deployment.superseded'] } });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    const created = await call<Service>('POST', '/services', {
      body: { project: pr.id, name: 'web', image: 'registry.example.com/shop/web:1.0.0', replicas: 6 },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const svc = created.body;
    const [first] = await deployments(svc.id);
    assert.equal(first.status, 'in-progress');
    const res = await call<Deployment>('POST', `/services/${svc.id}/deploy`, { body: { image: 'registry.example.com/shop/web:1.1.0' } });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.status, 'in-progress');
    const old = (await call<Deployment>('GET', `/deployments/${first.deploymentId}`)).body;
    assert.equal(old.status, 'superseded');
    assert.ok(old.finishedAt, 'a superseded rollout is finished');
    assert.match(old.message!, /superseded by a deploy of registry\.example\.com\/shop\/web:1\.1\.0/i);
    const done = await settled(res.body.deploymentId);
    assert.equal(done.status, 'success');
    assert.deepEqual(done.progress, { updated: 6, ready: 6, available: 6, desired: 6 });
    const service = (await call<Service>('GET', `/services/${svc.id}`)).body;
    assert.deepEqual({ image: service.image, status: service.status }, { image: 'registry.example.com/shop/web:1.1.0', status: 'running' });
    assert.deepEqual(
      (await deployments(svc.id)).map((d) => [d.kind, d.status]),
      [
        ['deploy', 'success'],
        ['create', 'superseded'],
      ],
    );
    const hook = await until('the superseded delivery', async () => received.find((r) => r.path === '/reach/superseded') ?? null);
    assert.equal(hook.event, 'deployment.superseded');
    assert.ok(verifySignature(reg.body.secret, hook.raw, String(hook.signature)), 'signed with the registration secret');
    assert.deepEqual(
      {
        event: hook.body.event,
        deploymentId: hook.body.data.deploymentId,
        status: hook.body.data.status,
        supersededBy: hook.body.data.supersededBy,
        image: hook.body.data.image,
        service: hook.body.data.service.name,
      },
      {
        event: 'deployment.superseded',
        deploymentId: first.deploymentId,
        status: 'superseded',
        supersededBy: res.body.deploymentId,
        image: 'registry.example.com/shop/web:1.0.0',
        service: 'web',
      },
    );
    assert.equal(typeof hook.body.data.duration, 'number');
    assert.equal((await call('DELETE', `/webhooks/${reg.body.id}`)).status, 200);
  });

  test('5 concurrent deploys: every one answers 202, one rollout is left running and the newest image wins', async () => {
    const svc = (await call<Service>('POST', '/services', { body: { project: pr.id, name: 'race', image: 'registry.example.com/shop/race:0', replicas: 10 } }))
      .body;
    await settled((await deployments(svc.id))[0].deploymentId);
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => call('POST', `/services/${svc.id}/deploy`, { body: { image: `registry.example.com/shop/race:${n}` } })),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      [202, 202, 202, 202, 202],
      JSON.stringify(answers.map((a) => a.body)),
    );
    const ours = (await deployments(svc.id)).filter((d) => d.kind === 'deploy');
    assert.equal(ours.length, 5);
    // Newest first: the last one to take the service's lock is the one left; the four before it were superseded.
    assert.deepEqual(
      ours.slice(1).map((d) => d.status),
      ['superseded', 'superseded', 'superseded', 'superseded'],
    );
    assert.ok(['in-progress', 'success'].includes(ours[0].status), ours[0].status);
    assert.ok(ours.filter((d) => d.status === 'in-progress').length <= 1);
    const done = await settled(ours[0].deploymentId);
    assert.equal(done.status, 'success');
    const service = (await call<Service>('GET', `/services/${svc.id}`)).body;
    assert.equal(service.image, ours[0].targetImage, 'the service runs the image of the rollout that was left');
    assert.equal(service.status, 'running');
    // The database holds at most one rollout in progress per service whatever the code does.
    const duplicate = await p.platform.kernel.db
      .query(
        `INSERT INTO infra.deployments (service_id, kind, strategy, target_image, replicas, created_by)
           SELECT service_id, 'deploy', strategy, 'x:1', replicas, 'test' FROM infra.deployments WHERE id = $1
         UNION ALL
         SELECT service_id, 'deploy', strategy, 'x:2', replicas, 'test' FROM infra.deployments WHERE id = $1`,
        [ours[0].deploymentId],
      )
      .then(
        () => null,
        (err: { code?: string }) => err.code,
      );
    assert.equal(duplicate, '23505');
  });

  test('a rollback during a rollout supersedes it too, back to the revision before the one rolling out', async () => {
    const svc = (await call<Service>('POST', '/services', { body: { project: pr.id, name: 'undo', image: 'registry.example.com/shop/undo:1', replicas: 6 } }))
      .body;
    await settled((await deployments(svc.id))[0].deploymentId);
    const bad = await call<Deployment>('POST', `/services/${svc.id}/deploy`, { body: { image: 'registry.example.com/shop/undo:2' } });
    assert.equal(bad.status, 202);
    const back = await call<Deployment>('POST', `/services/${svc.id}/rollback`, { body: {} });
    assert.equal(back.status, 202, JSON.stringify(back.body));
    assert.equal(back.body.targetImage, 'registry.example.com/shop/undo:1');
    assert.equal((await call<Deployment>('GET', `/deployments/${bad.body.deploymentId}`)).body.status, 'superseded');
    assert.equal((await settled(back.body.deploymentId)).status, 'success');
    assert.equal((await call<Service>('GET', `/services/${svc.id}`)).body.image, 'registry.example.com/shop/undo:1');
  });
});

describe('the deploy and rollback answers are the ones the API description documents', () => {
  type Documented = { content: { 'application/json': { examples: Record<string, { value: Record<string, unknown> }> } } };
  let responses: (route: string) => Record<string, Documented | undefined>;

  beforeAll(async () => {
    const doc = (await (await fetch(`${p.url}/openapi.json`)).json()) as { paths: Record<string, { post: { responses: Record<string, Documented> } }> };
    responses = (route) => doc.paths[`${API}${route}`]!.post.responses;
  });

  test('a deploy during a rollout answers 202, not a 409: the running rollout ends superseded and the new one runs', async () => {
    assert.equal(responses('/services/{id}/deploy')['409'], undefined, 'the deploy route documents no 409');
    const pr = await project(admin, { name: `Documented ${++seq}` });
    const svc = (await call<Service>('POST', '/services', { body: { project: pr.id, name: 'live', image: 'registry.example.com/shop/live:1', replicas: 8 } }))
      .body;
    const first = await call<Deployment>('POST', `/services/${svc.id}/deploy`, { body: { image: 'registry.example.com/shop/live:2' } });
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.equal(first.body.status, 'in-progress');
    const second = await call<Deployment>('POST', `/services/${svc.id}/deploy`, { body: { image: 'registry.example.com/shop/live:3' } });
    assert.equal(second.status, 202, JSON.stringify(second.body));
    const replaced = (await call<Deployment>('GET', `/deployments/${first.body.deploymentId}`)).body;
    assert.equal(replaced.status, 'superseded');
    assert.match(replaced.message!, /superseded by a deploy of registry\.example\.com\/shop\/live:3/i);
    const done = await settled(second.body.deploymentId);
    assert.equal(done.status, 'success');
    assert.equal((await call<Deployment>('GET', `/deployments/${first.body.deploymentId}`)).body.status, 'superseded', 'a superseded rollout stays superseded');
    assert.deepEqual((({ image, status }: Service) => ({ image, status }))((await call<Service>('GET', `/services/${svc.id}`)).body), {
      image: 'registry.example.com/shop/live:3',
      status: 'running',
    });

    // What still answers 409: a rollback to the revision that is already the current one, in the body its example shows.
    const documented = responses('/services/{id}/rollback')['409'];
    assert.ok(documented, 'the rollback route documents 409');
    const example = documented.content['application/json'].examples.conflict!.value;
    const again = await call('POST', `/services/${svc.id}/rollback`, { body: { revision: done.revision } });
    assertError(again, 409, 'conflict');
    assert.deepEqual(Object.keys(again.body).sort(), Object.keys(example).sort());
    assert.equal(again.body.error, example.error);
    assert.match(again.body.message, new RegExp(`Revision ${done.revision} is already the current one`));
    assert.equal(
      (await call<Deployments>('GET', `/services/${svc.id}/deployments`)).body.data[0].deploymentId,
      second.body.deploymentId,
      'the refusal left nothing behind',
    );
  });
});

describe('cluster, nodes, metrics (this host)', () => {
  test('GET /infrastructure/cluster: every documented field, one ready node', async () => {
    const res = await call<Ok<'infraGetInfrastructureCluster'>>('GET', '/infrastructure/cluster');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const c = res.body;
    assert.equal(c.name, os.hostname());
    assert.equal(c.status, 'healthy');
    assert.deepEqual(c.nodes, { total: 1, ready: 1, notReady: 0 });
    assert.equal(c.compute.cpuAllocatable, String(os.cpus().length));
    for (const k of ['cpuAllocatable', 'memoryAllocatable', 'cpuUsed', 'memoryUsed'] as const) assert.equal(typeof c.compute[k], 'string');
    assert.deepEqual(Object.keys(c.storage).sort(), ['persistentVolumeClaims', 'persistentVolumes', 'totalCapacity']);
    assert.deepEqual(Object.keys(c.networking).sort(), ['ingressCount', 'networkPolicies', 'serviceCount']);
    assert.deepEqual(Object.keys(c.security).sort(), ['encryptionAtRest', 'networkPoliciesEnabled', 'podsecuritystandards', 'rbacEnabled']);
    assert.ok(c.lastHealthCheck);
  });

  test("GET /infrastructure/nodes and /metrics: this host's real figures", async () => {
    const nodes = (await call<Ok<'infraGetInfrastructureNodes'>>('GET', '/infrastructure/nodes')).body.data;
    assert.equal(nodes.length, 1);
    assert.equal(nodes[0].name, os.hostname());
    assert.equal(nodes[0].status, 'Ready');
    assert.equal(nodes[0].kernelVersion, os.release());
    assert.deepEqual(nodes[0].capacity, { cpu: String(os.cpus().length), memory: `${Math.floor(os.totalmem() / 1024)}Ki` });
    for (const k of ['type', 'instanceType', 'kubeletVersion', 'containerRuntimeVersion', 'osImage', 'createdAt'] as const) assert.ok(nodes[0][k], k);
    assert.equal(typeof nodes[0].podCount, 'number');
    const m = (await call<Ok<'infraGetInfrastructureMetrics'>>('GET', '/infrastructure/metrics')).body;
    assert.ok(m.timestamp);
    assert.equal(m.cluster.memory.allocatable, os.totalmem());
    assert.ok(m.cluster.memory.used > 0 && m.cluster.memory.used <= os.totalmem());
    assert.equal(m.cluster.cpu.allocatable, os.cpus().length);
    assert.ok(m.cluster.disk.allocatable > 0 && m.cluster.disk.utilizationPercent > 0);
    for (const k of ['ingressBytesPerSecond', 'egressBytesPerSecond', 'connectionCount'] as const) assert.equal(typeof m.network[k], 'number');
  });
});

describe('webhooks', () => {
  test('POST /webhooks: the secret once; deployment.created and deployment.completed signed and verified by the receiver', async () => {
    const reg = await call<Registration>('POST', '/webhooks', { body: { url: hookUrl, events: ['deployment.created', 'deployment.completed'], active: true } });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    assert.match(reg.body.secret, /^whsec_/);
    assert.deepEqual(
      { url: reg.body.url, events: reg.body.events, active: reg.body.active },
      { url: hookUrl, events: ['deployment.created', 'deployment.completed'], active: true },
    );
    const listed = (await call<Webhooks>('GET', '/webhooks')).body.data.find((w: { id: unknown }) => w.id === reg.body.id);
    assert.ok(listed && !('secret' in listed));

    received.length = 0;
    const pr = await project();
    const posted = Date.now();
    const s = (await call<Service>('POST', '/services', { body: { project: pr.id, name: 'hooked', image: 'hooked:1', replicas: 2 } })).body;
    const first = await readUntil(() => received.find((r) => r.event === 'deployment.created'), Boolean, { timeoutMs: 5_000 });
    assert.ok(first && first.at - posted < 5_000, 'deployment.created arrives within seconds, not at the next poll of the queue (hourly here)');
    const dep = await until('the created deployment', async () => (await call<Deployments>('GET', `/services/${s.id}/deployments`)).body.data[0]);
    await settled(dep.deploymentId);
    // (String: an unsigned delivery must fail the signature assertions below, not the type check)
    const got = await until('both deliveries', async () => (received.length >= 2 ? received.map((r) => ({ ...r, signature: String(r.signature) })) : null));
    for (const r of got) {
      assert.ok(verifySignature(reg.body.secret, r.raw, r.signature), 'the signature verifies with the registration secret');
      assert.match(r.signature, /^sha256=[0-9a-f]{64}$/);
      assert.deepEqual(Object.keys(r.body).sort(), ['data', 'event', 'id', 'timestamp']);
      assert.equal(r.body.event, r.event);
    }
    const completed = got.find((r) => r.event === 'deployment.completed')!;
    assert.deepEqual(
      {
        deploymentId: completed.body.data.deploymentId,
        status: completed.body.data.status,
        image: completed.body.data.image,
        service: completed.body.data.service.name,
      },
      { deploymentId: dep.deploymentId, status: 'success', image: 'hooked:1', service: 'hooked' },
    );
    assert.equal(typeof completed.body.data.duration, 'number');
    assert.ok(!verifySignature('whsec_wrong', completed.raw, completed.signature));
    const deliveries = await until('delivered', async () => {
      const d = (await call<Deliveries>('GET', `/webhooks/${reg.body.id}/deliveries`)).body.data;
      return d.length >= 2 && d.every((x: { state: unknown }) => x.state === 'delivered') ? d : null;
    });
    assert.equal(deliveries[0].attempts[0].status, 204);
    assert.equal((await call<Deleted>('DELETE', `/webhooks/${reg.body.id}`)).body.success, true);
  });

  type As = { token?: string; apiKey?: string };
  /** A registration at the receiver's `/reach/<name>`, made by `as` (the admin by default). */
  const register = async (as: As, name: string, events = ['deployment.created', 'deployment.completed']) => {
    const res = await call<Registration>('POST', '/webhooks', { ...as, body: { url: `${receiver.url}/reach/${name}`, events } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id;
  };
  const listed = async (as: As) => (await call<Webhooks>('GET', '/webhooks', as)).body.data.map((w: { id: string }) => w.id).sort();

  test("a registration is its owner's: people see, read the deliveries of and delete their own; admins and keys every one; anyone else 404", async () => {
    const owner = await user(['maintainer']);
    const other = await user(['maintainer']);
    const key = await p.createKey({ service: 'infra', permissions: ['webhook:read', 'webhook:write'] });
    const mine = await register({ token: owner.token }, 'mine');
    const theirs = await register({ token: other.token }, 'theirs');
    const keys = await register({ apiKey: key.key }, 'keys');
    assert.deepEqual(await listed({ token: owner.token }), [mine]);
    assert.deepEqual(await listed({ token: other.token }), [theirs]);
    for (const as of [{}, { apiKey: key.key }]) {
      const all = await listed(as);
      assert.ok(
        [mine, theirs, keys].every((id) => all.includes(id)),
        JSON.stringify(as),
      );
    }
    for (const id of [mine, keys]) {
      assertError(await call('DELETE', `/webhooks/${id}`, { token: other.token }), 404, 'not_found');
      assertError(await call('GET', `/webhooks/${id}/deliveries`, { token: other.token }), 404, 'not_found');
    }
    assert.ok((await listed({})).includes(mine), "the owner's registration is still there");
    assert.equal((await call('GET', `/webhooks/${mine}/deliveries`, { token: owner.token })).status, 200);
    assert.equal((await call('DELETE', `/webhooks/${mine}`, { token: owner.token })).status, 200);
    assert.equal((await call('DELETE', `/webhooks/${theirs}`)).status, 200, 'an admin deletes anyone’s');
    assert.equal((await call('DELETE', `/webhooks/${keys}`, { apiKey: key.key })).status, 200);
    assert.deepEqual(await listed({ token: owner.token }), []);
    const left = await listed({});
    assert.ok(![mine, theirs, keys].some((id) => left.includes(id)));
  });

  test('an event reaches a registration only while its owner may read it: membership, roles and keys as they are when it happens', async () => {
    const owner = await user(['maintainer']);
    const outsider = await user(['maintainer']);
    const gone = await user(['maintainer']);
    const keyed = await p.createKey({ service: 'infra', permissions: ['webhook:read', 'webhook:write', 'service:read'] });
    const hooks = {
      all: await register({}, 'all'),
      owner: await register({ token: owner.token }, 'owner'),
      outsider: await register({ token: outsider.token }, 'outsider'),
      gone: await register({ token: gone.token }, 'gone'),
      key: await register({ apiKey: keyed.key }, 'key'),
      allAlerts: await register({}, 'all-alerts', ['alert.triggered']),
      outsiderAlerts: await register({ token: outsider.token }, 'outsider-alerts', ['alert.triggered']),
    };

    /** What each receiver path got, once every delivery queued so far for its registration has been made. */
    const seen = async (name: keyof typeof hooks) => {
      await until(`the deliveries of ${name} made`, async () =>
        (await call<Deliveries>('GET', `/webhooks/${hooks[name]}/deliveries`)).body.data.every((d: { state: unknown }) => d.state !== 'pending'),
      );
      const path = `/reach/${name.replace('Alerts', '-alerts')}`;
      return received.filter((r) => r.path === path);
    };
    const deployments = async (name: keyof typeof hooks) => [...new Set((await seen(name)).map((r) => r.body.data.deploymentId))];
    /** A deployment run to its end, and its events at the registration that gets everything. */
    const rolled = async (start: Promise<Answer<{ deploymentId?: string; id?: string }>>) => {
      const res = await start;
      assert.ok(res.status === 201 || res.status === 202, JSON.stringify(res.body));
      const id = res.body.deploymentId ?? (await call<Deployments>('GET', `/services/${res.body.id}/deployments`)).body.data[0].deploymentId;
      await settled(id);
      await until(`${id} delivered to the admin's registration`, async () => (await deployments('all')).includes(id));
      return id;
    };

    const secret = await project(owner.token, { visibility: 'private' });
    const internal = await project(admin, { visibility: 'internal' });
    const image = 'registry.example.com/secret/ledger:1.0.0';
    const created = call<Service>('POST', '/services', { token: owner.token, body: { project: secret.id, name: 'ledger', image, replicas: 1 } });
    const d1 = await rolled(created);
    const ledger = (await call<Services>('GET', `/services?project=${secret.id}`)).body.data[0].id;
    const d2 = await rolled(call<Service>('POST', '/services', { body: { project: internal.id, name: 'site', image: 'site:1', replicas: 1 } }));
    assert.ok(!(await seen('outsider')).some((r) => r.raw.includes('ledger')), "nothing of the private project's service reached the outsider");

    // Membership, keys and roles are read when each event happens, not at registration.
    await call('POST', `/projects/${secret.id}/members`, { body: { userId: outsider.id, role: 'contributor' } });
    assert.equal((await p.rest('DELETE', `/control-plane/api/v1/auth/api-keys/${keyed.id}`)).status, 200);
    assert.equal((await call('DELETE', `/users/${gone.id}`)).status, 200);
    const d3 = await rolled(call<Deployment>('POST', `/services/${ledger}/deploy`, { body: { image: 'registry.example.com/secret/ledger:1.1.0' } }));
    await call('DELETE', `/projects/${secret.id}/members/${outsider.id}`);
    await call('PATCH', `/users/${owner.id}`, { body: { roles: ['developer'] } });
    const d4 = await rolled(call<Deployment>('POST', `/services/${ledger}/deploy`, { body: { image: 'registry.example.com/secret/ledger:1.2.0' } }));

    assert.deepEqual(await deployments('all'), [d1, d2, d3, d4]);
    assert.deepEqual(await deployments('owner'), [d1, d2, d3], 'the owner, until demoted out of webhook:read');
    assert.deepEqual(await deployments('outsider'), [d2, d3], 'the internal project, and the private one while a member');
    assert.deepEqual(await deployments('gone'), [d2], 'until the person was deleted');
    assert.deepEqual(await deployments('key'), [d1, d2], 'an organisation-wide key, until revoked');

    // A deployment's alert is the project's as well.
    const failed = await call<Deployment>('POST', `/services/${ledger}/deploy`, { body: { image: 'registry.example.com/secret/ledger:fail-1' } });
    assert.equal((await settled(failed.body.deploymentId)).status, 'failed');
    const alertOf = async (name: 'allAlerts' | 'outsiderAlerts') =>
      (await seen(name)).filter((r) => r.body.data.rule === 'deployment_failed' && r.body.data.subject === ledger);
    await until('the alert at the admin', async () => (await alertOf('allAlerts')).length > 0);
    assert.deepEqual(await alertOf('outsiderAlerts'), [], 'the private project’s alert did not reach the outsider');
    const listsAlert = async (token?: string) =>
      (await call<Alerts>('GET', '/infrastructure/alerts?open=true', { token })).body.data.some(
        (a: { rule: unknown; subject: unknown }) => a.rule === 'deployment_failed' && a.subject === ledger,
      );
    assert.equal(await listsAlert(), true);
    assert.equal(await listsAlert(owner.token), true, 'a member (a developer now) is shown it');
    assert.equal(await listsAlert(outsider.token), false, 'nor is it in the outsider’s list of alerts');

    for (const id of Object.values(hooks)) assert.equal((await call('DELETE', `/webhooks/${id}`)).status, 200);
  });

  test('events are checked; a private or plain-http URL is refused unless configured (400 invalid_request)', async () => {
    assertError(await call('POST', '/webhooks', { body: { url: hookUrl, events: ['deployment.exploded'] } }), 400, 'invalid_request');
    assertError(await call('POST', '/webhooks', { body: { url: 'not a url', events: ['alert.triggered'] } }), 400, 'invalid_request');
  });
});

describe('GraphQL: the same operations and roles; deploymentUpdated streams a rollout', () => {
  test("a developer's deployInfraService is refused; deploymentUpdated emits progress up to success", async () => {
    const dev = await user(['developer']);
    const pr = await project();
    const s = (await call<Service>('POST', '/services', { body: { project: pr.id, name: 'streamed', image: 'streamed:1', replicas: 4 } })).body;
    await until('running', async () => (await call<Service>('GET', `/services/${s.id}`)).body.status === 'running');
    const refused = await p.graphql<Gql<null>>(
      `mutation($id: ID!) { deployInfraService(id: $id, input: { image: "streamed:2" }) { deploymentId } }`,
      { id: s.id },
      dev.token,
    );
    assert.equal(refused.body.errors![0].extensions.code, 'insufficient_permissions');

    const d = await p.graphql<Gql<{ deployInfraService: { deploymentId: string; status: string } }>>(
      `mutation($id: ID!) { deployInfraService(id: $id, input: { image: "streamed:2" }) { deploymentId status } }`,
      { id: s.id },
      admin,
    );
    const deploymentId = d.body.data.deployInfraService.deploymentId;
    const client = wsClient(p.url, `Bearer ${admin}`);
    type Rollout = { status: string; progress: { updated: number; ready: number; available: number; desired: number } };
    const sub = subscribe<Gql<{ deploymentUpdated: Rollout }>>(
      client,
      `subscription($id: ID!) { deploymentUpdated(deploymentId: $id) { status progress { updated ready available desired } } }`,
      {
        id: deploymentId,
      },
    );
    await sub.until((v) => v.data.deploymentUpdated.status !== 'in-progress', 180_000);
    await client.dispose();
    const events = sub.events.map((v) => v.data.deploymentUpdated);
    assert.equal(events.at(-1)!.status, 'success');
    assert.deepEqual(events.at(-1)!.progress, { updated: 4, ready: 4, available: 4, desired: 4 });
    assert.ok(events.length >= 2, `progress events: ${events.length}`);
    const ready = events.map((e) => e.progress.ready);
    assert.deepEqual(
      ready,
      [...ready].sort((a, b) => a - b),
      'ready replicas never go back',
    );
  });
});

describe('limits: 1,000 requests per hour per key, with the X-RateLimit headers', () => {
  test('X-RateLimit-Limit 1000 and Remaining count down; the 1,001st answers 429 with retryAfter and Retry-After', async () => {
    const key = (await p.createKey({ service: 'infra', permissions: ['webhook:read'] })).key;
    const first = await call('GET', '/webhooks', { apiKey: key });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-ratelimit-limit'), '1000');
    assert.equal(first.headers.get('x-ratelimit-remaining'), '999');
    assert.ok(Number(first.headers.get('x-ratelimit-reset')) > Date.now() / 1000);
    for (let sent = 1; sent < 1000; sent += 50) {
      await Promise.all(Array.from({ length: Math.min(50, 1000 - sent) }, () => call('GET', '/webhooks', { apiKey: key })));
    }
    const over = await call<Limited>('GET', '/webhooks', { apiKey: key });
    assertError(over, 429, 'rate_limit_exceeded');
    assert.ok(over.body.retryAfter > 0 && over.body.retryAfter <= 3600);
    assert.equal(over.headers.get('retry-after'), String(over.body.retryAfter));
    assert.equal(over.headers.get('x-ratelimit-remaining'), '0');
    const token = (await login(ADMIN.email, ADMIN.password)).body.token;
    const person = await call('GET', '/webhooks', { token });
    assert.equal(person.headers.get('x-ratelimit-limit'), '5000');
  });
});
