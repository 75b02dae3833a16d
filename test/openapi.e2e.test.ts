import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { emitOpenApi } from '../server/openapi-emit';
import { typedClient, type TypedAnswer } from './support/openapi-client';
import type { Feedback, V1 } from './support/answers';
import { startTestPlatform, type TestPlatform } from './support/platform';

/**
 * /openapi.json describes what clients get: every 2xx answer the platform gives is checked against
 * the schema the document states for its route, a client typed by the generated types calls a few
 * routes and reads their answers by those types, and the committed types are what the document
 * generates today.
 */

const ROOT = path.join(__dirname, '..', '..');

const INFRA_ADMIN = { email: 'admin@openapi.test', password: 'admin-password-1' };

/** The parts of /openapi.json the checks read. */
interface DocResponse {
  description: string;
  content: Record<string, { schema: { $ref: string }; examples: Record<string, { summary?: string; value: unknown }> }>;
}
interface DocOperation {
  operationId: string;
  tags: string[];
  security: object[];
  parameters?: { required?: boolean }[];
  responses: Record<string, DocResponse>;
}
type Doc = { paths: Record<string, Record<string, DocOperation>>; tags: { name: string }[]; components: { schemas: Record<string, object> } };

/** What the steps below keep of an answer: an id, wherever its route puts it. */
interface Kept {
  id: string;
  data: { id: string; promptId: string; workflowId: string; webhookId: string; credentialId: string; executionId: string; agents: { agentId: string }[] };
}

let p: TestPlatform;
let doc: Doc;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const validators = new Map<string, ValidateFunction>();
const checked = new Set<string>();
const failures: string[] = [];

/** Checks a 2xx answer against the schema the document gives its route and status. */
function check(method: string, template: string, status: number, body: unknown): void {
  if (status < 200 || status > 299) return;
  const op = doc.paths[template]?.[method.toLowerCase()];
  const schema = op?.responses?.[String(status)]?.content?.['application/json']?.schema;
  if (!schema) {
    failures.push(`${method} ${template} ${status}: no schema documented`);
    return;
  }
  const id = `${method} ${template} ${status}`;
  let validate = validators.get(id);
  if (!validate) validators.set(id, (validate = ajv.compile(schema)));
  checked.add(`${method.toUpperCase()} ${template}`);
  if (!validate(body)) failures.push(`${id}: ${ajv.errorsText(validate.errors)}`);
}

function ok<O>(a: TypedAnswer<O>, status: number, method: string): TypedAnswer<O>['body'] {
  assert.equal(a.status, status, JSON.stringify(a.body).slice(0, 500));
  check(method, a.template, a.status, a.body);
  return a.body;
}

beforeAll(async () => {
  p = await startTestPlatform({ INFRA_ADMIN_EMAIL: INFRA_ADMIN.email, INFRA_ADMIN_PASSWORD: INFRA_ADMIN.password, FEEDBACK_LOCAL_SIGNIN: 'true' });
  const res = await fetch(`${p.url}/openapi.json`);
  assert.equal(res.status, 200);
  doc = (await res.json()) as Doc;
});
afterAll(async () => {
  await p?.stop();
});

test('the served document is the one built without a server, with unique operationIds and a declared tag each', () => {
  assert.deepEqual(emitOpenApi(), doc);
  const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
  assert.deepEqual(
    ids.filter((id, i) => ids.indexOf(id) !== i),
    [],
    'operationIds used twice',
  );
  const tags = new Set(doc.tags.map((t) => t.name));
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, o] of Object.entries(ops)) {
      assert.equal(o.tags.length, 1, `${method} ${path}`);
      assert.ok(tags.has(o.tags[0]), `${method} ${path}: tag ${o.tags[0]}`);
    }
  }
  const submit = doc.paths['/feedback/api/v1/projects/{id}/requests']!.post;
  assert.ok(
    submit.security.some((s: object) => 'bearer' in s),
    'a signed-in submission sends its token',
  );
  for (const missing of ['/links/api/links/{id}/verify', '/feedback/api/v1/auth/github/callback', '/feedback/api/v1/auth/google/callback']) {
    assert.ok(doc.paths[missing], missing);
  }
  for (const [path, method] of [
    ['/links/{slug}', 'get'],
    ['/links/{slug}', 'post'],
    ['/feedback/api/v1/auth/github/callback', 'get'],
    ['/infra/api/v1/services/{id}/logs', 'get'],
    ['/webhook/{path}', 'post'],
  ] as const) {
    assert.ok(
      Object.keys(doc.paths[path]![method].responses).some((s) => s.startsWith('4')),
      `${method} ${path} documents its client errors`,
    );
  }
});

test('a client typed by the generated types: a key, rate limits, a link, a workflow run', async () => {
  const call = typedClient(p.url, p.adminKey);

  const created = ok(
    await call('post', '/control-plane/api/v1/auth/api-keys', { body: { name: 'links client', service: 'links', permissions: ['link:write', 'link:read'] } }),
    201,
    'post',
  );
  const linksKey: string = created.data.api_key;
  assert.match(linksKey, /^lnk_/);
  const key = ok(await call('get', '/control-plane/api/v1/auth/api-keys/{key_id}', { params: { key_id: created.data.api_key_id } }), 200, 'get');
  assert.deepEqual([key.data.id, key.data.service, key.data.status], [created.data.api_key_id, 'links', 'active']);
  ok(await call('get', '/control-plane/api/v1/auth/api-keys'), 200, 'get');
  ok(await call('get', '/control-plane/api/v1/auth/api-keys/{key_id}/usage', { params: { key_id: created.data.api_key_id } }), 200, 'get');

  const limits = ok(await call('get', '/v1/rate-limits/status'), 200, 'get');
  assert.equal(limits.success, true);

  const link = ok(
    await call('post', '/links/api/links', { key: linksKey, body: { url: 'https://example.com/typed', custom_slug: 'typed-client' } }),
    201,
    'post',
  );
  assert.equal(link.data.slug, 'typed-client');
  const read = ok(await call('get', '/links/api/links/{id}', { key: linksKey, params: { id: link.data.id } }), 200, 'get');
  assert.equal(read.data.url, 'https://example.com/typed');
  ok(await call('get', '/links/api/links/slug/{slug}', { key: linksKey, params: { slug: 'typed-client' } }), 200, 'get');
  ok(await call('get', '/links/api/links', { key: linksKey }), 200, 'get');
  ok(await call('get', '/links/api/links/{id}/visits', { key: linksKey, params: { id: link.data.id } }), 200, 'get');

  const workflow = ok(
    await call('post', '/v1/engine/workflows', {
      body: {
        name: 'Typed',
        nodes: [
          { name: 'Start', type: 'engine.manualTrigger', position: [0, 0], parameters: {} },
          { name: 'Set', type: 'engine.set', position: [200, 0], parameters: { values: { greeting: 'hello' } } },
        ],
        connections: { Start: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
      },
    }),
    201,
    'post',
  );
  const run = await call('post', '/v1/engine/workflows/{workflowId}/execute', { params: { workflowId: workflow.data.workflowId }, body: {} });
  ok(run, run.status === 202 ? 202 : 200, 'post');
  const executionId = run.body.data.executionId;
  assert.ok(executionId, 'a run answers its execution id');
  const execution = ok(await call('get', '/v1/engine/executions/{executionId}', { params: { executionId } }), 200, 'get');
  assert.equal(execution.data.workflowId, workflow.data.workflowId);
  ok(await call('get', '/v1/engine/executions'), 200, 'get');
  ok(await call('get', '/v1/engine/workflows/{workflowId}', { params: { workflowId: workflow.data.workflowId } }), 200, 'get');
  ok(await call('get', '/v1/engine/workflows'), 200, 'get');
  assert.deepEqual(failures, []);
});

test('every list and read the admin key can make without input answers as its schema says', async () => {
  const gets = Object.entries(doc.paths).filter(
    ([path, ops]) =>
      ops.get && !path.includes('{') && !(ops.get.parameters ?? []).some((x) => x.required) && ops.get.responses['200']?.content?.['application/json'],
  );
  for (const [path] of gets) {
    const res = await p.rest('GET', path);
    check('GET', path, res.status, res.body);
  }
  assert.deepEqual(failures, []);
  assert.ok(checked.size > 40, `${checked.size} routes' answers checked: ${[...checked].join(', ')}`);
});

test('routes given valid input, ids taken from earlier answers, answer as their schemas say', async () => {
  const links = (await p.createKey({ service: 'links', permissions: ['link:write', 'link:read'] })).key;
  const ids: Record<string, string> = {};
  // One call per route: [method, path as documented, its values, body, expected status, key, where to keep an id].
  const steps: [string, string, () => Record<string, string>, unknown, number, string?, [string, (b: Kept) => string]?][] = [
    ['GET', '/v1/control-plane/agents', () => ({}), undefined, 200, undefined, ['agent', (b) => b.data.agents[0].agentId]],
    ['GET', '/v1/control-plane/agents/{agentId}', () => ({ agentId: ids.agent! }), undefined, 200],
    [
      'POST',
      '/v1/promptlib/prompts',
      () => ({}),
      { name: 'openapi-hello', description: 'Greets', template: 'Hello {{name}}', variables: ['name'] },
      201,
      undefined,
      ['prompt', (b) => b.data.promptId],
    ],
    ['GET', '/v1/promptlib/prompts/{promptId}', () => ({ promptId: ids.prompt! }), undefined, 200],
    ['POST', '/v1/promptlib/prompts/{promptId}/render', () => ({ promptId: ids.prompt! }), { variables: { name: 'Ada' }, version: 1 }, 200],
    [
      'POST',
      '/v1/engine/workflows',
      () => ({}),
      { name: 'Table', nodes: [{ name: 'Start', type: 'engine.manualTrigger', position: [0, 0], parameters: {} }], connections: {} },
      201,
      undefined,
      ['workflow', (b) => b.data.workflowId],
    ],
    ['PUT', '/v1/engine/workflows/{workflowId}', () => ({ workflowId: ids.workflow! }), { name: 'Table 2' }, 200],
    ['POST', '/v1/engine/workflows/{workflowId}/duplicate', () => ({ workflowId: ids.workflow! }), { name: 'Table copy' }, 201],
    ['GET', '/v1/engine/workflows/{workflowId}/export', () => ({ workflowId: ids.workflow! }), undefined, 200],
    [
      'POST',
      '/v1/engine/webhooks',
      () => ({}),
      { workflowId: ids.workflow, path: 'openapi-table', method: 'POST', responseMode: 'lastNode' },
      201,
      undefined,
      ['webhook', (b) => b.data.webhookId],
    ],
    ['GET', '/v1/engine/webhooks/{webhookId}', () => ({ webhookId: ids.webhook! }), undefined, 200],
    [
      'POST',
      '/v1/engine/credentials',
      () => ({}),
      { name: 'OpenAPI key', type: 'httpHeaderAuth', data: { name: 'X-Key', value: 'secret-value' } },
      201,
      undefined,
      ['credential', (b) => b.data.credentialId],
    ],
    ['GET', '/v1/engine/credentials/{credentialId}', () => ({ credentialId: ids.credential! }), undefined, 200],
    ['DELETE', '/v1/engine/credentials/{credentialId}', () => ({ credentialId: ids.credential! }), undefined, 200],
    ['POST', '/v1/engine/workflows/{workflowId}/activate', () => ({ workflowId: ids.workflow! }), undefined, 200],
    ['POST', '/v1/engine/workflows/{workflowId}/deactivate', () => ({ workflowId: ids.workflow! }), undefined, 200],
    ['POST', '/v1/engine/workflows/{workflowId}/execute', () => ({ workflowId: ids.workflow! }), {}, 200, undefined, ['execution', (b) => b.data.executionId]],
    ['GET', '/v1/engine/executions/{executionId}/logs', () => ({ executionId: ids.execution! }), undefined, 200],
    ['POST', '/links/api/links', () => ({}), { url: 'https://example.com/table' }, 201, links, ['link', (b) => b.data.id]],
    ['PATCH', '/links/api/links/{id}', () => ({ id: ids.link! }), { url: 'https://example.com/table-2' }, 200, links],
    ['DELETE', '/links/api/links/{id}', () => ({ id: ids.link! }), undefined, 200, links],
  ];
  const login = await p.rest<{ token: string }>('POST', '/infra/api/v1/auth/login', { key: null, body: INFRA_ADMIN });
  check('POST', '/infra/api/v1/auth/login', login.status, login.body);
  const infra: string = login.body.token;
  steps.push(
    ['GET', '/infra/api/v1/users/me', () => ({}), undefined, 200, infra],
    ['POST', '/infra/api/v1/projects', () => ({}), { name: 'OpenAPI', description: 'd' }, 201, infra, ['project', (b) => b.id]],
    ['GET', '/infra/api/v1/projects/{id}', () => ({ id: ids.project! }), undefined, 200, infra],
    ['GET', '/infra/api/v1/projects', () => ({}), undefined, 200, infra],
    ['GET', '/infra/api/v1/users', () => ({}), undefined, 200, infra],
    ['GET', '/infra/api/v1/services', () => ({}), undefined, 200, infra],
  );
  const local = await p.rest<Feedback<{ token: string }>>('POST', '/feedback/api/v1/auth/local', { body: { email: 'ada@openapi.test', name: 'Ada' } });
  assert.equal(local.status, 200, JSON.stringify(local.body));
  check('POST', '/feedback/api/v1/auth/local', local.status, local.body);
  const person: string = local.body.data.token;
  steps.push(
    ['GET', '/feedback/api/v1/auth/me', () => ({}), undefined, 200, person],
    ['POST', '/feedback/api/v1/projects', () => ({}), { name: 'OpenAPI', description: 'd', slug: 'openapi' }, 201, person, ['fproject', (b) => b.data.id]],
    ['PUT', '/feedback/api/v1/projects/{id}', () => ({ id: ids.fproject! }), { settings: { require_approval: false } }, 200, person],
    ['GET', '/feedback/api/v1/projects/my', () => ({}), undefined, 200, person],
    [
      'POST',
      '/feedback/api/v1/projects/{id}/requests',
      () => ({ id: ids.fproject! }),
      { title: 'Typed clients', description: 'Please' },
      201,
      person,
      ['request', (b) => b.data.id],
    ],
    ['GET', '/feedback/api/v1/projects/{id}/requests', () => ({ id: ids.fproject! }), undefined, 200, person],
    ['GET', '/feedback/api/v1/requests/{id}', () => ({ id: ids.request! }), undefined, 200, person],
    ['POST', '/feedback/api/v1/requests/{id}/vote', () => ({ id: ids.request! }), { type: 'upvote' }, 200, person],
    ['GET', '/feedback/api/v1/requests/{id}/votes', () => ({ id: ids.request! }), undefined, 200, person],
    ['POST', '/feedback/api/v1/requests/{id}/comments', () => ({ id: ids.request! }), { body: 'Yes' }, 201, person],
    ['GET', '/feedback/api/v1/requests/{id}/comments', () => ({ id: ids.request! }), undefined, 200, person],
  );
  for (const [method, template, values, body, status, key, keep] of steps) {
    const v = values();
    const url = template.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(v[name]!));
    const res = await p.rest<Kept>(method, url, {
      body: typeof body === 'object' && body && 'workflowId' in body ? { ...body, workflowId: ids.workflow } : body,
      ...(key ? { key } : {}),
    });
    assert.equal(res.status, status, `${method} ${url}: ${JSON.stringify(res.body).slice(0, 400)}`);
    check(method, template, res.status, res.body);
    if (keep) ids[keep[0]] = keep[1](res.body);
  }
  assert.deepEqual(failures, []);
});

/** The schema a documented error answer names (each surface's envelope is one component without references of its own). */
function errorSchema(response: DocResponse): object {
  const ref = response.content['application/json'].schema.$ref;
  return doc.components.schemas[ref.replace('#/components/schemas/', '')]!;
}

test("every route's own refusals are documented with example bodies its error envelope admits", () => {
  const bad: string[] = [];
  let examples = 0;
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, o] of Object.entries(ops)) {
      for (const [status, r] of Object.entries(o.responses)) {
        for (const [name, example] of Object.entries(r.content?.['application/json']?.examples ?? {})) {
          examples++;
          const validate = ajv.compile(errorSchema(r));
          if (!validate(example.value)) bad.push(`${method} ${path} ${status} ${name}: ${ajv.errorsText(validate.errors)}`);
        }
      }
    }
  }
  assert.deepEqual(bad, []);
  assert.ok(examples > 40, `only ${examples} refusal examples`);
  const rollback = doc.paths['/infra/api/v1/services/{id}/rollback']!.post.responses['409'];
  assert.match(rollback.description, /already the current one/);
  assert.equal((rollback.content['application/json'].examples.conflict.value as { error: string }).error, 'conflict');
  const create = doc.paths['/v1/control-plane/agents/execute']!.post.responses;
  assert.deepEqual(Object.keys(create['422'].content['application/json'].examples), ['CONTEXT_VALIDATION_FAILED']);
  assert.ok(create['404'].content['application/json'].examples.AGENT_NOT_FOUND);
});

test('a vote given twice answers the 409 its route documents, in the body its schema describes', async () => {
  const documented = doc.paths['/feedback/api/v1/requests/{id}/vote']!.post.responses['409'];
  assert.ok(documented, 'POST /requests/{id}/vote documents 409');
  assert.deepEqual(Object.keys(documented.content['application/json'].examples), ['request_not_approved', 'already_voted']);

  const local = await p.rest<Feedback<{ token: string }>>('POST', '/feedback/api/v1/auth/local', { body: { email: 'grace@openapi.test', name: 'Grace' } });
  assert.equal(local.status, 200, JSON.stringify(local.body));
  const person: string = local.body.data.token;
  const project = await p.rest<Feedback<{ id: string }>>('POST', '/feedback/api/v1/projects', {
    key: person,
    body: { name: 'Votes', description: 'd', slug: 'openapi-votes' },
  });
  assert.equal(project.status, 201, JSON.stringify(project.body));
  const open = await p.rest('PUT', `/feedback/api/v1/projects/${project.body.data.id}`, { key: person, body: { settings: { require_approval: false } } });
  assert.equal(open.status, 200, JSON.stringify(open.body));
  const request = await p.rest<Feedback<{ id: string }>>('POST', `/feedback/api/v1/projects/${project.body.data.id}/requests`, {
    key: person,
    body: { title: 'Twice', description: 'Vote twice' },
  });
  assert.equal(request.status, 201, JSON.stringify(request.body));
  const vote = () => p.rest<Feedback<never>>('POST', `/feedback/api/v1/requests/${request.body.data.id}/vote`, { key: person, body: { type: 'upvote' } });
  assert.equal((await vote()).status, 200);
  const again = await vote();
  assert.equal(again.status, 409, JSON.stringify(again.body));
  assert.equal(again.body.error, 'already_voted');
  const keys = Object.keys(again.body as object).sort();
  const validate = ajv.compile(errorSchema(documented));
  assert.ok(validate(again.body), ajv.errorsText(validate.errors));
  assert.deepEqual(keys, Object.keys(documented.content['application/json'].examples.already_voted.value as object).sort());
});

/**
 * Runs openapi-typescript as `npm run openapi:types` does (from the repository, so with its
 * redocly.yaml) over `document`: the types it writes and the lint warnings it prints. Not a
 * blocking child: the platform under test runs in this process and keeps serving meanwhile.
 */
async function openapiTypes(document: unknown): Promise<{ types: string; warnings: string[] }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'openapi-'));
  writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(document, null, 2));
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [path.join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), path.join(dir, 'openapi.json'), '-o', path.join(dir, 'types.ts')],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' } },
  );
  const warnings = `${stdout}\n${stderr}`.split('\n').filter((line) => line.includes('⚠'));
  return { types: readFileSync(path.join(dir, 'types.ts'), 'utf8'), warnings };
}

test('the committed client types are what openapi-typescript generates from the document, and it warns of nothing', async () => {
  const { types, warnings } = await openapiTypes(doc);
  assert.equal(
    readFileSync(path.join(ROOT, 'test/support/openapi-types.ts'), 'utf8'),
    types,
    'test/support/openapi-types.ts is stale: run `npm run openapi:types`',
  );
  assert.deepEqual(warnings, []);
});

test("the 2xx and 4xx rules still hold for every other operation: one that lost its answers is warned of, the redirects' siblings included", async () => {
  const broken = structuredClone(doc);
  broken.paths['/metrics']!.get.responses = { '302': { description: 'Elsewhere.', content: {} } };
  delete broken.paths['/links/{slug}']!.get.responses['200'];
  const { warnings } = await openapiTypes(broken);
  assert.deepEqual(warnings.map((w) => w.replace(/^\s*⚠\s*/, '')).sort(), [
    'Operation must have at least one `2XX` response. at #/paths/~1links~1{slug}/get/responses',
    'Operation must have at least one `2XX` response. at #/paths/~1metrics/get/responses',
    'Operation must have at least one `4XX` response. at #/paths/~1metrics/get/responses',
  ]);
});

test('the credentials, variables and audit routes document their refusals; a key taken twice answers the 409 documented', async () => {
  const documented = (route: string, method: string, status: string): string[] =>
    Object.keys(doc.paths[route]?.[method]?.responses?.[status]?.content?.['application/json']?.examples ?? {});
  assert.deepEqual(documented('/v1/engine/credentials', 'post', '409'), ['resource_already_exists']);
  assert.deepEqual(documented('/v1/engine/credentials', 'post', '400'), ['validation_error']);
  assert.deepEqual(documented('/v1/engine/credentials/{credentialId}/authorize', 'post', '400'), ['validation_error']);
  assert.deepEqual(documented('/v1/engine/credentials/oauth2/callback', 'get', '502'), ['upstream_error']);
  assert.deepEqual(documented('/engine/api/v1/variables', 'post', '409'), ['resource_already_exists']);
  assert.deepEqual(documented('/v1/engine/variables/{variableId}', 'put', '409'), ['resource_already_exists']);
  assert.deepEqual(documented('/v1/audit', 'get', '400'), ['validation_error']);

  const create = () => p.rest<V1<never>>('POST', '/v1/engine/variables', { body: { key: 'OPENAPI_TWICE', value: 'one' } });
  assert.equal((await create()).status, 201);
  const again = await create();
  assert.equal(again.status, 409, JSON.stringify(again.body));
  const response = doc.paths['/v1/engine/variables']!.post.responses['409'];
  const example = response.content['application/json'].examples.resource_already_exists.value as { error: { code: string } };
  assert.equal(again.body.error.code, example.error.code);
  const validate = ajv.compile(errorSchema(response));
  assert.ok(validate(again.body), ajv.errorsText(validate.errors));

  const backwards = await p.rest<V1<never>>('GET', '/v1/audit?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z');
  assert.equal(backwards.status, 400, JSON.stringify(backwards.body));
  const auditExample = doc.paths['/v1/audit']!.get.responses['400'].content['application/json'].examples.validation_error.value as {
    error: { code: string };
  };
  assert.equal(backwards.body.error.code, auditExample.error.code);
});

test('the sign-in routes answer the refusals they document: 503 where the provider is not configured, 400 invalid_state for a state this browser did not start', async () => {
  for (const [path, query, status, code] of [
    ['/feedback/api/v1/auth/github', '', 503, 'service_unavailable'],
    ['/feedback/api/v1/auth/google', '', 503, 'service_unavailable'],
    ['/feedback/api/v1/auth/github/callback', '?state=forged&code=c', 400, 'invalid_state'],
  ] as const) {
    const res = await fetch(`${p.url}${path}${query}`, { redirect: 'manual' });
    assert.equal(res.status, status, path);
    const body: unknown = await res.json();
    const documented = doc.paths[path]!.get.responses[String(status)];
    assert.ok(documented.content['application/json'].examples[code], `${path} documents ${code}`);
    const validate = ajv.compile(errorSchema(documented));
    assert.ok(validate(body), `${path}: ${ajv.errorsText(validate.errors)}`);
    assert.equal((body as { error: string }).error, code);
  }
});
