import assert from 'node:assert/strict';
import { startTestPlatform, type TestPlatform } from './support/platform';

/**
 * The edges of the one HTTP server: a trailing slash names the same resource as the path without
 * it, on every route of the route tables and every page.
 */

let p: TestPlatform;
const ID = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

interface Sent {
  status: number;
  type: string;
  body: any;
}

async function send(method: string, path: string, o: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}): Promise<Sent> {
  const key = o.key === undefined ? p.adminKey : o.key;
  const res = await fetch(p.url + path, {
    method,
    headers: { ...(key && { authorization: `Bearer ${key}` }), ...(o.body !== undefined && { 'content-type': 'application/json' }), ...o.headers },
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
    redirect: 'manual',
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // a page, or the Prometheus text
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', body };
}

/** The error code of an answer whatever its envelope (undefined for a success or a page). */
function codeOf(body: any): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  return body.errors?.[0]?.extensions?.code ?? body.error?.code ?? (typeof body.error === 'string' ? body.error : undefined);
}

describe('a trailing slash names the same resource', () => {
  test('every route of the route tables answers the same with a trailing slash as without', async () => {
    const doc = (await send('GET', '/openapi.json')).body as { paths: Record<string, Record<string, { parameters?: { in: string }[] }>> };
    const failures: string[] = [];
    let routes = 0;
    for (const [template, operations] of Object.entries(doc.paths)) {
      const path = template.replace(/\{\w+\}/g, ID);
      for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
        // A key of its own per route: per-endpoint limits (metrics: 10 a minute) never refuse the second request.
        const { key } = await p.createKey({ permissions: ['*'], tier: 'enterprise' });
        const body = ['POST', 'PUT', 'PATCH'].includes(method) ? {} : undefined;
        const plain = await send(method, path, { key, body });
        const slashed = await send(method, `${path}/`, { key, body });
        routes++;
        if (slashed.status !== plain.status || codeOf(slashed.body) !== codeOf(plain.body)) {
          failures.push(`${method} ${path}: ${plain.status} ${codeOf(plain.body) ?? ''}, with "/" ${slashed.status} ${codeOf(slashed.body) ?? ''}`);
        }
      }
    }
    assert.ok(routes > 150, `the route tables were read (${routes} routes)`);
    assert.deepEqual(failures, []);
  });

  test('a list route with a trailing slash is the list, not its item route with an empty id', async () => {
    const keys = await send('GET', '/control-plane/api/v1/auth/api-keys/');
    assert.equal(keys.status, 200, JSON.stringify(keys.body));
    assert.ok(Array.isArray(keys.body.data.api_keys));
    const limits = await send('GET', '/v1/rate-limits/status/');
    assert.equal(limits.status, 200);
    assert.equal(limits.body.data.tier, 'enterprise');
    // A POST is served where it was sent, not redirected (its body would be lost).
    const created = await send('POST', '/v1/promptlib/prompts/', { body: { name: 'slashed', description: 'd', template: 'Hi {{who}}', variables: ['who'] } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.data.promptId, 'slashed');
    const gql = await send('POST', '/graphql/', { body: { query: '{ __typename }' } });
    assert.equal(gql.status, 200);
    assert.deepEqual(gql.body.data, { __typename: 'Query' });
  });

  test('the pages: /docs, /graphql (a browser), /dashboard, /openapi.json, /health', async () => {
    const html = { accept: 'text/html' };
    for (const [path, headers] of [
      ['/docs', html],
      ['/graphql', html],
      ['/dashboard', html],
      ['/openapi.json', {}],
      ['/health', {}],
    ] as const) {
      const plain = await send('GET', path || '/', { key: null, headers });
      const slashed = await send('GET', `${path}/`, { key: null, headers });
      assert.equal(plain.status, 200, `${path || '/'}: ${plain.status}`);
      assert.equal(slashed.status, 200, `${path}/: ${slashed.status} ${JSON.stringify(slashed.body).slice(0, 200)}`);
      assert.equal(slashed.type, plain.type, `${path}/`);
    }
  });
});
