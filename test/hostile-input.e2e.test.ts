import 'reflect-metadata';
import assert from 'node:assert/strict';
import http from 'node:http';
import { surfaces } from '../rest-adapter';
import type { Gql, InfraError, Platform, V1 } from './support/answers';
import type { components } from './support/openapi-types';
import { startTestPlatform, type TestPlatform, type JsonAnswer } from './support/platform';
import { subscribe, wsClient } from './support/subscribe';

/**
 * Malformed input is a 400 in the surface's envelope on every surface, never a 500: NUL and
 * lone surrogates in JSON strings and keys, %00 in paths and query strings, JSON nested
 * thousands of levels deep, and GraphQL requests that name no operation or send a subscription
 * over HTTP. The REST rows are generated from the surface list, so a new surface is covered.
 */

let p: TestPlatform;
const ID = '00000000-0000-4000-8000-000000000000';
const POLICY = /NUL|surrogate|nests/;

beforeAll(async () => {
  p = await startTestPlatform();
  const wf = await p.rest<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', {
    body: {
      name: 'Hostile',
      active: true,
      nodes: [
        { name: 'Hook', type: 'engine.webhook' },
        { name: 'Done', type: 'engine.noOp' },
      ],
      connections: { Hook: { main: [[{ node: 'Done' }]] } },
    },
  });
  assert.equal(wf.status, 201, JSON.stringify(wf.body));
  const hook = await p.rest('POST', '/v1/engine/webhooks', { body: { workflowId: wf.body.data.workflowId, path: '/hostile', method: 'POST' } });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
});
afterAll(async () => {
  await p?.stop();
});

const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
const bodies: Record<string, string> = {
  'NUL in a string': '{"name":"a\\u0000b"}',
  'NUL in a key': '{"na\\u0000me":"x"}',
  'lone surrogate': '{"name":"a\\ud800b"}',
  'JSON 5,000 levels deep': `{"name":${deep(5000)}}`,
};

/** An error answer as `errorOf` reads it, whatever the surface: each envelope's fields, each optional. */
interface AnyError {
  success?: boolean;
  message?: string;
  /** /feedback and /infra: the code; elsewhere `{code, message}`. */
  error?: string | { code?: string; message?: string };
  details?: { field?: string; reason?: string };
  errors?: { message?: string; extensions?: { code?: string } }[];
}

/** The answer, its JSON read as `T` (the text where it is not JSON, for the failure messages). */
async function send<T = AnyError>(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<JsonAnswer<T>> {
  const res = await fetch(p.url + path, {
    method,
    headers: { authorization: `Bearer ${p.adminKey}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body,
  });
  const text = await res.text();
  let json: T;
  try {
    json = JSON.parse(text) as T;
  } catch {
    json = text as unknown as T;
  }
  return { status: res.status, body: json };
}

/** GET `path` exactly as written, without a key. */
function rawGet(path: string): Promise<JsonAnswer<V1<never>>> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${p.url}/`, { path }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: kept as text for the failure message
        }
        resolve({ status: res.statusCode!, body: body as V1<never> });
      });
    });
    req.on('error', reject);
  });
}

/** The error's code and message whatever the surface's envelope. */
function errorOf(body: AnyError | undefined): { code?: string; message?: string } {
  if (body?.errors) return { code: body.errors[0]?.extensions?.code, message: body.errors[0]?.message };
  // feedback: `error` is the code. infra: `error` is one code per status, the platform's own in
  // details.reason, except for a refused field (details.field), where details.reason says why.
  if (typeof body?.error === 'string') return { code: body.details?.field ? 'validation_error' : (body.details?.reason ?? body.error), message: body.message };
  if (body?.error) return { code: body.error.code, message: body.error.message ?? body.message };
  return {};
}

describe('malformed input on every REST surface', () => {
  for (const surface of surfaces) {
    const post = surface.routes.find((r) => r.method === 'POST');
    const withParam = surface.routes.find((r) => r.method === 'GET' && r.path.includes(':'));
    const list = surface.routes.find((r) => r.method === 'GET' && !r.path.includes(':'));
    test(`${surface.name} (${surface.prefix}): bodies, path and query`, async () => {
      const failures: string[] = [];
      const expect400 = (what: string, res: JsonAnswer<AnyError>, codes = ['invalid_json', 'validation_error']) => {
        const e = errorOf(res.body);
        if (res.status !== 400 || !codes.includes(e.code!) || !POLICY.test(e.message ?? ''))
          failures.push(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      };
      if (post) {
        for (const [name, body] of Object.entries(bodies)) {
          expect400(`POST ${post.path} ${name}`, await send('POST', surface.prefix + post.path.replace(/:\w+/g, ID), body));
        }
      }
      if (withParam) {
        const path = surface.prefix + withParam.path.replace(/:\w+/, 'a%00b').replace(/:\w+/g, ID);
        expect400(`GET ${path}`, await send('GET', path), ['validation_error']);
      }
      if (list) {
        expect400(`GET ${list.path}?x=%00`, await send('GET', `${surface.prefix + list.path}?limit=1&tag=a%00b&status=%ED%A0%80`), ['validation_error']);
      }
      assert.deepEqual(failures, []);
    });
  }
});

describe('malformed input on the inbound webhook surface (no key at all)', () => {
  test('bodies, a text body with a 0x00 byte, %00 in the path and the query: 400, logged as rejected', async () => {
    for (const [name, body] of Object.entries(bodies)) {
      const res = await send<components['schemas']['WebhookError']>('POST', '/webhook/hostile', body, { authorization: '' });
      assert.equal(res.status, 400, `${name}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.success, false);
      assert.match(res.body.error.message, POLICY);
    }
    const text = await send('POST', '/webhook/hostile', undefined, {});
    assert.equal(text.status, 200, 'an empty body is fine');
    const nul = await fetch(`${p.url}/webhook/hostile`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: Buffer.from([0x61, 0x00, 0x62]) });
    assert.equal(nul.status, 400);
    assert.equal((await send('POST', '/webhook/hos%00tile', '{}')).status, 400);
    assert.equal((await send('POST', '/webhook/hostile?q=%00', '{}')).status, 400);
    const hooks = (await p.rest<V1<{ webhooks: { webhookId: string; path: string }[] }>>('GET', '/v1/engine/webhooks')).body.data;
    const id = hooks.webhooks.find((w) => w.path === '/hostile')!.webhookId;
    const logs = (await p.rest<V1<{ logs: { status: string }[] }>>('GET', `/v1/engine/webhooks/${id}/logs?status=rejected`)).body.data.logs;
    assert.ok(logs.length >= 6, `rejections are logged (${logs.length})`);
    assert.ok(logs.every((l) => l.status === 'rejected'));
  });
});

describe('paths outside every surface, and the files of the dashboard', () => {
  test('out of the directory, NUL, bad percent-encoding, overlong, backslashes: 404 NOT_FOUND in the /v1 envelope, never a 500 nor a file', async () => {
    const paths = [
      '/dashboard/..%2fpackage.json',
      '/dashboard/..%2f..%2fpackage.json',
      '/dashboard/%2e%2e/%2e%2e/package.json',
      '/dashboard/%00',
      '/dashboard/index.html%00.js',
      '/dashboard/%',
      '/dashboard/%zz',
      `/dashboard/${'a'.repeat(5000)}`,
      `/dashboard/${'a/'.repeat(2000)}`,
      '/dashboard/..\\package.json',
      '/dashboard/..%5c..%5cpackage.json',
      '/dashboard/no-such-file.js',
      '/nothing-here',
      '/%',
    ];
    for (const path of paths) {
      // Anonymous, as a browser would ask; sent as written (fetch would resolve the dot segments and backslashes).
      const res = await rawGet(path);
      const what = `GET ${path.slice(0, 60)}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
      assert.equal(res.status, 404, what);
      assert.equal(res.body.success, false, what);
      assert.equal(res.body.error.code, 'NOT_FOUND', what);
      assert.match(res.body.meta.requestId, /^req_/, what);
    }
    // The files it has are still served.
    const index = await fetch(`${p.url}/dashboard/`);
    assert.equal(index.status, 200);
    assert.match(await index.text(), /<div id="root">/);
  });

  test('a path under a surface that is not valid percent-encoding or has an overlong parameter: 404 in the envelope of that surface', async () => {
    const v1 = await send<V1<never>>('GET', '/v1/promptlib/prompts/%');
    assert.equal(v1.status, 404);
    assert.equal(v1.body.error.code, 'resource_not_found');
    assert.match(v1.body.meta.requestId, /^req_/);
    const long = await send<Platform<never>>('GET', `/control-plane/api/v1/auth/api-keys/${'a'.repeat(150)}`);
    assert.equal(long.status, 404, JSON.stringify(long.body));
    assert.equal(long.body.error.code, 'resource_not_found');
    assert.match(long.body.metadata.request_id, /^req_/);
    const infra = await send<InfraError>('GET', '/infra/api/v1/projects/%');
    assert.equal(infra.status, 404);
    assert.equal(infra.body.error, 'not_found');
  });
});

describe('data stored before the policy existed', () => {
  test('a workflow whose settings nest thousands of levels deep: the YAML export answers 400, never 500', async () => {
    const wf = await p.rest<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', {
      body: { name: 'Deep', nodes: [{ name: 'Start', type: 'engine.manualTrigger' }], connections: {} },
    });
    const id = wf.body.data.workflowId;
    await p.platform.kernel.db.query(`UPDATE engine.workflows SET settings = jsonb_build_object('deep', $2::jsonb) WHERE id = $1`, [id, deep(3000)]);
    for (const format of ['yaml', 'json']) {
      const res = await p.rest('GET', `/v1/engine/workflows/${id}/export?format=${format}`);
      assert.ok(res.status < 500, `${format}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
  });
});

describe('malformed GraphQL requests', () => {
  const gql = (body: unknown) => send<Gql<unknown>>('POST', '/graphql', JSON.stringify(body));

  test('unknown operationName, two anonymous operations, a subscription over HTTP: 400', async () => {
    const unknown = await gql({ query: 'query A { __typename }', operationName: 'B' });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.errors![0].message, /Unknown operation named "B"/);
    assert.equal((await gql({ query: 'query { __typename } query { __typename }' })).status, 400);
    const sub = await gql({ query: 'subscription { taskUpdated(taskId: "x") { taskId } }' });
    assert.equal(sub.status, 400);
    assert.match(sub.body.errors![0].message, /WebSocket/);
  });

  test('NUL, lone surrogates and deep variables in POST and GET: 400', async () => {
    const query = 'query($id: ID!) { apiKey(id: $id) { id } }';
    for (const [name, variables] of Object.entries({ nul: '{"id":"a\\u0000"}', surrogate: '{"id":"\\udc00"}', deep: `{"id":"x","d":${deep(3000)}}` })) {
      const post = await send('POST', '/graphql', `{"query":${JSON.stringify(query)},"variables":${variables}}`);
      assert.equal(post.status, 400, `${name}: ${JSON.stringify(post.body).slice(0, 200)}`);
      assert.match(errorOf(post.body).message!, POLICY);
      // In a query string the deep case is kept under the URL size limit (past it: 431 from the HTTP server).
      const inUrl = name === 'deep' ? `{"id":"x","d":${deep(100)}}` : variables;
      const get = await send('GET', `/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(inUrl)}`, undefined, {
        'apollo-require-preflight': '1',
      });
      assert.equal(get.status, 400, `GET ${name}: ${JSON.stringify(get.body).slice(0, 200)}`);
    }
  });

  test('a document over the token limit: 400 query_too_complex with the limit in details, over POST (with and without extensions), GET and graphql-ws', async () => {
    // 5,003 tokens: "{", 5,001 fields, "}" (a GET's query string stays under the URL size limit).
    const query = `{ ${'a '.repeat(5001)}}`;
    const limit = { limit: 'tokens', max: 5000, actual: 5003 };
    const expectLimit = (what: string, res: JsonAnswer<Gql<unknown>>) => {
      assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`);
      assert.equal(res.body.errors?.[0].extensions.code, 'query_too_complex', what);
      assert.deepEqual(res.body.errors?.[0].extensions.details, limit, what);
      assert.match(res.body.errors![0].message, /5003 tokens; the maximum is 5000/);
    };
    expectLimit('POST', await gql({ query }));
    expectLimit('POST with extensions', await gql({ query, extensions: {} }));
    const search = new URLSearchParams({ query }).toString(); // spaces as "+": 10 KB
    expectLimit('GET', await send<Gql<unknown>>('GET', `/graphql?${search}`, undefined, { 'apollo-require-preflight': '1' }));
    const client = wsClient(p.url, `Bearer ${p.adminKey}`);
    try {
      const sub = subscribe(client, `subscription { ${'taskUpdated(taskId: "x") { taskId } '.repeat(700)}}`);
      await sub.done;
      const errors = sub.errors[0] as { message: string; extensions?: { code?: string; details?: unknown } }[];
      assert.ok(Array.isArray(errors), `an error list, got ${String(errors)}`);
      assert.equal(errors[0]!.extensions?.code, 'query_too_complex');
      assert.equal((errors[0]!.extensions?.details as { limit: string }).limit, 'tokens');
    } finally {
      await client.dispose();
    }
  });

  test('graphql-ws: deep variables are refused with an error, the socket stays usable', async () => {
    const client = wsClient(p.url, `Bearer ${p.adminKey}`);
    try {
      const sub = subscribe(client, 'subscription($id: ID!) { taskUpdated(taskId: $id) { taskId } }', { id: ID, d: JSON.parse(deep(200)) });
      await sub.done;
      const error: unknown = sub.errors[0];
      assert.ok(Array.isArray(error), `an error list, got ${String(error)}`);
      assert.match((error as { message: string }[])[0]!.message, /nests deeper/);
    } finally {
      await client.dispose();
    }
  });
});
