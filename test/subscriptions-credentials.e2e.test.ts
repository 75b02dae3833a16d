import assert from 'node:assert/strict';
import type { Client } from 'graphql-ws';
import { TOPIC } from '../kernel/topics';
import { permissionsOf } from '../subgraphs/infra/access';
import { chain, start } from './support/fixtures';
import type { Gql, InfraError, Platform, V1 } from './support/answers';
import { startTestPlatform, type Answer, type TestPlatform } from './support/platform';
import { subscribe, wsClient, type Subscription } from './support/subscribe';
import { sleep, until } from './support/until';

/**
 * Connections that outlive the request that opened them — graphql-ws subscriptions and followed
 * infrastructure log streams — end with their credential, within 2 s, with an error the client
 * can read: a key revoked or expired, a token expired, a person deleted, demoted or taken out of
 * the private project read. A subscription gets an `error` message with the code (and a socket
 * whose credential ended closes with 4401); a stream's last line is the refusal in the
 * infrastructure surface's error shape. Everything else on the platform goes on.
 */

/** A line of a followed log stream: a log line, or, last, the refusal that ended it (an InfraError). */
type StreamLine = Partial<InfraError> & { pod?: string };
type KeyUpdated = Gql<{ apiKeyUpdated: { id: string; name: string } }>;
type GqlErrors = NonNullable<Gql<never>['errors']>;

const API = '/infra/api/v1';
const ADMIN = { email: 'root@infra.test', password: 'admin-password-1' };
const KEYS = '/control-plane/api/v1/auth/api-keys';
const KEY_UPDATED = `subscription($id: ID!) { apiKeyUpdated(id: $id) { id name } }`;
const DEPLOYMENT_UPDATED = `subscription($id: ID!) { deploymentUpdated(deploymentId: $id) { deploymentId status } }`;
/** The longest a connection may stay open once its credential ended. */
const PROMPTLY_MS = 2000;

let p: TestPlatform;
let root: string;
const clients: Client[] = [];
const streams: AbortController[] = [];

beforeAll(async () => {
  p = await startTestPlatform({
    INFRA_ADMIN_EMAIL: ADMIN.email,
    INFRA_ADMIN_PASSWORD: ADMIN.password,
    LOCAL_ROLLOUT_STEP_MS: '25',
    INFRA_WATCH_INTERVAL_MS: '20',
  });
  root = ok(await infra<{ token: string }>('POST', '/auth/login', { token: null, body: ADMIN })).token;
});
afterAll(async () => {
  for (const s of streams) s.abort();
  for (const c of clients) await c.dispose();
  await p?.stop();
});

function ok<T>(res: Answer<T>, status = 200): T {
  assert.equal(res.status, status, JSON.stringify(res.body));
  return res.body;
}

/** The infrastructure surface as a person (`token`; default: the first admin) or with an infrastructure key. */
function infra<T>(method: string, path: string, o: { token?: string | null; apiKey?: string; body?: unknown } = {}): Promise<Answer<T>> {
  const token = o.token === undefined ? root : o.token;
  return p.rest<T>(method, API + path, { key: o.apiKey ? null : token, body: o.body, headers: o.apiKey ? { 'x-api-key': o.apiKey } : {} });
}

let seq = 0;
async function person(roles: string[]): Promise<{ id: string; token: string }> {
  const email = `person${++seq}@infra.test`;
  const password = 'person-password-1';
  const { id } = ok(await infra<{ id: string }>('POST', '/users', { body: { email, name: `Person ${seq}`, password, roles } }), 201);
  return { id, token: ok(await infra<{ token: string }>('POST', '/auth/login', { token: null, body: { email, password } })).token };
}

/** A running service in a new private project of the first admin, with `members` as contributors; its first deployment. */
async function privateService(members: string[] = []): Promise<{ projectId: string; serviceId: string; deploymentId: string }> {
  const project = ok(await infra<{ id: string }>('POST', '/projects', { body: { name: `Private ${++seq}`, visibility: 'private' } }), 201);
  for (const userId of members) {
    const added = await infra('POST', `/projects/${project.id}/members`, { body: { userId, role: 'contributor' } });
    assert.ok(added.status < 300, JSON.stringify(added.body));
  }
  const service = ok(
    await infra<{ id: string }>('POST', '/services', { body: { project: project.id, name: `svc-${seq}`, image: 'registry.example.com/team/api:1.0.0' } }),
    201,
  );
  await until('the service running', async () => (await infra<{ status: string }>('GET', `/services/${service.id}`)).body.status === 'running');
  const deployments = ok(await infra<{ data: { deploymentId: string }[] }>('GET', `/services/${service.id}/deployments`));
  return { projectId: project.id, serviceId: service.id, deploymentId: deployments.data[0].deploymentId };
}

function client(authorization: string, opts: { lazy?: boolean } = {}): Client {
  const c = wsClient(p.url, authorization, opts);
  clients.push(c);
  return c;
}

/** A subscription admitted and listening (its authorizing query has run). */
async function listening<R = unknown>(c: Client, query: string, variables: Record<string, unknown>): Promise<Subscription<R>> {
  const sub = subscribe<R>(c, query, variables);
  await sleep(500);
  assert.deepEqual(sub.errors, [], 'admitted');
  return sub;
}

/** A followed log stream (NDJSON): the objects read so far and when it ended; open and past its tail line on return. */
async function follow(serviceId: string, headers: Record<string, string>): Promise<{ lines: StreamLine[]; done: Promise<void> }> {
  const abort = new AbortController();
  streams.push(abort);
  const res = await fetch(`${p.url}${API}/services/${serviceId}/logs?lines=1&follow=true`, { headers, signal: abort.signal });
  if (res.status !== 200) assert.fail(`follow: ${res.status} ${await res.text()}`);
  const lines: StreamLine[] = [];
  const reader = res.body!.getReader();
  const done = (async () => {
    let buffer = '';
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) return;
      buffer += Buffer.from(value).toString('utf8');
      const parts = buffer.split('\n');
      buffer = parts.pop()!;
      for (const part of parts) if (part) lines.push(JSON.parse(part) as StreamLine);
    }
  })().catch(() => undefined);
  await until('the tail line', () => lines.length >= 1);
  return { lines, done };
}

/** How long after `since` (ms since the epoch) `done` settled, waiting at most `waitMs`; undefined: still open then. */
async function endedAfter(done: Promise<unknown>, since: number, waitMs = 5000): Promise<number | undefined> {
  let at: number | undefined;
  await Promise.race([done.then(() => (at = Date.now())), sleep(Math.max(0, since - Date.now()) + waitMs)]);
  return at === undefined ? undefined : at - since;
}

function assertPrompt(elapsed: number | undefined, what: string): void {
  assert.ok(elapsed !== undefined, `${what} is still open`);
  assert.ok(elapsed >= 0 && elapsed <= PROMPTLY_MS, `${what} ended ${elapsed} ms after its credential did`);
}

/** Whether `done` is still pending after a short while. */
async function stillOpen(done: Promise<unknown>): Promise<boolean> {
  return Promise.race([done.then(() => false), sleep(300).then(() => true)]);
}

/** The code (and details) of the error that ended a subscription. */
function endError(sub: Pick<Subscription<unknown>, 'errors'>): { code: string; details: unknown } {
  const error = (sub.errors[0] as GqlErrors | undefined)?.[0];
  assert.ok(error, `ended with an error message: ${JSON.stringify(sub.errors)}`);
  return { code: error.extensions?.code, details: error.extensions?.details };
}

/** The last line of an ended stream: the refusal in the infrastructure error shape, after log lines only. */
function lastLine(stream: { lines: StreamLine[] }): { error: string; reason: unknown } {
  // The last line is the refusal: the assertions below check it has that shape.
  const last = stream.lines.at(-1) as InfraError;
  assert.deepEqual(Object.keys(last).sort(), ['details', 'error', 'message', 'requestId'], JSON.stringify(last));
  assert.match(last.requestId, /^req_/);
  assert.ok(
    stream.lines.slice(0, -1).every((l) => typeof l.pod === 'string'),
    'log lines before it',
  );
  return { error: last.error, reason: last.details.reason };
}

describe('a key that stops being valid', () => {
  test('revoked: each subscription of its connection ends with invalid_api_key within 2 s, none is sent the revocation, and the socket closes with 4401; the admin watching the same key goes on', async () => {
    const holder = await p.createKey({ name: 'holder', permissions: ['keys:manage'] });
    const watched = ok(
      await p.rest<Platform<{ api_key_id: string }>>('POST', KEYS, { key: holder.key, body: { name: 'watched', permissions: ['keys:manage'] } }),
      201,
    ).data.api_key_id;
    const c = client(`Bearer ${holder.key}`, { lazy: false });
    const closes: { code: number; reason: string }[] = [];
    c.on('closed', (event) => closes.push(event as { code: number; reason: string }));
    const own = subscribe<KeyUpdated>(c, KEY_UPDATED, { id: holder.id });
    const other = subscribe<KeyUpdated>(c, KEY_UPDATED, { id: watched });
    const admins = subscribe<KeyUpdated>(client(`Bearer ${p.adminKey}`), KEY_UPDATED, { id: watched });
    await sleep(500);
    ok(await p.rest('PATCH', `${KEYS}/${watched}`, { body: { name: 'renamed' } }));
    await other.until((e) => e.data?.apiKeyUpdated?.name === 'renamed', 2000);
    await admins.until((e) => e.data?.apiKeyUpdated?.name === 'renamed', 2000);

    const revokedAt = Date.now();
    ok(await p.rest('DELETE', `${KEYS}/${holder.id}`));
    for (const sub of [own, other]) {
      assertPrompt(await endedAfter(sub.done, revokedAt), 'a subscription of the revoked key');
      assert.equal(endError(sub).code, 'invalid_api_key');
    }
    // Its own revocation (an event of the key it watches) came after its credential ended: it
    // received the key's first state only.
    assert.deepEqual(
      own.events.map((e) => e.data.apiKeyUpdated.id),
      [holder.id],
    );
    assert.deepEqual(
      other.events.map((e) => e.data.apiKeyUpdated.name),
      [other.events[0].data.apiKeyUpdated.name, 'renamed'],
    );
    await until('the socket closed', () => closes.length > 0, PROMPTLY_MS);
    assert.equal(closes[0]!.code, 4401);
    assert.match(closes[0]!.reason, /^invalid_api_key: /);

    ok(await p.rest('PATCH', `${KEYS}/${watched}`, { body: { name: 'renamed again' } }));
    await admins.until((e) => e.data?.apiKeyUpdated?.name === 'renamed again', 2000);
    assert.deepEqual(admins.errors, []);
  });

  test('an engine key revoked while an execution it watches waits: executionUpdated ends with invalid_api_key, and the execution going on sends it nothing more', async () => {
    const k = await p.createKey({ name: 'engine', service: 'engine', permissions: ['workflow:read', 'workflow:write', 'workflow:execute'] });
    const hold = { name: 'Hold', type: 'engine.wait', parameters: { resume: 'webhook' } };
    const workflow = ok(
      await p.rest<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', {
        key: k.key,
        body: { name: 'Held', ...chain([start, hold, { name: 'Done', type: 'engine.noOp' }]) },
      }),
      201,
    );
    const run = ok(
      await p.rest<V1<{ executionId: string }>>('POST', `/v1/engine/workflows/${workflow.data.workflowId}/execute`, { key: k.key, body: {} }),
    ).data;
    const waiting = await until('the execution waiting', async () => {
      const e = ok(await p.rest<V1<{ status: string; resumeUrl: string }>>('GET', `/v1/engine/executions/${run.executionId}`)).data;
      return e.status === 'waiting' ? e : null;
    });
    const sub = await listening(client(`Bearer ${k.key}`), `subscription($id: ID!) { executionUpdated(executionId: $id) { status } }`, { id: run.executionId });

    const revokedAt = Date.now();
    ok(await p.rest('DELETE', `${KEYS}/${k.id}`));
    assertPrompt(await endedAfter(sub.done, revokedAt), 'the subscription');
    assert.equal(endError(sub).code, 'invalid_api_key');
    await fetch(waiting.resumeUrl, { method: 'POST' });
    await until(
      'the execution done',
      async () => ok(await p.rest<V1<{ status: string }>>('GET', `/v1/engine/executions/${run.executionId}`)).data.status === 'success',
    );
    assert.deepEqual(sub.events, [{ data: { executionUpdated: { status: 'waiting' } } }], 'its first state only');
  });

  test('its expiry moved closer while it is open: the subscription ends with expired_api_key at the new expiry, not before', async () => {
    const k = await p.createKey({ name: 'soon expired', permissions: ['keys:manage'] });
    const sub = await listening<KeyUpdated>(client(`Bearer ${k.key}`), KEY_UPDATED, { id: k.id });
    const expiresAt = new Date(Date.now() + 2500);
    ok(await p.rest('PATCH', `${KEYS}/${k.id}`, { body: { expires_at: expiresAt.toISOString() } }));
    // The change itself is an event of the key: sent, since the key still holds.
    await sub.until((e) => e.data?.apiKeyUpdated?.id === k.id, 2000);
    assertPrompt(await endedAfter(sub.done, expiresAt.getTime()), 'the subscription');
    assert.deepEqual(endError(sub), { code: 'expired_api_key', details: { expired_at: expiresAt.toISOString() } });
  });

  test('an infrastructure key revoked: its deployment subscription ends with invalid_api_key, its followed logs with a last line authentication_failed (invalid_api_key)', async () => {
    const k = await p.createKey({ name: 'infra reader', service: 'infra', permissions: ['service:read', 'service:logs'] });
    const svc = await privateService();
    const sub = await listening(client(`Bearer ${k.key}`), DEPLOYMENT_UPDATED, { id: svc.deploymentId });
    const stream = await follow(svc.serviceId, { 'x-api-key': k.key });
    const others = await follow(svc.serviceId, { authorization: `Bearer ${root}` });

    const revokedAt = Date.now();
    ok(await p.rest('DELETE', `${KEYS}/${k.id}`));
    assertPrompt(await endedAfter(sub.done, revokedAt), 'the subscription');
    assert.equal(endError(sub).code, 'invalid_api_key');
    assertPrompt(await endedAfter(stream.done, revokedAt), 'the stream');
    assert.deepEqual(lastLine(stream), { error: 'authentication_failed', reason: 'invalid_api_key' });
    assert.ok(await stillOpen(others.done), "the admin's stream goes on");
  });

  test('an infrastructure key expiring while open: both end with expired_api_key within 2 s of its expiry, not before', async () => {
    const expiresAt = new Date(Date.now() + 4000);
    const k = await p.createKey({ name: 'short-lived', service: 'infra', permissions: ['service:read', 'service:logs'], expires_at: expiresAt.toISOString() });
    const svc = await privateService();
    const sub = await listening(client(`Bearer ${k.key}`), DEPLOYMENT_UPDATED, { id: svc.deploymentId });
    const stream = await follow(svc.serviceId, { 'x-api-key': k.key });
    assert.ok(Date.now() < expiresAt.getTime(), 'opened before the expiry');

    assertPrompt(await endedAfter(sub.done, expiresAt.getTime()), 'the subscription');
    assert.deepEqual(endError(sub), { code: 'expired_api_key', details: { expired_at: expiresAt.toISOString() } });
    assertPrompt(await endedAfter(stream.done, expiresAt.getTime()), 'the stream');
    assert.deepEqual(lastLine(stream), { error: 'authentication_failed', reason: 'expired_api_key' });
  });
});

describe('an infrastructure person who loses access', () => {
  test('deleted: their deployment subscription ends with unauthorized and their followed logs with authentication_failed; a member who stays goes on', async () => {
    const leaving = await person(['developer']);
    const staying = await person(['developer']);
    const svc = await privateService([leaving.id, staying.id]);
    const sub = await listening(client(`Bearer ${leaving.token}`), DEPLOYMENT_UPDATED, { id: svc.deploymentId });
    const stream = await follow(svc.serviceId, { authorization: `Bearer ${leaving.token}` });
    const stays = await listening(client(`Bearer ${staying.token}`), DEPLOYMENT_UPDATED, { id: svc.deploymentId });
    const staysStream = await follow(svc.serviceId, { authorization: `Bearer ${staying.token}` });

    const deletedAt = Date.now();
    ok(await infra('DELETE', `/users/${leaving.id}`));
    assertPrompt(await endedAfter(sub.done, deletedAt), 'the subscription');
    assert.equal(endError(sub).code, 'unauthorized');
    assertPrompt(await endedAfter(stream.done, deletedAt), 'the stream');
    assert.deepEqual(lastLine(stream), { error: 'authentication_failed', reason: 'unauthorized' });
    assert.ok(await stillOpen(stays.done), "the other member's subscription goes on");
    assert.ok(await stillOpen(staysStream.done), "the other member's stream goes on");
  });

  test('demoted from admin to developer, not a member of the private project: both end with its not-found', async () => {
    const boss = await person(['admin']);
    const svc = await privateService();
    const sub = await listening(client(`Bearer ${boss.token}`), DEPLOYMENT_UPDATED, { id: svc.deploymentId });
    const stream = await follow(svc.serviceId, { authorization: `Bearer ${boss.token}` });

    const demotedAt = Date.now();
    ok(await infra('PATCH', `/users/${boss.id}`, { body: { roles: ['developer'] } }));
    assertPrompt(await endedAfter(sub.done, demotedAt), 'the subscription');
    assert.equal(endError(sub).code, 'resource_not_found');
    assertPrompt(await endedAfter(stream.done, demotedAt), 'the stream');
    assert.deepEqual(lastLine(stream), { error: 'not_found', reason: 'resource_not_found' });
  });

  test('taken out of the private project: both end with its not-found; a change that keeps their access ends nothing', async () => {
    const dev = await person(['developer']);
    const svc = await privateService([dev.id]);
    const sub = await listening(client(`Bearer ${dev.token}`), DEPLOYMENT_UPDATED, { id: svc.deploymentId });
    const stream = await follow(svc.serviceId, { authorization: `Bearer ${dev.token}` });

    // Promoted, and another person taken out: checked again, still allowed.
    ok(await infra('PATCH', `/users/${dev.id}`, { body: { roles: ['developer', 'maintainer'] } }));
    const bystander = await person(['developer']);
    assert.ok((await infra('POST', `/projects/${svc.projectId}/members`, { body: { userId: bystander.id, role: 'contributor' } })).status < 300);
    ok(await infra('DELETE', `/projects/${svc.projectId}/members/${bystander.id}`));
    assert.ok(await stillOpen(sub.done), 'the subscription goes on');
    assert.ok(await stillOpen(stream.done), 'the stream goes on');

    const removedAt = Date.now();
    ok(await infra('DELETE', `/projects/${svc.projectId}/members/${dev.id}`));
    assertPrompt(await endedAfter(sub.done, removedAt), 'the subscription');
    assert.equal(endError(sub).code, 'resource_not_found');
    assertPrompt(await endedAfter(stream.done, removedAt), 'the stream');
    assert.deepEqual(lastLine(stream), { error: 'not_found', reason: 'resource_not_found' });
  });

  test("taken out of the project with no announcement (as if its event were lost): the next event's own query is refused, and ends the subscription", async () => {
    const dev = await person(['developer']);
    const svc = await privateService([dev.id]);
    const sub = await listening(client(`Bearer ${dev.token}`), DEPLOYMENT_UPDATED, { id: svc.deploymentId });
    await p.platform.kernel.db.query(`DELETE FROM infra.project_members WHERE project_id = $1 AND user_id = $2`, [svc.projectId, dev.id]);
    await sleep(300);
    assert.ok(await stillOpen(sub.done), 'nothing told it yet');

    const eventAt = Date.now();
    await p.platform.kernel.events.publish(TOPIC.deploymentUpdated, { deploymentId: svc.deploymentId, serviceId: svc.serviceId });
    assertPrompt(await endedAfter(sub.done, eventAt), 'the subscription');
    assert.equal(endError(sub).code, 'resource_not_found');
    assert.deepEqual(
      sub.events,
      [{ data: { deploymentUpdated: { deploymentId: svc.deploymentId, status: 'success' } } }],
      'its first state only: the refused answer is not sent as an event',
    );
  });

  test('their token expiring while open: both end with unauthorized (expired) within 2 s of its expiry, not before', async () => {
    const dev = await person(['developer']);
    const svc = await privateService([dev.id]);
    // Signed as sign-in signs, for 3 s instead of an hour.
    const token = await p.platform.kernel.tokens.issue(
      { userId: dev.id, service: 'infra', roles: ['developer'], permissions: permissionsOf(['developer']) },
      3,
    );
    const exp = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { exp: number }).exp * 1000;
    const sub = await listening(client(`Bearer ${token}`), DEPLOYMENT_UPDATED, { id: svc.deploymentId });
    const stream = await follow(svc.serviceId, { authorization: `Bearer ${token}` });
    assert.ok(Date.now() < exp, 'opened before the expiry');

    assertPrompt(await endedAfter(sub.done, exp), 'the subscription');
    assert.deepEqual(endError(sub), { code: 'unauthorized', details: { reason: 'expired' } });
    assertPrompt(await endedAfter(stream.done, exp), 'the stream');
    assert.deepEqual(lastLine(stream), { error: 'authentication_failed', reason: 'expired' });
  });
});

describe('a followed log stream', () => {
  test('waits for each new line without leaving an abort listener behind on its signal', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const svc = await privateService();
      const stream = await follow(svc.serviceId, { authorization: `Bearer ${root}` });
      for (const tag of ['2.0.0', '3.0.0', '4.0.0', '5.0.0']) {
        const { deploymentId } = ok(
          await infra<{ deploymentId: string }>('POST', `/services/${svc.serviceId}/deploy`, {
            body: { image: `registry.example.com/team/api:${tag}`, replicas: 3 },
          }),
          202,
        );
        await until('the rollout done', async () => ok(await infra<{ status: string }>('GET', `/deployments/${deploymentId}`)).status !== 'in-progress');
      }
      await until('lines of the last rollout', () => stream.lines.filter((l) => String(l.message).includes('api:5.0.0')).length > 0);
      assert.ok(stream.lines.length > 12, `${stream.lines.length} lines`);
      assert.deepEqual(
        warnings.filter((w) => w.includes('abort listeners')),
        [],
      );
    } finally {
      process.off('warning', onWarning);
    }
  });
});
