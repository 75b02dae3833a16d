import assert from 'node:assert/strict';
import { auditSubgraph } from './support/audit-subgraph';
import type { Gql } from './support/answers';
import { answerOf } from './support/json';
import { startTestPlatform, type TestPlatform } from './support/platform';

/**
 * GraphQL over HTTP has two paths (gateway/gateway.ts): a POST whose document is valid runs its
 * compiled operation (on the one in-process subgraph its plan fetches from, or through the
 * gateway's executor), everything else goes through Apollo Server's pipeline, as every GET does.
 * A client must not be able to tell them apart: each request here is sent both ways and the two
 * answers compared (status, content type and body), and a few are pinned down outright.
 */

let p: TestPlatform;
let keyId: string;
let reader: string;

beforeAll(async () => {
  p = await startTestPlatform({}, { extraSubgraphs: [auditSubgraph()] });
  keyId = (await p.createKey({ name: 'paths' })).id;
  reader = (await p.createKey({ name: 'reader', permissions: ['agent:read'] })).key;
});
afterAll(async () => {
  await p?.stop();
});

interface Sent {
  status: number;
  contentType: string | null;
  body: string;
}

async function both(query: string, variables?: Record<string, unknown>, key: string | null = p.adminKey): Promise<{ post: Sent; get: Sent }> {
  const auth: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const read = async (res: Response): Promise<Sent> => ({ status: res.status, contentType: res.headers.get('content-type'), body: await res.text() });
  const post = await read(
    await fetch(`${p.url}/graphql`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) }),
  );
  const search = new URLSearchParams({ query, ...(variables && { variables: JSON.stringify(variables) }) });
  const get = await read(await fetch(`${p.url}/graphql?${search}`, { headers: { ...auth, 'apollo-require-preflight': 'true' } }));
  return { post, get };
}

describe('GraphQL over HTTP: compiled operations answer as Apollo Server does', () => {
  test('one subgraph, two subgraphs, aliases, fragments, __typename, errors with their status, partial data', async () => {
    const cases: [string, Record<string, unknown>?, (string | null)?][] = [
      ['query($id: ID!){ apiKey(id: $id){ id name tier permissions status } }', { id: keyId }],
      ['query Named($id: ID!){ k: apiKey(id: $id){ ...F __typename } __typename } fragment F on ApiKey { name createdAt }', { id: keyId }],
      ['query($id: ID!){ apiKey(id: $id){ id name auditLabel } }', { id: keyId }],
      ['query($id: ID!){ apiKey(id: $id){ id } }', { id: '00000000-0000-0000-0000-000000000000' }],
      ['{ a: apiKey(id: "nope"){ id } b: __typename }'],
      ['{ apiKeys { id } }', undefined, reader],
      ['{ apiKeys { id } }', undefined, null],
      ['query($n: Int!){ promptAbTests(promptId: "none", limit: $n){ testId } }', { n: 2 }],
    ];
    for (const [query, variables, key] of cases) {
      const { post, get } = await both(query, variables, key);
      assert.deepEqual(post, get, query);
      assert.match(post.body, /\n$/);
    }
    const partial = await both('{ a: apiKey(id: "nope"){ id } b: __typename }');
    assert.equal(partial.post.status, 404);
    assert.deepEqual(
      JSON.parse(partial.post.body).errors.map((e: { path: unknown; extensions: Record<string, unknown> }) => [
        e.path,
        e.extensions.code,
        'http' in e.extensions,
      ]),
      [[['a'], 'resource_not_found', false]],
    );
    const spanning = JSON.parse((await both('query($id: ID!){ apiKey(id: $id){ name auditLabel } }', { id: keyId })).post.body);
    assert.deepEqual(spanning, { data: { apiKey: { name: 'paths', auditLabel: `audited:${keyId.slice(0, 8)}` } } });
  });

  test('a reference to ApiKey from another subgraph resolves in the control plane, with its permission and its visibility', async () => {
    const other = (await p.createKey({ name: 'other manager', permissions: ['keys:manage'] })).key;
    const query = `query($a: ID!, $b: ID!){ a: auditedKey(id: $a){ id name status } b: auditedKey(id: $b){ id name } }`;
    const missing = '00000000-0000-0000-0000-000000000000';
    const answer = async (key: string) => JSON.parse((await both(query, { a: keyId, b: missing }, key)).post.body);
    assert.deepEqual(await answer(p.adminKey), { data: { a: { id: keyId, name: 'paths', status: 'active' }, b: null } });
    // A manager that did not create the key does not see it (as GET /auth/api-keys/:id answers 404).
    assert.deepEqual((await answer(other)).data, { a: null, b: null });
    const denied = await answer(reader);
    assert.deepEqual(
      denied.errors.map((e: { extensions: { code: unknown } }) => e.extensions.code),
      ['insufficient_permissions', 'insufficient_permissions'],
    );
  });

  test('what the compiled path does not answer itself gets Apollo Server’s own answer', async () => {
    const post = (body: unknown) =>
      fetch(`${p.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((res) => answerOf<Gql<unknown>>(res));
    const missing = await post({ query: 'query($id: ID!){ apiKey(id: $id){ id } }', variables: {} });
    assert.deepEqual([missing.status, missing.body.errors?.[0].extensions.code], [400, 'BAD_USER_INPUT']);
    const wrongType = await post({ query: 'query($id: ID!){ apiKey(id: $id){ name auditLabel } }', variables: { id: { nested: true } } });
    assert.deepEqual(
      [wrongType.status, wrongType.body.errors?.[0].extensions.code, wrongType.body.data],
      [400, 'BAD_USER_INPUT', undefined],
      'a plan across subgraphs too',
    );
    const unknownField = await post({ query: '{ apiKeys { nope } }' });
    assert.deepEqual([unknownField.status, unknownField.body.errors?.[0].extensions.code], [400, 'GRAPHQL_VALIDATION_FAILED']);
    const two = await post({ query: 'query A { __typename } query B { __typename }' });
    assert.deepEqual([two.status, two.body.errors?.[0].extensions.code], [400, 'BAD_REQUEST']);
    const chosen = await post({ query: 'query A { __typename } query B { __typename }', operationName: 'B' });
    assert.deepEqual([chosen.status, chosen.body], [200, { data: { __typename: 'Query' } }]);
    const costly = await post({ query: 'query($n: Int!){ promptAbTests(promptId: "none", limit: $n){ testId } }', variables: { n: 1_000_000 } });
    assert.deepEqual([costly.status, costly.body.errors?.[0].extensions.code], [400, 'query_too_complex']);
    const subscription = await post({ query: 'subscription { apiKeyUpdated(id: "x") { id } }' });
    assert.equal(subscription.status, 400);
  });
});
