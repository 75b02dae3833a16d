import assert from 'node:assert/strict';
import type { Gql, V1 } from './support/answers';
import type { Execution, Workflow, WorkflowSummary } from './support/engine-answers';
import { startTestPlatform, type TestPlatform } from './support/platform';

/** A workflow variable as /v1/engine/variables answers it. */
interface Variable {
  variableId: string;
  key: string;
  value: string;
}

/**
 * n8n's run-time surface on the platform: variables (`$vars`) kept in PostgreSQL, changed through
 * REST and GraphQL with `variable:write`, read by whoever reads workflows, and seen read-only by
 * expressions and Code nodes of the executions that start after a change; workflow static data
 * (`$getWorkflowStaticData`) kept between production executions, not manual ones, with no change
 * lost when executions finish together; an export's pinned data, used by manual runs only.
 */

let p: TestPlatform;
/** workflow:read/write/execute: reads variables, cannot change them. */
let reader: string;
/** The same plus variable:write. */
let writer: string;

beforeAll(async () => {
  p = await startTestPlatform();
  reader = (await p.createKey({ service: 'engine', permissions: ['workflow:read', 'workflow:write', 'workflow:execute'] })).key;
  writer = (await p.createKey({ service: 'engine', permissions: ['workflow:read', 'workflow:write', 'workflow:execute', 'variable:write'] })).key;
});
afterAll(async () => {
  await p?.stop();
});

const to = (node: string) => ({ node, type: 'main', index: 0 });

/** Manual trigger → Set 3.4 writing `$vars.region` by expression → Code reading `$vars` in its sandbox. */
const varsExport = {
  name: 'Reads variables',
  nodes: [
    { id: '1', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
    {
      id: '2',
      name: 'Set',
      type: 'n8n-nodes-base.set',
      typeVersion: 3.4,
      position: [200, 0],
      parameters: { assignments: { assignments: [{ id: 'a', name: 'region', value: '={{ $vars.region }}', type: 'string' }] }, options: {} },
    },
    {
      id: '3',
      name: 'Code',
      type: 'n8n-nodes-base.code',
      typeVersion: 2,
      position: [400, 0],
      parameters: {
        jsCode:
          "let changed = 'no';\ntry { $vars.region = 'moon'; } catch (e) { changed = 'refused'; }\n" +
          'return [{ json: { fromSet: $json.region, region: $vars.region, keys: Object.keys($vars).sort(), missing: $vars.nothing ?? null, after: $vars.region, changed } }];',
      },
    },
  ],
  connections: { Start: { main: [[to('Set')]] }, Set: { main: [[to('Code')]] } },
};

async function runSync(key: string, workflowId: string) {
  const res = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { key, body: { mode: 'sync', data: {}, timeout: 60 } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.data.status, 'success', JSON.stringify(res.body.data.error));
  return res.body.data.result.items as Record<string, unknown>[];
}

describe('variables', () => {
  test('created, listed, read, updated and deleted through REST; variable:write to change them, workflow:read to read them', async () => {
    const refused = await p.rest<V1<Variable>>('POST', '/v1/engine/variables', { key: reader, body: { key: 'region', value: 'eu' } });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.deepEqual([refused.body.error.code, refused.body.error.details.required], ['insufficient_permissions', 'variable:write']);

    const created = await p.rest<V1<Variable>>('POST', '/v1/engine/variables', { key: writer, body: { key: 'tier', value: 'gold' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const v = created.body.data;
    assert.equal(v.key, 'tier');
    assert.equal(v.value, 'gold');
    assert.match(v.variableId, /^[0-9a-f-]{36}$/);

    const listed = await p.rest<V1<{ variables: Variable[] }>>('GET', '/v1/engine/variables', { key: reader });
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.data.variables.map((x) => [x.key, x.value]),
      [['tier', 'gold']],
    );
    const got = await p.rest<V1<Variable>>('GET', `/v1/engine/variables/${v.variableId}`, { key: reader });
    assert.deepEqual([got.status, got.body.data.value], [200, 'gold']);

    assert.equal((await p.rest<V1<Variable>>('PUT', `/v1/engine/variables/${v.variableId}`, { key: reader, body: { value: 'x' } })).status, 403);
    const updated = await p.rest<V1<Variable>>('PUT', `/v1/engine/variables/${v.variableId}`, { key: writer, body: { value: 'platinum' } });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.deepEqual([updated.body.data.key, updated.body.data.value], ['tier', 'platinum']);

    assert.equal((await p.rest<V1<Variable>>('DELETE', `/v1/engine/variables/${v.variableId}`, { key: reader })).status, 403);
    const deleted = await p.rest<V1<Variable>>('DELETE', `/v1/engine/variables/${v.variableId}`, { key: writer });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    const gone = await p.rest<V1<Variable>>('GET', `/v1/engine/variables/${v.variableId}`, { key: reader });
    assert.deepEqual([gone.status, gone.body.error.code], [404, 'resource_not_found']);
    assert.equal((await p.rest<V1<Variable>>('DELETE', `/v1/engine/variables/${v.variableId}`, { key: writer })).status, 404);
  });

  test('bad keys and values are refused by field, a taken key is 409, and nothing is written', async () => {
    const bad = async (body: unknown) => {
      const res = await p.rest<V1<Variable>>('POST', '/v1/engine/variables', { key: writer, body });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'validation_error');
      return res.body.error.details.errors?.map((e) => e.field);
    };
    assert.deepEqual(await bad({ key: 'has space', value: 'a' }), ['key']);
    assert.deepEqual(await bad({ key: 'k'.repeat(51), value: 'a' }), ['key']);
    assert.deepEqual(await bad({ key: 'ok', value: 'v'.repeat(1001) }), ['value']);
    assert.deepEqual(await bad({ value: 'a' }), ['key']);
    assert.deepEqual(await bad({ key: 'ok' }), ['value']);

    const first = await p.rest<V1<Variable>>('POST', '/v1/engine/variables', { key: writer, body: { key: 'dup', value: '1' } });
    assert.equal(first.status, 201);
    const again = await p.rest<V1<Variable>>('POST', '/v1/engine/variables', { key: writer, body: { key: 'dup', value: '2' } });
    assert.equal(again.status, 409, JSON.stringify(again.body));
    assert.deepEqual([again.body.error.code, again.body.error.details.existing_id], ['resource_already_exists', first.body.data.variableId]);
    // Renaming another variable onto a taken key is refused the same way.
    const other = await p.rest<V1<Variable>>('POST', '/v1/engine/variables', { key: writer, body: { key: 'other', value: '3' } });
    const rename = await p.rest<V1<Variable>>('PUT', `/v1/engine/variables/${other.body.data.variableId}`, { key: writer, body: { key: 'dup' } });
    assert.equal(rename.status, 409, JSON.stringify(rename.body));

    const all = (await p.rest<V1<{ variables: Variable[] }>>('GET', '/v1/engine/variables', { key: reader })).body.data.variables;
    assert.deepEqual(
      all.map((x) => [x.key, x.value]),
      [
        ['dup', '1'],
        ['other', '3'],
      ],
    );
    for (const x of all) await p.rest<V1<Variable>>('DELETE', `/v1/engine/variables/${x.variableId}`, { key: writer });
  });

  test('GraphQL: the same operations, under the same permissions', async () => {
    const create = 'mutation($input: WorkflowVariableInput!) { createWorkflowVariable(input: $input) { variableId key value } }';
    const denied = await p.graphql<Gql<unknown>>(create, { input: { key: 'g', value: '1' } }, reader);
    assert.equal(denied.body.errors?.[0].extensions.code, 'insufficient_permissions');
    const made = await p.graphql<Gql<{ createWorkflowVariable: Variable }>>(create, { input: { key: 'g', value: '1' } }, writer);
    assert.equal(made.body.errors, undefined, JSON.stringify(made.body));
    const id = made.body.data.createWorkflowVariable.variableId;
    const listed = await p.graphql<Gql<{ workflowVariables: unknown }>>('{ workflowVariables { key value } }', {}, reader);
    assert.deepEqual(listed.body.data.workflowVariables, [{ key: 'g', value: '1' }]);
    const del = await p.graphql<Gql<{ deleteWorkflowVariable: Variable }>>(
      'mutation($id: ID!) { deleteWorkflowVariable(variableId: $id) { variableId } }',
      { id },
      writer,
    );
    assert.equal(del.body.data.deleteWorkflowVariable.variableId, id);
  });

  test('$vars in expressions and Code nodes: the values as the execution starts, read-only', async () => {
    const imported = await p.rest<V1<WorkflowSummary>>('POST', '/v1/engine/workflows/import', { key: reader, body: { workflow: varsExport } });
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    const workflowId = imported.body.data.workflowId;

    const [none] = await runSync(reader, workflowId);
    assert.deepEqual([none!.keys, none!.region, none!.missing], [[], undefined, null]);

    const region = await p.rest<V1<Variable>>('POST', '/v1/engine/variables', { key: writer, body: { key: 'region', value: 'eu-west' } });
    await p.rest<V1<Variable>>('POST', '/v1/engine/variables', { key: writer, body: { key: 'stage', value: 'prod' } });
    const out = await runSync(reader, workflowId);
    assert.equal(out.length, 1);
    assert.equal(out[0]!.fromSet, 'eu-west');
    assert.equal(out[0]!.region, 'eu-west');
    assert.deepEqual(out[0]!.keys, ['region', 'stage']);
    assert.equal(out[0]!.missing, null);
    // The code cannot change what the next node or execution sees.
    assert.equal(out[0]!.after, 'eu-west');

    await p.rest<V1<Variable>>('PUT', `/v1/engine/variables/${region.body.data.variableId}`, { key: writer, body: { value: 'us-east' } });
    assert.equal((await runSync(reader, workflowId))[0]!.region, 'us-east');
  });
});

describe('workflow static data', () => {
  /** An active workflow: a webhook trigger on `path` (answering with the Code node's item) → Code running `jsCode`. */
  async function hooked(name: string, path: string, jsCode: string) {
    const wf = await p.rest<V1<Workflow>>('POST', '/v1/engine/workflows', {
      key: writer,
      body: {
        name,
        active: true,
        nodes: [
          { name: 'Hook', type: 'engine.webhook' },
          { name: 'Code', type: 'n8n-nodes-base.code', typeVersion: 2, parameters: { jsCode } },
        ],
        connections: { Hook: { main: [[to('Code')]] } },
      },
    });
    assert.equal(wf.status, 201, JSON.stringify(wf.body));
    const hook = await p.rest('POST', '/v1/engine/webhooks', {
      key: writer,
      body: { workflowId: wf.body.data.workflowId, path, method: 'POST', responseMode: 'lastNode' },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    return wf.body.data.workflowId;
  }
  async function call(path: string, body: unknown = {}) {
    const res = await fetch(`${p.url}/webhook/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json: unknown = await res.json();
    assert.equal(res.status, 200, JSON.stringify(json));
    return json;
  }

  const counter =
    "const g = $getWorkflowStaticData('global');\nconst n = $getWorkflowStaticData('node');\n" +
    'g.count = (g.count ?? 0) + 1;\nn.last = ($json.body ?? {}).tag ?? null;\n' +
    'return [{ json: { count: g.count, last: n.last, slots: Object.keys(g) } }];';

  test("webhook runs keep 'global' and 'node' data between executions; manual runs read it but do not keep their changes", async () => {
    const workflowId = await hooked('Counter', 'static-counter', counter);
    assert.deepEqual(await call('static-counter', { tag: 'a' }), { count: 1, last: 'a', slots: ['count'] });
    assert.deepEqual(await call('static-counter', { tag: 'b' }), { count: 2, last: 'b', slots: ['count'] });
    // A manual run sees the data, but, as in n8n, what it changes is not kept.
    const manual = await runSync(writer, workflowId);
    assert.deepEqual(manual, [{ count: 3, last: null, slots: ['count'] }]);
    assert.deepEqual(await call('static-counter', {}), { count: 3, last: null, slots: ['count'] });
    assert.deepEqual(await call('static-counter', { tag: 'c' }), { count: 4, last: 'c', slots: ['count'] });
  });

  test("an unknown type fails the node with n8n's message", async () => {
    const workflowId = await hooked('Bad type', 'static-bad', "$getWorkflowStaticData('workflow'); return [];");
    const res = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, {
      key: writer,
      body: { mode: 'sync', data: {}, timeout: 60 },
    });
    assert.equal(res.body.data.status, 'error');
    assert.match(res.body.data.error.message, /The type "workflow" is not known\. Valid types are "global" and "node"\./);
  });

  test("executions finishing together lose none of each other's changes", async () => {
    const workflowId = await hooked(
      'Together',
      'static-together',
      "const g = $getWorkflowStaticData('global');\nif ($json.body) g['run_' + $json.body.n] = true;\nreturn [{ json: { keys: Object.keys(g).length } }];",
    );
    await Promise.all(Array.from({ length: 6 }, (_, n) => call('static-together', { n })));
    const [seen] = await runSync(writer, workflowId);
    assert.equal(seen!.keys, 6);
  });
});

describe('pinned data', () => {
  test('kept from an n8n export: a manual run takes the pinned items instead of running the node, a webhook run ignores them', async () => {
    const exported = {
      name: 'Pinned',
      nodes: [
        { id: '1', name: 'Hook', type: 'engine.webhook', position: [0, 0], parameters: {} },
        { id: '2', name: 'Code', type: 'n8n-nodes-base.code', typeVersion: 2, position: [200, 0], parameters: { jsCode: 'return [{ json: { ran: true } }];' } },
      ],
      connections: { Hook: { main: [[to('Code')]] } },
      // n8n's shape, plus an older export's plain objects and a node the workflow does not have.
      pinData: { Code: [{ json: { a: 1 } }, { a: 2 }], Gone: [{ json: { x: 1 } }] },
    };
    const imported = await p.rest<V1<WorkflowSummary>>('POST', '/v1/engine/workflows/import', { key: writer, body: { workflow: exported } });
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    const workflowId = imported.body.data.workflowId;
    assert.deepEqual(await runSync(writer, workflowId), [{ a: 1 }, { a: 2 }]);

    assert.equal((await p.rest('POST', `/v1/engine/workflows/${workflowId}/activate`, { key: writer })).status, 200);
    const hook = await p.rest('POST', '/v1/engine/webhooks', { key: writer, body: { workflowId, path: 'pinned', method: 'POST', responseMode: 'lastNode' } });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const res = await fetch(`${p.url}/webhook/pinned`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.deepEqual([res.status, await res.json()], [200, { ran: true }]);
  });
});
