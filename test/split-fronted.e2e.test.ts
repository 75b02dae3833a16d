import assert from 'node:assert/strict';
import type { Links } from './support/answers';
import { startSplitTopology, type SplitTopology } from './support/split';

/**
 * A subgraph that serves HTTP of its own (here the link service: the public short link) runs in a
 * process of its own, as docker-compose.yml runs it: its operations go to that process over HTTP,
 * and the gateway still answers its own routes, on the same database and events.
 */
let split: SplitTopology;

/** A short link as the link service answers it. */
interface Link {
  id: string;
  slug: string;
}

beforeAll(async () => {
  split = await startSplitTopology({}, 'links');
});
afterAll(async () => {
  await split?.stop();
});

describe('split mode: the link service in its own process', () => {
  test('links are created through the gateway in the subgraph process; the gateway redirects the short link', async () => {
    const visit = (slug: string) => fetch(`${split.gatewayUrl}/links/${slug}`, { redirect: 'manual' });
    assert.equal((await visit('split-home')).status, 404);
    const created = await split.call<Links<Link>>('POST', '/links/api/links', { url: 'https://example.com/landing', custom_slug: 'split-home' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const res = await visit('split-home');
    assert.equal(res.status, 302, 'the gateway forgot its "no such link" when the subgraph process created it');
    assert.equal(res.headers.get('location'), 'https://example.com/landing');
    // The subgraph process answers the operation itself (a public one: no signed identity needed).
    const direct = await fetch(`${split.subgraphUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    assert.equal(direct.status, 200);
    const visits = await split.call<Links<Link>>('GET', `/links/api/links/${created.body.data.id}`);
    assert.equal(visits.status, 200, JSON.stringify(visits.body));
    assert.equal(visits.body.data.slug, 'split-home');
  });

  test('the protected-link check the service serves itself answers at the gateway', async () => {
    const created = await split.call<Links<Link>>('POST', '/links/api/links', { url: 'https://example.com/secret', custom_slug: 'split-pin', pin: '4321' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const wrong = await split.call('POST', `/links/api/links/${created.body.data.id}/verify`, { pin: '0000' }, null);
    assert.ok(wrong.status >= 400 && wrong.status < 500, `${wrong.status} ${JSON.stringify(wrong.body)}`);
    const right = await split.call('POST', `/links/api/links/${created.body.data.id}/verify`, { pin: '4321' }, null);
    assert.equal(right.status, 200, JSON.stringify(right.body));
  });
});
