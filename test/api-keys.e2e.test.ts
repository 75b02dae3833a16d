import assert from 'node:assert/strict';
import type { Gql, Platform, V1 } from './support/answers';
import type { Answer as DocumentedAnswer } from './support/openapi-client';
import type { operations } from './support/openapi-types';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { sleep } from './support/until';

const KEYS = '/control-plane/api/v1/auth/api-keys';

/** The 2xx answer the API description documents for an operation. */
type Ok<K extends keyof operations> = DocumentedAnswer<operations[K]>;
type Created = Ok<'controlPlaneApiPostAuthApiKeys'>;
type Listed = Ok<'controlPlaneApiGetAuthApiKeys'>;
/** A refusal whose `details` (`D`) the test reads. */
type Refused<D> = Platform<never> & { error: { details: D } };
/** A GraphQL refusal whose extensions carry `details` (`D`). */
type GqlRefused<D> = Gql<never> & { errors: { extensions: { details: D } }[] };
let p: TestPlatform;

beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

function assertPlatformError(
  body: { success: unknown; error: { code: unknown; message: unknown }; metadata: { request_id: string; timestamp: string } },
  code: string,
) {
  assert.equal(body.success, false);
  assert.equal(body.error.code, code, JSON.stringify(body));
  assert.equal(typeof body.error.message, 'string');
  assert.match(body.metadata.request_id, /^req_/);
  assert.match(body.metadata.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
}

describe('POST /control-plane/api/v1/auth/api-keys', () => {
  test('creates a key, shows it once, stores only its hash', async () => {
    const res = await p.rest<Created>('POST', KEYS, {
      body: { name: 'deploy bot', permissions: ['agent:execute', 'workflow:read'], expires_at: '2099-01-01T00:00:00Z' },
    });
    assert.equal(res.status, 201);
    const d = res.body.data;
    assert.match(d.api_key, /^cp_live_sk_[A-Za-z0-9_-]{32}$/);
    assert.match(d.api_key_id, /^[0-9a-f-]{36}$/);
    assert.equal(d.name, 'deploy bot');
    assert.deepEqual(d.permissions, ['agent:execute', 'workflow:read']);
    assert.equal(d.expires_at, '2099-01-01T00:00:00.000Z');
    assert.equal(d.tier, 'professional');
    assert.equal(d.service, 'control-plane');
    assert.equal(d.environment, 'live');
    assert.match(res.body.metadata.request_id, /^req_/);

    const list = await p.rest<Listed>('GET', KEYS);
    assert.equal(list.status, 200);
    const listed = list.body.data.api_keys.find((k: { id: unknown }) => k.id === d.api_key_id);
    assert.equal(listed!.name, 'deploy bot');
    assert.ok(!JSON.stringify(list.body).includes(d.api_key), 'the key is never shown again');

    const rows = await p.platform.kernel.db.query(`SELECT * FROM platform.api_keys WHERE id = $1`, [d.api_key_id]);
    assert.ok(!JSON.stringify(rows).includes(d.api_key.slice(11)), 'the key is not stored');
    assert.equal(rows[0].key_hash.length, 32);
  });

  test('omitted permissions mean full access', async () => {
    const res = await p.rest<Created>('POST', KEYS, { body: { name: 'full' } });
    assert.deepEqual(res.body.data.permissions, ['*']);
  });

  test('prefix follows service and environment; environment defaults to the caller’s', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ service: 'promptlib' }, /^ver_live_/],
      [{ service: 'engine', environment: 'test' }, /^eng_test_/],
      [{ service: 'links' }, /^lnk_live_/],
      [{ service: 'infra' }, /^inf_live_/],
      [{ environment: 'test' }, /^cp_test_sk_/],
    ];
    for (const [fields, prefix] of cases) {
      const res = await p.rest<Created>('POST', KEYS, { body: { name: 'x', ...fields } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.match(res.body.data.api_key, prefix);
    }
    const testKey = await p.createKey({ environment: 'test', permissions: ['keys:manage'], tier: 'starter' });
    const child = await p.rest<Created>('POST', KEYS, { key: testKey.key, body: { name: 'child', permissions: ['keys:manage'], tier: 'free' } });
    assert.equal(child.status, 201, JSON.stringify(child.body));
    assert.equal(child.body.data.environment, 'test');
  });

  test('bad input is a validation_error naming each field, and stores nothing', async () => {
    const before = await p.platform.kernel.db.query(`SELECT count(*)::int AS n FROM platform.api_keys`);
    const res = await p.rest<Refused<{ errors: { field: string }[] }>>('POST', KEYS, {
      body: { name: '', permissions: ['agent:execute', 'not a permission'], expires_at: '2001-01-01T00:00:00Z', tier: 'platinum' },
    });
    assert.equal(res.status, 400);
    assertPlatformError(res.body, 'validation_error');
    const fields = res.body.error.details.errors.map((e: { field: unknown }) => e.field).sort();
    assert.deepEqual(fields, ['name', 'tier']);

    const wrongType = await p.rest<Refused<{ errors: { field: string }[] }>>('POST', KEYS, { body: { permissions: 'agent:execute', expires_at: 5 } });
    assert.equal(wrongType.status, 400);
    const wrongFields = wrongType.body.error.details.errors.map((e: { field: unknown }) => e.field).sort();
    assert.deepEqual(wrongFields, ['expires_at', 'permissions'], 'a string where a list is expected is refused, not coerced');

    const badPermission = await p.rest<Platform<never>>('POST', KEYS, { body: { permissions: ['agent:execute', 'bogus'] } });
    assert.equal(badPermission.status, 400);
    assert.deepEqual(badPermission.body.error.details.errors, [{ field: 'permissions.1', message: '"bogus" is not "*" or "resource:action"' }]);

    const past = await p.rest<Refused<{ errors: { field: string }[] }>>('POST', KEYS, { body: { expires_at: '2001-01-01T00:00:00Z' } });
    assert.equal(past.status, 400);
    assert.deepEqual(
      past.body.error.details.errors.map((e: { field: unknown }) => e.field),
      ['expires_at'],
    );

    const unknown = await p.rest<Refused<{ errors: { field: string }[] }>>('POST', KEYS, { body: { name: 'x', colour: 'red' } });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.details.errors[0].field, 'colour');

    const after = await p.platform.kernel.db.query(`SELECT count(*)::int AS n FROM platform.api_keys`);
    assert.equal(after[0].n, before[0].n);
  });

  test('malformed JSON is invalid_json with the parse error', async () => {
    const res = await p.rest<Platform<never>>('POST', KEYS, { raw: '{"name": ' });
    assert.equal(res.status, 400);
    assertPlatformError(res.body, 'invalid_json');
    assert.equal(typeof res.body.error.details.parse_error, 'string');
  });

  test('a body over the limit is 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await p.rest<Platform<never>>('POST', KEYS, { raw: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }) });
    assert.equal(res.status, 413);
    assertPlatformError(res.body, 'PAYLOAD_TOO_LARGE');
  });

  test('nobody grants more than they hold', async () => {
    const manager = await p.createKey({ permissions: ['keys:manage', 'agent:read'], tier: 'starter' });
    const wider = await p.rest<Platform<never>>('POST', KEYS, { key: manager.key, body: { permissions: ['agent:execute'] } });
    assert.equal(wider.status, 403);
    assertPlatformError(wider.body, 'insufficient_permissions');
    assert.deepEqual(wider.body.error.details.required, ['agent:execute']);
    const full = await p.rest('POST', KEYS, { key: manager.key, body: {} });
    assert.equal(full.status, 403);
    const higherTier = await p.rest('POST', KEYS, { key: manager.key, body: { permissions: ['agent:read'], tier: 'enterprise' } });
    assert.equal(higherTier.status, 403);
    const ok = await p.rest('POST', KEYS, { key: manager.key, body: { permissions: ['agent:read'], tier: 'free' } });
    assert.equal(ok.status, 201);
  });

  test('a test key creates test keys only, even holding *: a live one is 403 (REST and GraphQL), and PATCH cannot change an environment', async () => {
    const sandbox = await p.createKey({ environment: 'test', permissions: ['*'] });
    assert.match(sandbox.key, /^cp_test_sk_/);
    const before = (await p.rest<Listed>('GET', KEYS)).body.data.api_keys.length;
    for (const fields of [{ environment: 'live' }, { environment: 'live', service: 'engine' }]) {
      const live = await p.rest<Platform<never>>('POST', KEYS, { key: sandbox.key, body: { name: 'escape', ...fields } });
      assert.equal(live.status, 403, JSON.stringify(live.body));
      assertPlatformError(live.body, 'insufficient_permissions');
      assert.deepEqual(live.body.error.details, { field: 'environment', required: 'live', has: 'test' });
      assert.match(live.body.error.message, /test key creates test keys only/);
    }
    const gql = await p.graphql<GqlRefused<unknown>>(
      'mutation { createApiKey(input: { name: "escape", environment: "live" }) { key { id } } }',
      {},
      sandbox.key,
    );
    assert.equal(gql.status, 403, JSON.stringify(gql.body));
    assert.equal(gql.body.errors[0].extensions.code, 'insufficient_permissions');
    assert.equal((await p.rest<Listed>('GET', KEYS)).body.data.api_keys.length, before, 'no key was stored');

    // Without an environment its keys are test keys; with "test", too.
    for (const body of [{ name: 'child' }, { name: 'child', environment: 'test', service: 'links' }]) {
      const child = await p.rest<Created>('POST', KEYS, { key: sandbox.key, body });
      assert.equal(child.status, 201, JSON.stringify(child.body));
      assert.equal(child.body.data.environment, 'test');
      assert.match(child.body.data.api_key, /^(cp_test_sk_|lnk_test_)/);
    }
    // A live key still creates either.
    assert.equal((await p.rest('POST', KEYS, { body: { name: 'live', environment: 'live' } })).status, 201);

    // The environment of a key is fixed: PATCH (REST or GraphQL) does not take it.
    const patch = await p.rest<Platform<never>>('PATCH', `${KEYS}/${sandbox.id}`, { key: sandbox.key, body: { environment: 'live' } });
    assert.equal(patch.status, 400);
    assertPlatformError(patch.body, 'validation_error');
    assert.deepEqual(patch.body.error.details.errors, [{ field: 'environment', message: 'is not a known field', reason: 'unknown_field' }]);
    const gqlPatch = await p.graphql(`mutation { updateApiKey(id: "${sandbox.id}", input: { environment: "live" }) { id } }`, {}, sandbox.key);
    assert.equal(gqlPatch.status, 400);
    const still = await p.rest<Ok<'controlPlaneApiGetAuthApiKeysByKeyId'>>('GET', `${KEYS}/${sandbox.id}`);
    assert.equal(still.body.data.environment, 'test');
  });
});

describe('authentication (401) and permissions (403)', () => {
  test('no key: 401 missing_authorization', async () => {
    const res = await p.rest<Platform<never>>('GET', KEYS, { key: null });
    assert.equal(res.status, 401);
    assertPlatformError(res.body, 'missing_authorization');
  });

  test('unknown key: 401 invalid_api_key', async () => {
    for (const key of ['cp_live_sk_doesnotexistdoesnotexistdoesnotexist', 'garbage']) {
      const res = await p.rest<Platform<never>>('GET', KEYS, { key });
      assert.equal(res.status, 401);
      assertPlatformError(res.body, 'invalid_api_key');
    }
  });

  test('expired key: 401 expired_api_key with expired_at', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const k = await p.createKey({ permissions: ['keys:manage'], expires_at: expiresAt });
    assert.equal((await p.rest('GET', KEYS, { key: k.key })).status, 200);
    await sleep(1700);
    const res = await p.rest<Platform<never>>('GET', KEYS, { key: k.key });
    assert.equal(res.status, 401);
    assertPlatformError(res.body, 'expired_api_key');
    assert.equal(res.body.error.details.expired_at, expiresAt);
  });

  test('missing permission: 403 insufficient_permissions with required and has', async () => {
    const k = await p.createKey({ permissions: ['agent:execute'] });
    const res = await p.rest<Platform<never>>('GET', KEYS, { key: k.key });
    assert.equal(res.status, 403);
    assertPlatformError(res.body, 'insufficient_permissions');
    assert.equal(res.body.error.details.required, 'keys:manage');
    assert.deepEqual(res.body.error.details.has, ['agent:execute']);
  });

  test('a key of another service is refused on the control plane', async () => {
    const k = await p.createKey({ service: 'promptlib', permissions: ['keys:manage'] });
    const res = await p.rest<Platform<never>>('GET', KEYS, { key: k.key });
    assert.equal(res.status, 403);
    assertPlatformError(res.body, 'insufficient_permissions');
  });

  test('the api_key query parameter is accepted', async () => {
    const res = await p.rest('GET', `${KEYS}?api_key=${p.adminKey}`, { key: null });
    assert.equal(res.status, 200);
  });
});

describe('PATCH, DELETE and usage of /control-plane/api/v1/auth/api-keys/{key_id}', () => {
  test('PATCH changes name and expiry; unknown ids are 404 resource_not_found', async () => {
    const k = await p.createKey({ permissions: ['agent:read'] });
    const res = await p.rest<Ok<'controlPlaneApiPatchAuthApiKeysByKeyId'>>('PATCH', `${KEYS}/${k.id}`, {
      body: { name: 'renamed', expires_at: '2098-05-05T00:00:00Z' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.data.name, 'renamed');
    assert.equal(res.body.data.expires_at, '2098-05-05T00:00:00.000Z');
    const cleared = await p.rest<Ok<'controlPlaneApiPatchAuthApiKeysByKeyId'>>('PATCH', `${KEYS}/${k.id}`, { body: { expires_at: null } });
    assert.equal(cleared.body.data.expires_at, null);

    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const missing = await p.rest<Platform<never>>('PATCH', `${KEYS}/${id}`, { body: { name: 'x' } });
      assert.equal(missing.status, 404);
      assertPlatformError(missing.body, 'resource_not_found');
      assert.equal(missing.body.error.details.resource_id, id);
    }
  });

  test('a key manager only sees the keys it created', async () => {
    const manager = await p.createKey({ permissions: ['keys:manage'], tier: 'starter' });
    const other = await p.createKey({ permissions: ['agent:read'] });
    const own = await p.rest<Created>('POST', KEYS, { key: manager.key, body: { name: 'mine', permissions: ['keys:manage'], tier: 'free' } });
    const list = await p.rest<Listed>('GET', KEYS, { key: manager.key });
    const ids = list.body.data.api_keys.map((k: { id: unknown }) => k.id).sort();
    assert.deepEqual(ids, [manager.id, own.body.data.api_key_id].sort());
    const foreign = await p.rest('DELETE', `${KEYS}/${other.id}`, { key: manager.key });
    assert.equal(foreign.status, 404);
  });

  test('DELETE revokes: the next request with the key is 401 invalid_api_key', async () => {
    const k = await p.createKey({ permissions: ['keys:manage'] });
    assert.equal((await p.rest('GET', KEYS, { key: k.key })).status, 200);
    const res = await p.rest<Ok<'controlPlaneApiDeleteAuthApiKeysByKeyId'>>('DELETE', `${KEYS}/${k.id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.data.revoked, true);
    assert.equal(res.body.data.status, 'revoked');
    const after = await p.rest<Platform<never>>('GET', KEYS, { key: k.key });
    assert.equal(after.status, 401);
    assertPlatformError(after.body, 'invalid_api_key');
    const patch = await p.rest('PATCH', `${KEYS}/${k.id}`, { body: { name: 'zombie' } });
    assert.equal(patch.status, 409);
  });

  test('usage counts requests and remembers the last address', async () => {
    const k = await p.createKey({ permissions: ['keys:manage'] });
    for (let i = 0; i < 3; i++) assert.equal((await p.rest('GET', KEYS, { key: k.key })).status, 200);
    const res = await p.rest<Ok<'controlPlaneApiGetAuthApiKeysByKeyIdUsage'>>('GET', `${KEYS}/${k.id}/usage`);
    assert.equal(res.status, 200);
    assert.equal(res.body.data.key_id, k.id);
    assert.equal(res.body.data.usage.requests_today, 3);
    assert.equal(res.body.data.usage.requests_this_month, 3);
    assert.match(res.body.data.usage.last_used_ip!, /127\.0\.0\.1/);
    assert.ok(Date.now() - Date.parse(res.body.data.usage.last_used_at!) < 60_000);
  });
});

describe('unknown routes and methods answer in the surface envelope', () => {
  test('404 for an unknown path, 405 with Allow for a known path', async () => {
    const nf = await p.rest<Platform<never>>('GET', '/control-plane/api/v1/nothing-here');
    assert.equal(nf.status, 404);
    assertPlatformError(nf.body, 'resource_not_found');
    const na = await p.rest<Platform<never>>('PUT', KEYS, { body: {} });
    assert.equal(na.status, 405);
    assertPlatformError(na.body, 'method_not_allowed');
    assert.match(na.headers.get('allow')!, /GET/);
    const v1 = await p.rest<V1<never>>('GET', '/v1/nothing');
    assert.equal(v1.status, 404);
    assert.equal(v1.body.success, false);
    assert.equal(v1.body.error.code, 'resource_not_found');
    assert.match(v1.body.meta.requestId, /^req_/);
  });
});

describe('GET /v1/rate-limits/status and tier limits', () => {
  test('reports the tier windows and burst; headers on every key-authenticated response', async () => {
    const k = await p.createKey({ permissions: ['agent:read'], tier: 'starter' });
    const res = await p.rest<Ok<'v1GetRateLimitsStatus'>>('GET', '/v1/rate-limits/status', { key: k.key });
    assert.equal(res.status, 200);
    assert.equal(res.body.success, true);
    const d = res.body.data;
    assert.equal(d.tier, 'starter');
    assert.equal(d.limits.perMinute.limit, 60);
    assert.equal(d.limits.perMinute.remaining, 59);
    assert.equal(d.limits.perHour.limit, 2000);
    assert.equal(d.limits.perDay.limit, 40000);
    assert.deepEqual(d.burst, { limit: 100, remaining: 99 });
    assert.ok(Date.parse(d.limits.perMinute.resetAt) > Date.now());
    assert.match(res.body.meta.timestamp, /\.\d{3}Z$/);
    assert.equal(res.headers.get('x-ratelimit-limit'), '60');
    assert.equal(res.headers.get('x-ratelimit-remaining'), '59');
    assert.equal(res.headers.get('x-ratelimit-tier'), 'starter');
    assert.equal(res.headers.get('x-ratelimit-burst-remaining'), '99');
    assert.ok(Number(res.headers.get('x-ratelimit-reset')) > Date.now() / 1000);
  });

  test('a free key gets 10 per minute plus a burst of 5, then 429 with Retry-After', async () => {
    const k = await p.createKey({ permissions: ['agent:read'], tier: 'free' });
    const remaining: string[] = [];
    for (let i = 0; i < 15; i++) {
      const res = await p.rest('GET', '/v1/rate-limits/status', { key: k.key });
      assert.equal(res.status, 200, `request ${i + 1}`);
      remaining.push(`${res.headers.get('x-ratelimit-remaining')}/${res.headers.get('x-ratelimit-burst-remaining')}`);
    }
    assert.deepEqual(remaining, ['9/14', '8/13', '7/12', '6/11', '5/10', '4/9', '3/8', '2/7', '1/6', '0/5', '0/4', '0/3', '0/2', '0/1', '0/0']);
    const limited = await p.rest<V1<never> & { error: { details: { limit: number; window: string; retryAfter: number; tier: string } } }>(
      'GET',
      '/v1/rate-limits/status',
      { key: k.key },
    );
    assert.equal(limited.status, 429);
    assert.equal(limited.body.success, false);
    assert.equal(limited.body.error.code, 'RATE_LIMIT_EXCEEDED');
    const { limit, window, retryAfter, tier } = limited.body.error.details;
    assert.deepEqual({ limit, window, tier }, { limit: 10, window: '1m', tier: 'free' });
    assert.ok(retryAfter >= 1 && retryAfter <= 60);
    assert.equal(limited.headers.get('retry-after'), String(retryAfter));
    assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
    // Limits are per key: another key is unaffected.
    assert.equal((await p.rest('GET', '/v1/rate-limits/status')).status, 200);
  });
});

describe('the same operations through GraphQL', () => {
  test('createApiKey, apiKeys and revokeApiKey', async () => {
    type ApiKey = { id: string; name: string; tier: string; permissions: string[]; status: string };
    const created = await p.graphql<Gql<{ createApiKey: { apiKey: string; key: ApiKey } }>>(
      `mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { apiKey key { id name tier permissions status } } }`,
      {
        input: { name: 'gql', permissions: ['metrics:read'], tier: 'starter' },
      },
    );
    assert.equal(created.status, 200);
    const { apiKey, key } = created.body.data.createApiKey;
    assert.match(apiKey, /^cp_live_sk_/);
    assert.deepEqual({ ...key, id: undefined }, { id: undefined, name: 'gql', tier: 'starter', permissions: ['metrics:read'], status: 'active' });
    assert.equal(created.headers.get('x-ratelimit-tier'), 'enterprise');

    const denied = await p.graphql<GqlRefused<unknown>>(`{ apiKeys { id } }`, {}, apiKey);
    assert.equal(denied.body.errors[0].extensions.code, 'insufficient_permissions');
    assert.deepEqual(denied.body.errors[0].extensions.details, { required: 'keys:manage', has: ['metrics:read'] });

    const status = await p.graphql<Gql<{ rateLimitStatus: unknown }>>(`{ rateLimitStatus { tier limits { perMinute { limit remaining } } } }`, {}, apiKey);
    assert.deepEqual(status.body.data.rateLimitStatus, { tier: 'starter', limits: { perMinute: { limit: 60, remaining: 58 } } });

    const revoked = await p.graphql<Gql<{ revokeApiKey: { status: string } }>>(`mutation($id: ID!) { revokeApiKey(id: $id) { status revokedAt } }`, {
      id: key.id,
    });
    assert.equal(revoked.body.data.revokeApiKey.status, 'revoked');
    const after = await p.graphql<GqlRefused<unknown>>(`{ rateLimitStatus { tier } }`, {}, apiKey);
    assert.equal(after.status, 401);
    assert.equal(after.body.errors[0].extensions.code, 'invalid_api_key');
  });

  test('anonymous callers get missing_authorization; introspection is open', async () => {
    const anon = await p.graphql<GqlRefused<unknown>>(`{ apiKeys { id } }`, {}, null);
    assert.equal(anon.body.errors[0].extensions.code, 'missing_authorization');
    const intro = await p.graphql<Gql<{ __schema: { queryType: { name: string } } }>>(`{ __schema { queryType { name } } }`, {}, null);
    assert.equal(intro.body.data.__schema.queryType.name, 'Query');
  });

  test('alias, cost and token limits answer query_too_complex; abusive introspection is refused', async () => {
    const aliases = `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: rateLimitStatus { tier }`).join(' ')} }`;
    const tooMany = await p.graphql<GqlRefused<{ limit: string }>>(aliases);
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.errors[0].extensions.code, 'query_too_complex');
    assert.equal(tooMany.body.errors[0].extensions.details.limit, 'aliases');
    // 29 lists of 20 keys, each selecting the 10 fields of K four times: far over the cost budget.
    const costly = `{ ${Array.from({ length: 29 }, (_, i) => `k${i}: apiKeys { ...K ...K ...K ...K }`).join(' ')} } fragment K on ApiKey { id name service environment tier permissions keyPrefix status createdAt expiresAt }`;
    const tooCostly = await p.graphql<GqlRefused<{ limit: string }>>(costly);
    assert.equal(tooCostly.body.errors[0].extensions.code, 'query_too_complex');
    assert.equal(tooCostly.body.errors[0].extensions.details.limit, 'cost');
    const long = await p.graphql<GqlRefused<unknown>>(`{ ${'rateLimitStatus { tier } '.repeat(2000)} }`);
    assert.equal(long.status, 400);
    assert.match(long.body.errors[0].message, /tokens/);
    const deep = `{ __schema { types { fields { type { fields { type { fields { type { fields { name } } } } } } } } } }`;
    assert.equal((await p.graphql(deep)).status, 400);
  });

  test('a value the schema cannot take is refused with its path, before any subgraph runs', async () => {
    const res = await p.graphql<GqlRefused<unknown>>(`mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { apiKey } }`, {
      input: { expiresAt: 5 },
    });
    assert.equal(res.status, 400);
    assert.match(res.body.errors[0].message, /input\.expiresAt/);
  });
});
