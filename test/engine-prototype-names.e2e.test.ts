import assert from 'node:assert/strict';
import type { V1 } from './support/answers';
import type { Execution } from './support/engine-answers';
import { startTestPlatform, type Answer, type TestPlatform } from './support/platform';

/** What a place answers: its error envelope, or the execution of the run it led to. */
type Sent = Answer<V1<Execution>>;

/**
 * Every name a user gives the engine (node types, n8n node types, operations, modes and units of
 * n8n nodes, expression functions and units, node names, header and setting names, filters) is
 * looked up among the table's own entries: each name of Object.prototype (`__proto__`,
 * `constructor`, `valueOf`, …) sent to each place answers as any unknown or ordinary name does —
 * a 4xx in the surface's envelope, or an execution that succeeds or fails with a clear message —
 * never a 500 and never an internal TypeError.
 */

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

const NAMES = Object.getOwnPropertyNames(Object.prototype);
const to = (node: string) => ({ node, type: 'main', index: 0 });
const n8n = (name: string, type: string, typeVersion: number, parameters: Record<string, unknown>, x = 200) => ({
  id: name,
  name,
  type: `n8n-nodes-base.${type}`,
  typeVersion,
  position: [x, 0],
  parameters,
});
const trigger = n8n('Start', 'manualTrigger', 1, {}, 0);

/** An n8n export of Start -> `node`, in n8n's v1 order. */
const n8nWorkflow = (node: Record<string, unknown>) => ({
  name: 'Names',
  settings: { executionOrder: 'v1' },
  nodes: [trigger, node],
  connections: { Start: { main: [[to(node.name as string)]] } },
});
/** A workflow of ours: Start -> `node`. */
const ours = (node: Record<string, unknown>) => ({
  name: 'Names',
  nodes: [{ name: 'Start', type: 'engine.manualTrigger' }, node],
  connections: { Start: { main: [[to(node.name as string)]] } },
});

/** Imports (or creates) the workflow and, when that works, runs it synchronously: what the client sees last. */
async function saveAndRun(
  workflow: Record<string, unknown>,
  data: Record<string, unknown> = { a: 1, s: 'text', d: '2024-05-06T07:08:09.000Z' },
): Promise<Sent> {
  const saved = await p.rest<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows/import', { body: { workflow } });
  if (saved.status !== 201) return saved as Answer<V1<never>>;
  return p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${saved.body.data.workflowId}/execute`, { body: { mode: 'sync', data, timeout: 30 } });
}

/** A webhook trigger with `fields`, on a workflow that answers with its item. */
async function webhook(path: string, fields: Record<string, unknown>) {
  const wf = await p.rest<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', {
    body: { name: 'Hooked', active: true, nodes: [{ name: 'Hook', type: 'engine.webhook' }], connections: {} },
  });
  // Read only when refused: its error envelope.
  return p.rest<V1<never>>('POST', '/v1/engine/webhooks', {
    body: { workflowId: wf.body.data.workflowId, path, method: 'POST', responseMode: 'lastNode', ...fields },
  });
}

async function inbound(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${p.url}/webhook/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"a":1}' });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined } as Sent;
}

/** Each place a user's name is looked up: what a client sees after giving it `name`. */
const PLACES: Record<string, (name: string, i: number) => Promise<Sent>> = {
  'node type engine.<name>': (name) => p.rest('POST', '/v1/engine/workflows', { body: ours({ name: 'N', type: `engine.${name}` }) }),
  'node type <name>': (name) => p.rest('POST', '/v1/engine/workflows', { body: ours({ name: 'N', type: name }) }),
  'n8n node type n8n-nodes-base.<name>': (name) => saveAndRun(n8nWorkflow(n8n('N', name, 1, {}))),
  'n8n node type @n8n/n8n-nodes-base.<name>': (name) => saveAndRun(n8nWorkflow({ ...n8n('N', 'x', 1, {}), type: `@n8n/n8n-nodes-base.${name}` })),
  'Item Lists operation': (name) => saveAndRun(n8nWorkflow(n8n('N', 'itemLists', 3, { operation: name }))),
  'Remove Duplicates operation': (name) => saveAndRun(n8nWorkflow(n8n('N', 'removeDuplicates', 2, { operation: name }))),
  'Code language': (name) => saveAndRun(n8nWorkflow(n8n('N', 'code', 2, { language: name, jsCode: 'return $input.all();' }))),
  'Execute Workflow source': (name) => saveAndRun(n8nWorkflow(n8n('N', 'executeWorkflow', 1, { source: name }))),
  'Merge mode': (name) => saveAndRun(n8nWorkflow(n8n('N', 'merge', 2, { mode: name }))),
  'Date & Time operation': (name) => saveAndRun(n8nWorkflow(n8n('N', 'dateTime', 2, { operation: name }))),
  'Date & Time 2 part and unit': (name) => saveAndRun(n8nWorkflow(n8n('N', 'dateTime', 2, { operation: 'extractDate', date: '={{ $json.d }}', part: name }))),
  'Date & Time 1 action': (name) => saveAndRun(n8nWorkflow(n8n('N', 'dateTime', 1, { action: name, value: '={{ $json.d }}' }))),
  'Date & Time 1 time unit': (name) =>
    saveAndRun(
      n8nWorkflow(
        n8n('N', 'dateTime', 1, { action: 'calculate', value: '={{ $json.d }}', operation: 'add', duration: 1, timeUnit: name, dataPropertyName: 'x' }),
      ),
    ),
  'Date & Time 1 format': (name) =>
    saveAndRun(n8nWorkflow(n8n('N', 'dateTime', 1, { action: 'format', value: '={{ $json.d }}', toFormat: name, dataPropertyName: 'x' }))),
  'Crypto action': (name) => saveAndRun(n8nWorkflow(n8n('N', 'crypto', 1, { action: name, value: 'x', dataPropertyName: 'h' }))),
  'Crypto hash type': (name) => saveAndRun(n8nWorkflow(n8n('N', 'crypto', 1, { action: 'hash', type: name, value: 'x', dataPropertyName: 'h' }))),
  'Set 3 field type': (name) => saveAndRun(n8nWorkflow(n8n('N', 'set', 3, { fields: { values: [{ name: 'x', type: name, stringValue: 'a' }] } }))),
  'Set 3.4 assignment type': (name) =>
    saveAndRun(n8nWorkflow(n8n('N', 'set', 3.4, { assignments: { assignments: [{ id: '1', name: 'x', value: '1', type: name }] } }))),
  'If 2 operator type': (name) =>
    saveAndRun(
      n8nWorkflow(
        n8n('N', 'if', 2, {
          conditions: { conditions: [{ leftValue: '={{ $json.s }}', rightValue: 'x', operator: { type: name, operation: 'equals' } }], combinator: 'and' },
        }),
      ),
    ),
  'If 2 operator operation': (name) =>
    saveAndRun(
      n8nWorkflow(
        n8n('N', 'if', 2, {
          conditions: { conditions: [{ leftValue: '={{ $json.s }}', rightValue: 'x', operator: { type: 'string', operation: name } }], combinator: 'and' },
        }),
      ),
    ),
  'If 1 operation': (name) =>
    saveAndRun(n8nWorkflow(n8n('N', 'if', 1, { conditions: { string: [{ value1: '={{ $json.s }}', operation: name, value2: 'x' }] } }))),
  'Switch 1 data type': (name) =>
    saveAndRun(n8nWorkflow(n8n('N', 'switch', 1, { dataType: name, value1: 1, rules: { rules: [{ operation: 'equal', value2: 1, output: 0 }] } }))),
  'Switch 1 rule operation': (name) =>
    saveAndRun(n8nWorkflow(n8n('N', 'switch', 1, { dataType: 'number', value1: 1, rules: { rules: [{ operation: name, value2: 1, output: 0 }] } }))),
  'Summarize aggregation': (name) => saveAndRun(n8nWorkflow(n8n('N', 'summarize', 1, { fieldsToSummarize: { values: [{ aggregation: name, field: 'a' }] } }))),
  'Wait unit (mapped at import)': (name) => saveAndRun(n8nWorkflow(n8n('N', 'wait', 1.1, { resume: 'timeInterval', amount: 1, unit: name }))),
  'Wait resume (mapped at import)': (name) => saveAndRun(n8nWorkflow(n8n('N', 'wait', 1.1, { resume: name }))),
  'Schedule rule field (mapped at import)': (name) =>
    saveAndRun({ name: 'Names', nodes: [n8n('Tick', 'scheduleTrigger', 1.2, { rule: { interval: [{ field: name }] } }, 0)], connections: {} }),
  'Respond with (mapped at import)': (name) => saveAndRun(n8nWorkflow(n8n('N', 'respondToWebhook', 1, { respondWith: name }))),
  'node credentials': (name) => saveAndRun(n8nWorkflow({ ...n8n('N', 'noOp', 1, {}), credentials: { [name]: { id: '1', name } } })),
  'engine merge mode': (name) => p.rest('POST', '/v1/engine/workflows', { body: ours({ name: 'N', type: 'engine.merge', parameters: { mode: name } }) }),
  'engine code mode': (name) =>
    p.rest('POST', '/v1/engine/workflows', { body: ours({ name: 'N', type: 'engine.code', parameters: { code: 'return items;', mode: name } }) }),
  'engine wait resume': (name) => p.rest('POST', '/v1/engine/workflows', { body: ours({ name: 'N', type: 'engine.wait', parameters: { resume: name } }) }),
  'expression: a receiver named so': (name) =>
    saveAndRun(n8nWorkflow(n8n('N', 'set', 3.4, { assignments: { assignments: [{ id: '1', name: 'x', value: `={{ ${name}.first() }}`, type: 'string' }] } }))),
  'expression: a date unit': (name) =>
    saveAndRun(
      n8nWorkflow(
        n8n('N', 'set', 3.4, {
          assignments: {
            assignments: [
              { id: '1', name: 'x', value: `={{ $now.plus(1, ${JSON.stringify(name)}) }}`, type: 'string' },
              { id: '2', name: 'y', value: `={{ $now.beginningOf(${JSON.stringify(name)}) }}`, type: 'string' },
            ],
          },
        }),
      ),
    ),
  'expression: a node that did not run': (name) =>
    saveAndRun(ours({ name: 'N', type: 'engine.set', parameters: { values: { x: `{{ $node[${JSON.stringify(name)}].json.a }}` } } })),
  'settings name': (name) => saveAndRun({ ...ours({ name: 'N', type: 'engine.noOp' }), settings: JSON.parse(`{${JSON.stringify(name)}: 1}`) }),
  'connection from a node that does not exist': (name) =>
    p.rest('POST', '/v1/engine/workflows', {
      body: { ...ours({ name: 'N', type: 'engine.noOp' }), connections: JSON.parse(`{${JSON.stringify(name)}: {"main": [[]]}}`) },
    }),
  'execution data field': (name) => saveAndRun(ours({ name: 'N', type: 'engine.noOp' }), JSON.parse(`{${JSON.stringify(name)}: 1}`)),
  'retry fromNode': async (name) => {
    const failed = await saveAndRun(ours({ name: 'N', type: 'engine.code', parameters: { code: 'throw new Error("no")' } }));
    return p.rest('POST', `/v1/engine/executions/${failed.body.data.executionId}/retry`, { body: { fromNode: name } });
  },
  'execution list status': (name) => p.rest('GET', `/v1/engine/executions?status=${encodeURIComponent(name)}`),
  'control-plane execution list status': (name) => p.rest('GET', `/v1/control-plane/workflows/executions?status=${encodeURIComponent(name)}`),
  'webhook API key header': async (name, i) => {
    const path = `key-${i}`;
    const made = await webhook(`/${path}`, { authentication: { type: 'apiKey', apiKeyHeader: name, apiKeyValue: 'secret-value-1' } });
    if (made.status !== 201) return made;
    const without = await inbound(path);
    assert.equal(without.status, 401, `${name}: ${JSON.stringify(without.body)}`);
    return inbound(path, { [name]: 'secret-value-1' });
  },
  'webhook HMAC header': async (name, i) => {
    const path = `hmac-${i}`;
    const made = await webhook(`/${path}`, { authentication: { type: 'hmac', hmacHeader: name, hmacSecret: 'secret-value-1' } });
    if (made.status !== 201) return made;
    return inbound(path);
  },
  'webhook rate limit keyed by a header': async (name, i) => {
    const path = `limited-${i}`;
    const made = await webhook(`/${path}`, { rateLimit: { windowMs: 60_000, maxRequests: 100, keyBy: `header:${name}` } });
    if (made.status !== 201) return made;
    return inbound(path);
  },
};

/** A message a client can act on: not an internal symptom. */
const INTERNAL =
  /is not a function|Cannot read prop|Cannot convert|is not iterable|undefined is not|null is not|unexpectedly|\[object |native code|Maximum call stack/;

function problem(place: string, name: string, res: Sent): string | undefined {
  const where = `${place} [${name}]`;
  const text = JSON.stringify(res.body ?? '').slice(0, 400);
  if (res.status >= 500) return `${where}: ${res.status} ${text}`;
  const error = res.body?.error;
  if (res.status >= 400) {
    if (!error?.code || typeof error.message !== 'string' || INTERNAL.test(error.message)) return `${where}: ${res.status} without a clear error: ${text}`;
    return undefined;
  }
  const execution = res.body?.data;
  if (execution?.status === 'error' && (INTERNAL.test(execution.error?.message ?? '') || execution.error?.details?.reason === 'internal')) {
    return `${where}: the execution failed with ${text}`;
  }
  return undefined;
}

describe('names of Object.prototype in every place the engine looks a name up', () => {
  test(`${NAMES.length} names × ${Object.keys(PLACES).length} places: a 4xx or a clear execution outcome, never a 500`, async () => {
    const problems: string[] = [];
    let i = 0;
    for (const [place, send] of Object.entries(PLACES)) {
      for (const name of NAMES) {
        try {
          const found = problem(place, name, await send(name, i++));
          if (found) problems.push(found);
        } catch (err) {
          problems.push(`${place} [${name}]: ${(err as Error).message.split('\n')[0]}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  }, 300_000);

  test('a node may be named so: it runs, is connected, and expressions and code read it by its name', async () => {
    for (const name of NAMES) {
      const key = JSON.stringify(name);
      const workflow = {
        name: 'Named',
        nodes: [
          { name: 'Start', type: 'engine.manualTrigger' },
          { name, type: 'engine.set', parameters: { values: { b: 2 } } },
          { name: 'Read', type: 'engine.set', parameters: { values: { fromExpression: `{{ $node[${key}].json.b }}` } } },
          { name: 'Code', type: 'engine.code', parameters: { code: `return [{ fromCode: $node[${key}].json.b }];` } },
        ],
        connections: JSON.parse(`{"Start": {"main": [[{"node": ${key}}]]}, ${key}: {"main": [[{"node": "Read"}]]}, "Read": {"main": [[{"node": "Code"}]]}}`),
      };
      const res = await saveAndRun(workflow);
      assert.equal(res.status, 200, `${name}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.data.status, 'success', `${name}: ${JSON.stringify(res.body.data.error)}`);
      assert.deepEqual(res.body.data.result.items, [{ fromCode: 2 }], name);
      const data = (await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${res.body.data.executionId}?includeData=true`)).body.data;
      const read = data.nodeData.find((n) => n.nodeName === 'Read')!.output.main[0][0].json;
      assert.equal(read.fromExpression, 2, name);
    }
  }, 120_000);
});
