import assert from 'node:assert/strict';
import type { Client } from 'graphql-ws';
import { auditSubgraph } from './support/audit-subgraph';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { subscribe, wsClient, type Subscription } from './support/subscribe';
import { sleep } from './support/until';

let p: TestPlatform;
const clients: Client[] = [];

beforeAll(async () => {
  p = await startTestPlatform({}, { extraSubgraphs: [auditSubgraph()] });
});
afterAll(async () => {
  for (const c of clients) await c.dispose();
  await p?.stop();
});

/** The code of the error that ended `sub` (graphql-ws hands over the GraphQL errors). */
function endCode(sub: Subscription<unknown>): string | undefined {
  return (sub.errors[0] as { extensions: { code: string } }[])[0]!.extensions.code;
}

function client(authorization?: string): Client {
  const c = wsClient(p.url, authorization);
  clients.push(c);
  return c;
}

describe('subscriptions over graphql-ws through the gateway', () => {
  test('apiKeyUpdated emits the whole selection, including a field of another subgraph, as it is and on every change', async () => {
    const k = await p.createKey({ name: 'watched', permissions: ['agent:read'] });
    const sub = subscribe(client(`Bearer ${p.adminKey}`), `subscription($id: ID!) { apiKeyUpdated(id: $id) { id name status auditLabel } }`, { id: k.id });
    await sub.waitFor(1); // the key as it is: the subscription listens from then on
    await p.rest('PATCH', `/control-plane/api/v1/auth/api-keys/${k.id}`, { body: { name: 'renamed' } });
    await sub.waitFor(2);
    await p.rest('DELETE', `/control-plane/api/v1/auth/api-keys/${k.id}`);
    await sub.waitFor(3);
    assert.deepEqual(sub.errors, []);
    assert.deepEqual(sub.events, [
      { data: { apiKeyUpdated: { id: k.id, name: 'watched', status: 'active', auditLabel: `audited:${k.id.slice(0, 8)}` } } },
      { data: { apiKeyUpdated: { id: k.id, name: 'renamed', status: 'active', auditLabel: `audited:${k.id.slice(0, 8)}` } } },
      { data: { apiKeyUpdated: { id: k.id, name: 'renamed', status: 'revoked', auditLabel: `audited:${k.id.slice(0, 8)}` } } },
    ]);
  });

  test('events of other keys are not delivered', async () => {
    const watched = await p.createKey({ name: 'a', permissions: ['agent:read'] });
    const other = await p.createKey({ name: 'b', permissions: ['agent:read'] });
    const sub = subscribe(client(`Bearer ${p.adminKey}`), `subscription($id: ID!) { apiKeyUpdated(id: $id) { name } }`, { id: watched.id });
    await sub.waitFor(1);
    await p.rest('PATCH', `/control-plane/api/v1/auth/api-keys/${other.id}`, { body: { name: 'other-renamed' } });
    await p.rest('PATCH', `/control-plane/api/v1/auth/api-keys/${watched.id}`, { body: { name: 'a2' } });
    await sub.waitFor(2);
    await sleep(200);
    assert.deepEqual(sub.events, [{ data: { apiKeyUpdated: { name: 'a' } } }, { data: { apiKeyUpdated: { name: 'a2' } } }]);
  });

  test('the same authorization as the queries: anonymous and unpermitted subscribers are refused', async () => {
    const k = await p.createKey({ permissions: ['agent:read'] });
    const anon = subscribe(client(), `subscription($id: ID!) { apiKeyUpdated(id: $id) { id } }`, { id: k.id });
    await anon.done;
    assert.equal(endCode(anon), 'missing_authorization');

    const weak = subscribe(client(`Bearer ${k.key}`), `subscription($id: ID!) { apiKeyUpdated(id: $id) { id } }`, { id: k.id });
    await weak.done;
    assert.equal(endCode(weak), 'insufficient_permissions');

    const missing = subscribe(client(`Bearer ${p.adminKey}`), `subscription($id: ID!) { apiKeyUpdated(id: $id) { id } }`, {
      id: '00000000-0000-4000-8000-000000000000',
    });
    await missing.done;
    assert.equal(endCode(missing), 'resource_not_found');
  });

  test('an invalid key is refused when the connection opens', async () => {
    const c = client('Bearer cp_live_sk_notarealkeynotarealkeynotarealkey');
    const sub = subscribe(c, `subscription($id: ID!) { apiKeyUpdated(id: $id) { id } }`, { id: 'x' });
    await sub.done;
    assert.equal(sub.events.length, 0);
    // A refused connection ends with its close event (the code in its reason).
    const closed = sub.errors[0] as { reason?: string; message?: string } | undefined;
    assert.match(String(closed?.reason ?? closed?.message ?? closed), /invalid_api_key/);
  });
});
