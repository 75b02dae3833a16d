import assert from 'node:assert/strict';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import { chain, start, type WorkflowNode } from './support/fixtures';
import { answerOf } from './support/json';
import type { V1 } from './support/answers';
import type { Execution, ExecutionList, Workflow, WorkflowSummary } from './support/engine-answers';
import { startTestPlatform, type TestPlatform, type JsonAnswer } from './support/platform';

/**
 * Permission by effect: a workflow may reach the agent and prompt nodes (which call the other
 * services as the platform) only for a key holding agent:execute or prompt:test — whether the
 * node is placed directly, in a workflow given inline to an Execute Workflow node, or in a
 * sub-workflow called by id or resource locator, at any depth. Checked when the workflow is saved
 * (as far as the definition shows), and again at run time with the key the execution runs as:
 * the caller, or for a webhook the key that registered it; a key revoked since makes the node fail.
 */

let p: TestPlatform;
let fake: FakeLlm;
/** workflow:read/write/execute only, as in the issue. */
let limited: string;
/** The same plus agent:execute and prompt:test. */
let trusted: { id: string; key: string };
const guide = JSON.stringify({ summary: 'A guide', files: [{ path: 'docs/guide.md', content: '# Guide\n' }] });

beforeAll(async () => {
  fake = await startFakeLlm({ models: ['model-default'] });
  p = await startTestPlatform({ LLM_BASE_URL: fake.url, LLM_MODELS: 'model-default' });
  fake.reply(() => guide);
  limited = (await p.createKey({ service: 'engine', permissions: ['workflow:read', 'workflow:write', 'workflow:execute'] })).key;
  trusted = await p.createKey({ service: 'engine', permissions: ['workflow:read', 'workflow:write', 'workflow:execute', 'agent:execute', 'prompt:test'] });
  const prompt = await p.rest('POST', '/v1/promptlib/prompts', {
    body: { name: 'say-hi', description: 'Greets', template: 'Say hi to {{who}}.', variables: ['who'] },
  });
  assert.equal(prompt.status, 201, JSON.stringify(prompt.body));
});
afterAll(async () => {
  await p?.stop();
  await fake?.close();
});

const agentNode: WorkflowNode = {
  name: 'Agent',
  type: 'engine.agent',
  parameters: { agentId: 'docs-author', taskType: 'write-guide', context: { topic: 'webhooks', audience: 'operators' }, timeout: 60 },
};
const promptNode: WorkflowNode = { name: 'Prompt', type: 'engine.prompt', parameters: { promptId: 'say-hi', variables: { who: 'Ann' } } };
const to = (node: string) => ({ node, type: 'main', index: 0 });

/** The export: n8n's Execute Workflow 1 running a workflow given inline (`source: parameter`) that holds `inner`. */
function inlineExport(inner: WorkflowNode) {
  return {
    name: 'Inline agent',
    nodes: [
      { id: '1', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
      {
        id: '2',
        name: 'Run inline',
        type: 'n8n-nodes-base.executeWorkflow',
        typeVersion: 1,
        position: [200, 0],
        parameters: { source: 'parameter', workflowJson: JSON.stringify({ nodes: [start, inner], connections: { Start: { main: [[to(inner.name)]] } } }) },
      },
    ],
    connections: { Start: { main: [[to('Run inline')]] } },
  };
}

/** Start -> n8n's Execute Workflow 1.1 calling `workflowId` (text, a resource locator, or an expression). */
function caller(name: string, workflowId: unknown) {
  return {
    name,
    nodes: [
      { id: '1', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
      { id: '2', name: 'Call', type: 'n8n-nodes-base.executeWorkflow', typeVersion: 1.1, position: [200, 0], parameters: { source: 'database', workflowId } },
    ],
    connections: { Start: { main: [[to('Call')]] } },
  };
}

async function importAs(key: string, workflow: unknown) {
  return p.rest<V1<WorkflowSummary>>('POST', '/v1/engine/workflows/import', { key, body: { workflow } });
}
async function create(key: string, name: string, nodes: WorkflowNode[]) {
  return p.rest<V1<Workflow>>('POST', '/v1/engine/workflows', { key, body: { name, ...chain(nodes) } });
}
async function runSync(key: string, workflowId: string, data: Record<string, unknown> = {}) {
  const res = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { key, body: { mode: 'sync', data, timeout: 60 } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}
function assertRefused(res: JsonAnswer<V1<unknown>>, required: string) {
  assert.equal(res.status, 403, JSON.stringify(res.body));
  assert.deepEqual([res.body.error.code, res.body.error.details.required], ['insufficient_permissions', required]);
}
async function tasks(): Promise<number> {
  return (await p.rest<V1<{ tasks: unknown[] }>>('GET', '/v1/control-plane/agents/tasks?agentId=docs-author&limit=100')).body.data.tasks.length;
}

describe('saving: every agent or prompt node a workflow reaches needs the permission running it needs', () => {
  test("the issue's import: an inline workflow with an agent (or prompt) node is refused as the node placed directly is, and no task is created", async () => {
    const before = await tasks();
    const direct = await create(limited, 'Direct', [start, agentNode]);
    assertRefused(direct, 'agent:execute');
    const inline = await importAs(limited, inlineExport(agentNode));
    assertRefused(inline, 'agent:execute');
    assert.deepEqual(inline.body.error.details.path, ['Run inline', '(inline workflow)', 'Agent']);
    assert.match(inline.body.error.message, /reaches engine\.agent \(through "Run inline" → "\(inline workflow\)" → "Agent"\)/);
    assertRefused(await importAs(limited, inlineExport(promptNode)), 'prompt:test');
    assert.equal(await tasks(), before, 'nothing ran');
    // Inline workflows nest: one inside another is followed too.
    const nested = inlineExport({
      name: 'Deeper',
      type: 'n8n-nodes-base.executeWorkflow',
      typeVersion: 1,
      parameters: { source: 'parameter', workflowJson: JSON.stringify({ nodes: [start, agentNode], connections: { Start: { main: [[to('Agent')]] } } }) },
    } as WorkflowNode);
    assertRefused(await importAs(limited, nested), 'agent:execute');
    // A key that holds the permission imports it, and the run creates and completes the task.
    const allowed = await importAs(trusted.key, inlineExport(agentNode));
    assert.equal(allowed.status, 201, JSON.stringify(allowed.body));
    const done = await runSync(trusted.key, allowed.body.data.workflowId);
    assert.equal(done.status, 'success', JSON.stringify(done.error));
    assert.equal(done.result.items[0].status, 'completed');
  });

  test('a sub-workflow by id, by resource locator, or further down a chain of calls is followed; a cycle without such nodes is fine', async () => {
    const agentWorkflow = (await create(trusted.key, 'Has an agent', [start, agentNode])).body.data.workflowId;
    assertRefused(await importAs(limited, caller('By id', agentWorkflow)), 'agent:execute');
    const byLocator = await importAs(limited, caller('By locator', { __rl: true, value: agentWorkflow, mode: 'list', cachedResultName: 'Has an agent' }));
    assertRefused(byLocator, 'agent:execute');
    assert.deepEqual(byLocator.body.error.details.path, ['Call', `(workflow ${agentWorkflow})`, 'Agent']);
    // Ours: engine.executeWorkflow, two workflows deep.
    const middle = (await create(trusted.key, 'Middle', [start, { name: 'Down', type: 'engine.executeWorkflow', parameters: { workflowId: agentWorkflow } }]))
      .body.data.workflowId;
    const top = await create(limited, 'Top', [start, { name: 'Call middle', type: 'engine.executeWorkflow', parameters: { workflowId: middle } }]);
    assertRefused(top, 'agent:execute');
    assert.deepEqual(top.body.error.details.path, ['Call middle', `(workflow ${middle})`, 'Down', `(workflow ${agentWorkflow})`, 'Agent']);

    // A calls B, B calls A: walked once each, saved.
    const a = (await create(limited, 'Ping', [start, { name: 'Noop', type: 'engine.noOp' }])).body.data.workflowId;
    const b = await create(limited, 'Pong', [start, { name: 'Back', type: 'engine.executeWorkflow', parameters: { workflowId: a } }]);
    assert.equal(b.status, 201, JSON.stringify(b.body));
    const looped = await p.rest('PUT', `/v1/engine/workflows/${a}`, {
      key: limited,
      body: chain([start, { name: 'There', type: 'engine.executeWorkflow', parameters: { workflowId: b.body.data.workflowId } }]),
    });
    assert.equal(looped.status, 200, JSON.stringify(looped.body));
  });

  test('activating needs what the nodes need (deactivating does not): it is a save', async () => {
    const id = (await create(trusted.key, 'Agent to activate', [start, agentNode])).body.data.workflowId;
    assertRefused(await p.rest('POST', `/v1/engine/workflows/${id}/activate`, { key: limited }), 'agent:execute');
    assert.equal((await p.rest<V1<Workflow>>('GET', `/v1/engine/workflows/${id}`)).body.data.active, false);
    assert.equal((await p.rest('POST', `/v1/engine/workflows/${id}/activate`, { key: trusted.key })).status, 200);
    const off = await p.rest<V1<Workflow>>('POST', `/v1/engine/workflows/${id}/deactivate`, { key: limited });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    assert.equal(off.body.data.active, false);
  });
});

describe('running: the key the execution runs as must hold the permission when the node runs', () => {
  test('a target computed by an expression is checked at run time, with the caller’s permissions, at any depth', async () => {
    const agentWorkflow = (await create(trusted.key, 'Agent target', [start, agentNode])).body.data.workflowId;
    const dynamic = await importAs(limited, caller('Dynamic', '={{ $json.target }}'));
    assert.equal(dynamic.status, 201, 'what the expression computes is not known when saving');
    const before = await tasks();
    const failed = await runSync(limited, dynamic.body.data.workflowId, { target: agentWorkflow });
    assert.equal(failed.status, 'error');
    assert.equal(failed.error.node, 'Call', JSON.stringify(failed.error));
    assert.deepEqual([failed.error.details.code, failed.error.details.required], ['insufficient_permissions', 'agent:execute'], JSON.stringify(failed.error));
    assert.match(failed.error.message, /needs agent:execute: the execution runs as API key/);
    assert.equal(await tasks(), before, 'no task was created');
    // The same call by a key that holds agent:execute runs the task.
    const done = await runSync(trusted.key, dynamic.body.data.workflowId, { target: agentWorkflow });
    assert.equal(done.status, 'success', JSON.stringify(done.error));
    assert.equal(done.result.items[0].status, 'completed');
  });

  test('an inline workflow computed at run time, and a workflow saved by another key, run with the caller’s permissions', async () => {
    const expression = {
      ...inlineExport(promptNode),
      nodes: [
        inlineExport(promptNode).nodes[0],
        { ...inlineExport(promptNode).nodes[1], parameters: { source: 'parameter', workflowJson: '={{ $json.inline }}' } },
      ],
    };
    const saved = await importAs(limited, expression);
    assert.equal(saved.status, 201, JSON.stringify(saved.body));
    const json = JSON.stringify({ nodes: [start, promptNode], connections: { Start: { main: [[to('Prompt')]] } } });
    const failed = await runSync(limited, saved.body.data.workflowId, { inline: json });
    assert.deepEqual([failed.status, failed.error.details.code, failed.error.details.required], ['error', 'insufficient_permissions', 'prompt:test']);
    // A workflow with an agent node saved by a trusted key, run by the limited one: the node is refused.
    const theirs = (await create(trusted.key, 'Theirs', [start, agentNode])).body.data.workflowId;
    const refused = await runSync(limited, theirs);
    assert.deepEqual([refused.status, refused.error.node, refused.error.details.code], ['error', 'Agent', 'insufficient_permissions']);
    const ok = await runSync(trusted.key, theirs);
    assert.equal(ok.status, 'success', JSON.stringify(ok.error));
  });

  test('a webhook’s runs act as the key that registered it: a key without the permission, or one revoked since, fails the node', async () => {
    const wf = await p.rest<V1<Workflow>>('POST', '/v1/engine/workflows', {
      key: trusted.key,
      body: { name: 'Hooked agent', active: true, ...chain([{ name: 'Hook', type: 'engine.webhook' }, agentNode]) },
    });
    assert.equal(wf.status, 201, JSON.stringify(wf.body));
    const id = wf.body.data.workflowId;
    const register = async (key: string, path: string) => {
      const res = await p.rest('POST', '/v1/engine/webhooks', { key, body: { workflowId: id, path, method: 'POST', responseMode: 'lastNode' } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    };
    const call = async (path: string) => {
      const res = await fetch(`${p.url}/webhook/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      return answerOf<{ status: string }>(res);
    };
    const latest = async () => (await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?workflowId=${id}&limit=1`)).body.data.executions[0].executionId;

    await register(limited, 'by-limited');
    const denied = await call('by-limited');
    assert.equal(denied.status, 500, JSON.stringify(denied.body));
    const deniedRun = (await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${await latest()}`)).body.data;
    assert.deepEqual(
      [deniedRun.status, deniedRun.error.details.code, deniedRun.error.details.required],
      ['error', 'insufficient_permissions', 'agent:execute'],
    );

    const owner = await p.createKey({ service: 'engine', permissions: ['workflow:write', 'agent:execute'] });
    await register(owner.key, 'by-owner');
    const ran = await call('by-owner');
    assert.equal(ran.status, 200, JSON.stringify(ran.body));
    assert.equal(ran.body.status, 'completed');

    assert.equal((await p.rest('DELETE', `/control-plane/api/v1/auth/api-keys/${owner.id}`)).status, 200);
    const revoked = await call('by-owner');
    assert.equal(revoked.status, 500, JSON.stringify(revoked.body));
    const revokedRun = (await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${await latest()}`)).body.data;
    assert.deepEqual(
      [revokedRun.status, revokedRun.error.node, revokedRun.error.details.code, revokedRun.error.details.reason],
      ['error', 'Agent', 'insufficient_permissions', 'key_revoked'],
    );
    assert.match(revokedRun.error.message, /was revoked/);
  });
});
