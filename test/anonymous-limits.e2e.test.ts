import 'reflect-metadata';
import assert from 'node:assert/strict';
import { getIntrospectionQuery } from 'graphql';
import { ANONYMOUS_INTROSPECTION_PER_MINUTE, AUTH_FAILURES_PER_MINUTE } from '../kernel/edge';
import type { Gql, V1 } from './support/answers';
import { jsonOf, type GraphQLErrors } from './support/json';
import { startTestPlatform, type TestPlatform } from './support/platform';

/**
 * Traffic without a key is limited per client address too: anonymous requests, failed
 * authentications and anonymous introspection each have a per-minute budget, answered 429 with
 * Retry-After and the X-RateLimit headers. Each case uses its own address (TRUST_PROXY).
 * Production can turn introspection and field suggestions off (GRAPHQL_INTROSPECTION).
 */

let p: TestPlatform;
let closed: TestPlatform;
const ANONYMOUS = 5;

beforeAll(async () => {
  p = await startTestPlatform({ TRUST_PROXY: 'true', ANONYMOUS_RATE_LIMIT: String(ANONYMOUS) });
  closed = await startTestPlatform({ NODE_ENV: 'production' });
});
afterAll(async () => {
  await p?.stop();
  await closed?.stop();
});

const from = (address: string) => ({ 'x-forwarded-for': address });

describe('per-address limits at the edge', () => {
  test('anonymous requests: the budget, then 429 with Retry-After; a keyed caller from the same address is not affected', async () => {
    for (let i = 1; i <= ANONYMOUS; i++) {
      const res = await p.rest('GET', '/v1/control-plane/agents', { key: null, headers: from('203.0.113.1') });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('x-ratelimit-limit'), String(ANONYMOUS));
      assert.equal(res.headers.get('x-ratelimit-remaining'), String(ANONYMOUS - i));
    }
    const over = await p.rest<V1<never>>('GET', '/v1/control-plane/agents', { key: null, headers: from('203.0.113.1') });
    assert.equal(over.status, 429);
    assert.equal(over.body.error.code, 'RATE_LIMIT_EXCEEDED');
    assert.ok(Number(over.headers.get('retry-after')) >= 1);
    assert.equal(over.headers.get('x-ratelimit-remaining'), '0');
    assert.ok(Number(over.headers.get('x-ratelimit-reset')) > Date.now() / 1000);
    const gql = await p.graphql('{ __typename }', {}, null);
    assert.equal(gql.status, 200, 'another address still has its budget');
    assert.equal(
      (await p.rest('GET', '/v1/control-plane/agents', { headers: from('203.0.113.1') })).status,
      200,
      'keys are limited by their tier, not the address',
    );
  });

  test('failed authentications: 401 up to the budget, then 429 even for another wrong key', async () => {
    const wrong = (i: number) => p.rest('GET', '/v1/control-plane/agents', { key: `cp_live_sk_${'x'.repeat(20)}${i}`, headers: from('203.0.113.2') });
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) assert.equal((await wrong(i)).status, 401);
    const over = await wrong(999);
    assert.equal(over.status, 429);
    assert.ok(Number(over.headers.get('retry-after')) >= 1);
    assert.equal((await p.rest('GET', '/v1/control-plane/agents', { headers: from('203.0.113.2') })).status, 200, 'a valid key still works');
  });

  test('anonymous introspection has its own lower budget', async () => {
    const introspect = () =>
      fetch(`${p.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...from('203.0.113.3') },
        body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
      });
    const wide = await startTestPlatform({ TRUST_PROXY: 'true' }); // the general anonymous budget (120) is not the limit here
    try {
      const again = () =>
        fetch(`${wide.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...from('203.0.113.3') },
          body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
        });
      for (let i = 0; i < ANONYMOUS_INTROSPECTION_PER_MINUTE; i++) assert.equal((await again()).status, 200);
      const over = await again();
      assert.equal(over.status, 429);
      assert.equal((await jsonOf<GraphQLErrors>(over)).errors[0]!.extensions.code, 'RATE_LIMIT_EXCEEDED');
      assert.equal((await wide.graphql('{ __schema { queryType { name } } }')).status, 200, 'with a key, introspection is limited by the key');
    } finally {
      await wide.stop();
    }
    assert.equal((await introspect()).status, 200);
  });
});

describe('GRAPHQL_INTROSPECTION (off by default when NODE_ENV=production)', () => {
  test('introspection is refused and "Did you mean" suggestions do not spell the schema out', async () => {
    const res = await closed.graphql<Gql<unknown>>(getIntrospectionQuery());
    assert.equal(res.status, 400);
    assert.match(res.body.errors![0].message, /introspection/i);
    const typo = await closed.graphql<Gql<unknown>>('{ apiKy(id: "x") { id } }');
    assert.equal(typo.status, 400);
    assert.doesNotMatch(typo.body.errors![0].message, /Did you mean/);
    const open = await p.graphql<Gql<unknown>>('{ apiKy(id: "x") { id } }');
    assert.match(open.body.errors![0].message, /Did you mean "apiKey"/, 'outside production, suggestions help developers');
  });
});
