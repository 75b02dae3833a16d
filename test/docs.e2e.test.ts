import assert from 'node:assert/strict';
import { surfaces } from '../rest-adapter';
import { jsonOf } from './support/json';
import { startTestPlatform, type TestPlatform } from './support/platform';

/**
 * GET /openapi.json and /docs: the document covers every route of every surface, validates as
 * OpenAPI 3.1, names each operation's permission, and every documented example answers as
 * documented against the running platform.
 */

/** A JSON Schema as the checks read it: the properties and required names of a body. */
interface Schema {
  type?: string;
  properties: Record<string, unknown>;
  required: string[];
}

/** An operation as the document describes it (the fields the checks read). */
interface Operation {
  'x-permission'?: string | null;
  'x-example'?: { request: { method: string; path: string; body?: unknown }; response: { status: number; code?: string } };
  parameters?: { in: string; name: string; schema: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, unknown>;
  security: object[];
}

/** The parts of /openapi.json the checks read. */
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  tags: { name: string; description?: string }[];
}

let p: TestPlatform;
let doc: Document;

beforeAll(async () => {
  p = await startTestPlatform();
  const res = await fetch(`${p.url}/openapi.json`);
  assert.equal(res.status, 200);
  doc = await jsonOf<Document>(res);
});
afterAll(async () => {
  await p?.stop();
});

describe('/openapi.json', () => {
  test('validates as OpenAPI 3.1', async () => {
    const validatorModule: string = '@seriousme/openapi-schema-validator'; // an ES module without types
    const { Validator } = await import(validatorModule);
    const result = await new Validator().validate(doc);
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(result.valid, true, JSON.stringify(result.errors ?? null).slice(0, 2000));
  });

  test('every route of every surface is documented: parameters, body, envelopes, errors, permission', () => {
    const missing: string[] = [];
    let count = 0;
    for (const s of surfaces) {
      for (const r of s.routes) {
        count += 1;
        const path = (s.prefix + r.path).replace(/:(\w+)/g, '{$1}');
        const op = doc.paths[path]?.[r.method.toLowerCase()];
        if (!op) {
          missing.push(`${r.method} ${path}`);
          continue;
        }
        for (const p of r.path.match(/:(\w+)/g) ?? []) {
          if (!op.parameters?.some((x) => x.in === 'path' && x.name === p.slice(1))) missing.push(`${r.method} ${path}: path parameter ${p}`);
        }
        if (!('x-permission' in op)) missing.push(`${r.method} ${path}: permission`);
        if (!Object.keys(op.responses).some((c) => c.startsWith('2'))) missing.push(`${r.method} ${path}: success response`);
        if (!Object.keys(op.responses).some((c) => c.startsWith('4'))) missing.push(`${r.method} ${path}: error responses`);
        if (r.path.includes(':') && !op.responses['404']) missing.push(`${r.method} ${path}: 404`);
        if (['POST', 'PUT', 'PATCH'].includes(r.method) && /\bbody\b/.test(String(r.variables)) && !op.requestBody)
          missing.push(`${r.method} ${path}: request body`);
      }
    }
    assert.deepEqual(missing, []);
    assert.ok(count > 150, `${count} routes`);
    const tags = doc.tags.map((t) => t.name);
    assert.ok(
      ['Agents', 'Tasks', 'Workflows', 'Executions', 'Links', 'Feature requests'].every((t) => tags.includes(t)),
      tags.join(', '),
    );
    assert.ok(doc.tags.every((t) => t.description));
    // Spot checks of what the document says.
    const create = doc.paths['/control-plane/api/v1/auth/api-keys'].post;
    assert.equal(create['x-permission'], 'keys:manage');
    assert.ok(create.requestBody!.content['application/json'].schema.properties.expires_at, 'snake_case body fields on a snake_case surface');
    const login = doc.paths['/infra/api/v1/auth/login'].post;
    assert.equal(login['x-permission'], null);
    assert.ok(
      login.security.some((s: object) => Object.keys(s).length === 0),
      'a public operation needs no credential',
    );
    assert.deepEqual(login.requestBody!.content['application/json'].schema.required, ['email', 'password']);
    const list = doc.paths['/v1/control-plane/agents/tasks'].get;
    assert.equal(list.parameters!.find((x) => x.name === 'limit')!.schema.type, 'integer');
    assert.ok(doc.paths['/metrics'].get && doc.paths['/links/{slug}'].get, 'routes services serve themselves are listed');
  });

  test('every documented example answers as documented', async () => {
    const examples = Object.values(doc.paths).flatMap((ops) =>
      Object.values(ops).flatMap((o) => {
        const example = o['x-example'];
        return example ? [{ ...example.request, status: example.response.status, code: example.response.code }] : [];
      }),
    );
    assert.ok(examples.length > 100, `${examples.length} examples`);
    const failures: string[] = [];
    for (let i = 0; i < examples.length; i += 16) {
      await Promise.all(
        examples.slice(i, i + 16).map(async (e) => {
          // The /v1 and platform envelopes carry the error's code in `error.code`, the others as `error` itself.
          const res = await p.rest<{ error?: string | { code?: string } } | null>(e.method, e.path, { body: e.body });
          const error = res.body?.error;
          const code = typeof error === 'string' ? error : error?.code;
          if (res.status !== e.status || (e.code && code !== e.code))
            failures.push(`${e.method} ${e.path}: documented ${e.status} ${e.code ?? ''}, answered ${res.status} ${code ?? ''}`);
        }),
      );
    }
    assert.deepEqual(failures, []);
  });

  test('/docs serves the viewer from this host only', async () => {
    const page = await fetch(`${p.url}/docs`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    for (const src of html.match(/src="([^"]+)"/g) ?? []) assert.match(src, /^src="\/docs\//);
    const js = await fetch(`${p.url}/docs/redoc.standalone.js`);
    assert.equal(js.status, 200);
    assert.ok((await js.arrayBuffer()).byteLength > 100_000);
  });
});
