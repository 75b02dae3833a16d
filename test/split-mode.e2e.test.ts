import assert from 'node:assert/strict';
import { Client as PgClient } from 'pg';
import type { Gql, Platform, V1 } from './support/answers';
import { jsonOf, type GraphQLErrors } from './support/json';
import { startSplitTopology, type SplitTopology } from './support/split';
import { subscribe, wsClient } from './support/subscribe';
import { sleep } from './support/until';

/**
 * The split topology as real processes on one database: the control-plane subgraph alone,
 * a worker, and the gateway with the REST adapter reaching the subgraph over HTTP.
 */
let split: SplitTopology;
let adminKey: string;
let gatewayUrl: string;
let subgraphUrl: string;

const call = <T>(method: string, p: string, key: string | null, body?: unknown) => split.call<T>(method, p, body, key);

beforeAll(async () => {
  split = await startSplitTopology();
  ({ gatewayUrl, subgraphUrl, adminKey } = split);
});

afterAll(async () => {
  await split?.stop();
});

/** A key as its creation answers it (the key itself only then). */
interface CreatedKey {
  api_key: string;
  api_key_id: string;
}

describe('split mode: subgraph, worker and gateway as separate processes', () => {
  test('the key lifecycle runs through the gateway to the remote subgraph', async () => {
    const created = await call<Platform<CreatedKey>>('POST', '/control-plane/api/v1/auth/api-keys', adminKey, {
      name: 'split',
      permissions: ['keys:manage'],
      tier: 'starter',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { api_key: key, api_key_id: id } = created.body.data;

    const listed = await call<Platform<{ api_keys: { id: string }[] }>>('GET', '/control-plane/api/v1/auth/api-keys', key, undefined);
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.data.api_keys.map((k) => k.id),
      [id],
    );

    const denied = await call<Platform<never>>('POST', '/control-plane/api/v1/auth/api-keys', key, { permissions: ['*'] });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'insufficient_permissions');

    const status = await call<V1<{ tier: string; limits: { perMinute: { remaining: number } } }>>('GET', '/v1/rate-limits/status', key, undefined);
    assert.equal(status.body.data.tier, 'starter');
    assert.equal(status.body.data.limits.perMinute.remaining, 57);

    // Revoked in the subgraph process; the gateway process refuses the key at once.
    const revoked = await call('DELETE', `/control-plane/api/v1/auth/api-keys/${id}`, adminKey);
    assert.equal(revoked.status, 200);
    const after = await call<Platform<never>>('GET', '/control-plane/api/v1/auth/api-keys', key, undefined);
    assert.equal(after.status, 401);
    assert.equal(after.body.error.code, 'invalid_api_key');
  });

  test('a subscription at the gateway sees changes made in the subgraph process', async () => {
    const created = await call<Platform<CreatedKey>>('POST', '/control-plane/api/v1/auth/api-keys', adminKey, { name: 'watched' });
    const id = created.body.data.api_key_id;
    const client = wsClient(gatewayUrl, `Bearer ${adminKey}`);
    const sub = subscribe<Gql<{ apiKeyUpdated?: { name: string } }>>(client, `subscription($id: ID!) { apiKeyUpdated(id: $id) { name } }`, { id });
    const received = sub.events;
    await sleep(500);
    await call('PATCH', `/control-plane/api/v1/auth/api-keys/${id}`, adminKey, { name: 'seen across processes' });
    await sub.until((e) => e.data?.apiKeyUpdated?.name === 'seen across processes', 5000);
    await client.dispose();
    // The key as it was when the subscription began, then the change made in the other process.
    assert.deepEqual(received, [{ data: { apiKeyUpdated: { name: 'watched' } } }, { data: { apiKeyUpdated: { name: 'seen across processes' } } }]);
  });

  test('a key revoked in one process (the subgraph) ends, within 2 s, the subscription another (the gateway) holds with it', async () => {
    const created = await call<Platform<CreatedKey>>('POST', '/control-plane/api/v1/auth/api-keys', adminKey, {
      name: 'held elsewhere',
      permissions: ['keys:manage'],
    });
    const { api_key: key, api_key_id: id } = created.body.data;
    const client = wsClient(gatewayUrl, `Bearer ${key}`);
    try {
      const sub = subscribe<Gql<{ apiKeyUpdated?: { name: string } }>>(client, `subscription($id: ID!) { apiKeyUpdated(id: $id) { name } }`, { id });
      await sleep(500);
      await call('PATCH', `/control-plane/api/v1/auth/api-keys/${id}`, adminKey, { name: 'still valid' });
      await sub.until((e) => e.data?.apiKeyUpdated?.name === 'still valid', 5000);

      // The revocation runs, and is announced, in the control-plane subgraph process; the gateway
      // process holding the subscription learns of it over PostgreSQL NOTIFY.
      const revokedAt = Date.now();
      assert.equal((await call('DELETE', `/control-plane/api/v1/auth/api-keys/${id}`, adminKey)).status, 200);
      let endedAt: number | undefined;
      await Promise.race([sub.done.then(() => (endedAt = Date.now())), sleep(5000)]);
      assert.ok(endedAt !== undefined && endedAt - revokedAt <= 2000, `ended ${endedAt === undefined ? 'not within 5 s' : `after ${endedAt - revokedAt} ms`}`);
      assert.equal((sub.errors[0] as GraphQLErrors['errors'] | undefined)?.[0]?.extensions?.code, 'invalid_api_key', JSON.stringify(sub.errors));
      assert.equal(sub.events.length, 2, 'the first state and the rename, nothing sent after the revocation');
    } finally {
      await client.dispose();
    }
  });

  test('the subgraph trusts nothing unsigned when called directly', async () => {
    const query = `{ apiKeys { id } }`;
    const direct = await fetch(`${subgraphUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
      body: JSON.stringify({ query }),
    });
    assert.equal((await jsonOf<GraphQLErrors>(direct)).errors[0]!.extensions.code, 'missing_authorization');

    const forgedContext = Buffer.from(
      JSON.stringify({
        principal: { kind: 'apiKey', keyId: 'x', service: 'control-plane', permissions: ['*'], tier: 'enterprise', environment: 'live', name: 'forged' },
        requestId: 'r',
        iat: Date.now(),
      }),
    ).toString('base64url');
    const forged = await fetch(`${subgraphUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-platform-context': forgedContext, 'x-platform-signature': 'ab'.repeat(32) },
      body: JSON.stringify({ query }),
    });
    assert.equal((await jsonOf<GraphQLErrors>(forged)).errors[0]!.extensions.code, 'missing_authorization');
  });

  test('the worker process is alive and heartbeating', async () => {
    const pg = new PgClient({ connectionString: split.databaseUrl });
    await pg.connect();
    const { rows } = await pg.query(`SELECT count(*)::int AS n FROM platform.workers WHERE heartbeat_at > now() - interval '30 seconds'`);
    await pg.end();
    assert.ok(rows[0].n >= 1, 'a live worker row');
  });

  test('SIGTERM drains every process and each exits 0', async () => {
    for (const p of split.procs) p.child.kill('SIGTERM');
    const codes = await Promise.all(split.procs.map((p) => p.exit));
    assert.deepEqual(
      codes,
      split.procs.map(() => 0),
    );
  });
});
