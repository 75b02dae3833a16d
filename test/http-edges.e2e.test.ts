import assert from 'node:assert/strict';
import type { Gql, Platform, V1 } from './support/answers';
import { startTestPlatform, type TestPlatform } from './support/platform';

/**
 * The edges of the one HTTP server: a trailing slash names the same resource as the path without
 * it, on every route of the route tables and every page; every HTML page the platform serves
 * carries a Content-Security-Policy that forbids framing.
 */

let p: TestPlatform;
const ID = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

/** An answer: its status, content type, and body (JSON read as `T`, else the text). */
interface Sent<T = unknown> {
  status: number;
  type: string;
  body: T;
}

async function send<T = unknown>(
  method: string,
  path: string,
  o: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Sent<T>> {
  const key = o.key === undefined ? p.adminKey : o.key;
  const res = await fetch(p.url + path, {
    method,
    headers: { ...(key && { authorization: `Bearer ${key}` }), ...(o.body !== undefined && { 'content-type': 'application/json' }), ...o.headers },
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
    redirect: 'manual',
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // a page, or the Prometheus text
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: body as T };
}

/** The error code of an answer whatever its envelope (undefined for a success or a page). */
function codeOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { errors, error } = body as { errors?: { extensions?: { code?: string } }[]; error?: string | { code?: string } };
  return errors?.[0]?.extensions?.code ?? (typeof error === 'string' ? error : error?.code);
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
    const keys = await send<Platform<{ api_keys: unknown }>>('GET', '/control-plane/api/v1/auth/api-keys/');
    assert.equal(keys.status, 200, JSON.stringify(keys.body));
    assert.ok(Array.isArray(keys.body.data.api_keys));
    const limits = await send<V1<{ tier: string }>>('GET', '/v1/rate-limits/status/');
    assert.equal(limits.status, 200);
    assert.equal(limits.body.data.tier, 'enterprise');
    // A POST is served where it was sent, not redirected (its body would be lost).
    const created = await send<V1<{ promptId: string }>>('POST', '/v1/promptlib/prompts/', {
      body: { name: 'slashed', description: 'd', template: 'Hi {{who}}', variables: ['who'] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.data.promptId, 'slashed');
    const gql = await send<Gql<unknown>>('POST', '/graphql/', { body: { query: '{ __typename }' } });
    assert.equal(gql.status, 200);
    assert.deepEqual(gql.body.data, { __typename: 'Query' });
  });

  test('the pages: /, /docs, /graphql (a browser), /dashboard, /openapi.json, /health', async () => {
    const html = { accept: 'text/html' };
    for (const [path, headers] of [
      ['', html],
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

describe('every HTML page forbids framing (Content-Security-Policy)', () => {
  test("/, /docs, the explorer, the dashboard and a client route of it, a link's gate page and its 404 and 410 pages", async () => {
    const links = (await p.createKey({ service: 'links', permissions: ['link:write', 'link:read'] })).key;
    const made = async (body: Record<string, unknown>) => {
      const res = await send('POST', '/links/api/links', { key: links, body: { url: 'https://example.com/x', ...body } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    };
    await made({ custom_slug: 'gated', password: 'correct horse' });
    await made({ custom_slug: 'retired', expires_at: new Date(Date.now() - 1000).toISOString() });
    const pages: [string, number][] = [
      ['/', 200],
      ['/docs', 200],
      ['/graphql', 200],
      ['/dashboard', 200],
      ['/dashboard/', 200],
      ['/links/gated', 200],
      ['/links/no-such-link', 404],
      ['/links/retired', 410],
    ];
    for (const [path, status] of pages) {
      const res = await fetch(p.url + path, { headers: { accept: 'text/html' }, redirect: 'manual' });
      await res.text();
      assert.equal(res.status, status, path);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/, path);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /(^|;\s*)frame-ancestors 'none'(;|$)/, `${path}: ${csp || 'no Content-Security-Policy'}`);
      assert.match(csp, /(^|;\s*)default-src 'self'(;|$)/, path);
      assert.match(csp, /(^|;\s*)script-src 'self'(;|$)/, `${path}: no inline script`);
    }
    // The gate page's form may post to itself (and follow its redirect to the destination).
    const gate = await fetch(`${p.url}/links/gated`);
    assert.match(gate.headers.get('content-security-policy')!, /form-action 'self' http: https:/);
  });

  test('the landing page links to the dashboard, the API documentation and the explorer', async () => {
    const res = await fetch(`${p.url}/`);
    assert.equal(res.status, 200);
    const page = await res.text();
    for (const href of ['/dashboard', '/docs', '/graphql', '/openapi.json']) assert.ok(page.includes(`href="${href}"`), href);
    assert.ok(!/<script/i.test(page), 'no script');
  });
});
