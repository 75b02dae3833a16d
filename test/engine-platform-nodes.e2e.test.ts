import assert from 'node:assert/strict';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import { chain, start, type WorkflowNode } from './support/fixtures';
import type { V1 } from './support/answers';
import type { Execution, Item, Workflow } from './support/engine-answers';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { sleep } from './support/until';

/**
 * The workflow nodes that use the platform's other services: `agent` runs a control-plane task,
 * `prompt` a prompt-library test (both through their public operations), against a fake model.
 */

let p: TestPlatform;
let fake: FakeLlm;
const guide = JSON.stringify({ summary: 'A guide', files: [{ path: 'docs/guide.md', content: '# Guide\n\n## Overview\nText\n' }] });

beforeAll(async () => {
  fake = await startFakeLlm({ models: ['model-default', 'model-b'] });
  p = await startTestPlatform({ LLM_BASE_URL: fake.url, LLM_MODELS: 'model-default,model-b' });
});
afterAll(async () => {
  await p?.stop();
  await fake?.close();
});

type N = WorkflowNode;

async function create(name: string, nodes: N[], key?: string) {
  return p.rest<V1<Workflow>>('POST', '/v1/engine/workflows', { key, body: { name, ...chain(nodes) } });
}
async function run<I = Item>(workflowId: string, data: Record<string, unknown>) {
  const res = await p.rest<V1<Execution<I>>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { body: { mode: 'sync', data, timeout: 60 } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

describe('prompt node', () => {
  test('runs a prompt-library test with variables resolved per item; passes on {output, metadata}', async () => {
    const created = await p.rest('POST', '/v1/promptlib/prompts', {
      body: { name: 'greet-customer', description: 'Greets', template: 'Say hello to {{customer}} about {{topic}}.', variables: ['customer', 'topic'] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const wf = await create('Prompted', [
      start,
      { name: 'Split', type: 'engine.code', parameters: { code: 'return items[0].json.customers.map((c) => ({ customer: c }));' } },
      {
        name: 'Greet',
        type: 'engine.prompt',
        parameters: { promptId: 'greet-customer', variables: { customer: '{{ $json.customer }}', topic: 'billing' }, model: 'model-b', temperature: 0.1 },
      },
      {
        name: 'Keep',
        type: 'engine.set',
        parameters: { values: { text: '{{ $json.output }}', tokens: '{{ $json.metadata.tokensUsed }}' }, keepOnlySet: true },
      },
    ]);
    assert.equal(wf.status, 201, JSON.stringify(wf.body));
    fake.reset();
    const done = await run<{ text: string; tokens: number }>(wf.body.data.workflowId, { customers: ['Ann', 'Bob'] });
    assert.equal(done.status, 'success', JSON.stringify(done.error));
    assert.deepEqual(
      done.result.items.map((i) => i.text),
      ['echo: Say hello to Ann about billing.', 'echo: Say hello to Bob about billing.'],
    );
    assert.ok(done.result.items.every((i) => i.tokens > 0));
    const bodies = fake.chatBodies();
    assert.deepEqual(
      bodies.map((b) => [b.model, b.temperature]),
      [
        ['model-b', 0.1],
        ['model-b', 0.1],
      ],
    );
    const data = (await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${done.executionId}?includeData=true`)).body.data;
    const greet = data.nodeData.find((n) => n.nodeName === 'Greet')!.output.main[0][0].json as {
      metadata: { model: string; promptId: string; version: number; testId: string };
    };
    assert.deepEqual(Object.keys(greet).sort(), ['metadata', 'output']);
    assert.deepEqual([greet.metadata.model, greet.metadata.promptId, greet.metadata.version], ['model-b', 'greet-customer', 1]);
    assert.match(greet.metadata.testId, /./);
    // The run is stored against the prompt like any test.
    const prompt = (await p.rest<V1<{ performance: { totalTests: number } }>>('GET', '/v1/promptlib/prompts/greet-customer')).body.data;
    assert.equal(prompt.performance.totalTests, 2);
  });

  test('an unknown prompt or a missing variable fails the node with the prompt library’s code', async () => {
    const wf = await create('Bad prompt', [start, { name: 'Greet', type: 'engine.prompt', parameters: { promptId: 'no-such-prompt', variables: {} } }]);
    const failed = await run(wf.body.data.workflowId, {});
    assert.equal(failed.status, 'error');
    assert.deepEqual([failed.error.code, failed.error.node, failed.error.details.code], ['NODE_EXECUTION_FAILED', 'Greet', 'PROMPT_NOT_FOUND']);
    const wf2 = await create('Missing variable', [
      start,
      { name: 'Greet', type: 'engine.prompt', parameters: { promptId: 'greet-customer', variables: { customer: 'Ann' } } },
    ]);
    const failed2 = await run(wf2.body.data.workflowId, {});
    assert.equal(failed2.error.details.code, 'validation_error');
    const missing = await create('No prompt id', [start, { name: 'Greet', type: 'engine.prompt', parameters: {} }]);
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.error.details.missingParameters, ['promptId']);
  });
});

describe('agent node', () => {
  test('runs a control-plane task to its end and passes on its result', async () => {
    fake.reply(() => guide);
    const wf = await create('Agentic', [
      start,
      {
        name: 'Write',
        type: 'engine.agent',
        parameters: { agentId: 'docs-author', taskType: 'write-guide', context: { topic: '{{ $json.topic }}', audience: 'operators' }, timeout: 60 },
      },
      {
        name: 'Pick',
        type: 'engine.set',
        parameters: { values: { summary: '{{ $json.result.output.summary }}', task: '{{ $json.taskId }}' }, keepOnlySet: true },
      },
    ]);
    assert.equal(wf.status, 201, JSON.stringify(wf.body));
    const done = await run<{ summary: string; task: string }>(wf.body.data.workflowId, { topic: 'webhooks' });
    assert.equal(done.status, 'success', JSON.stringify(done.error));
    const [item] = done.result.items;
    assert.equal(item.summary, 'A guide');
    const task = (await p.rest<V1<{ status: string; agentId: string; taskType: string }>>('GET', `/v1/control-plane/agents/tasks/${item.task}`)).body.data;
    assert.deepEqual([task.status, task.agentId, task.taskType], ['completed', 'docs-author', 'write-guide']);
    const last = fake.chatBodies().at(-1);
    assert.ok(JSON.stringify(last?.messages).includes('webhooks'), 'the context reached the agent');
    const data = (await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${done.executionId}?includeData=true`)).body.data;
    const out = data.nodeData.find((n) => n.nodeName === 'Write')!.output.main[0][0].json as {
      status: string;
      agentId: string;
      taskType: string;
      result: { filesCreated: string[] };
    };
    assert.deepEqual([out.status, out.agentId, out.taskType, out.result.filesCreated], ['completed', 'docs-author', 'write-guide', ['docs/guide.md']]);
    fake.reply(null);
  });

  test('waits on the task’s events, not by polling: a task of 3 s is read once after it starts and once when it ends', async () => {
    const ops = p.platform.kernel.operations;
    const execute = ops.execute.bind(ops);
    let reads = 0;
    ops.execute = ((query: string, variables?: Record<string, unknown>) => {
      if (query.includes('EngineAgentNodeTask')) reads++;
      return execute(query, variables);
    }) as typeof ops.execute;
    fake.reply(() => guide);
    fake.delay(3_000);
    try {
      const wf = await create('Patient agent', [
        start,
        { name: 'Write', type: 'engine.agent', parameters: { agentId: 'docs-author', taskType: 'write-guide', context: { topic: 'x', audience: 'y' } } },
      ]);
      const started = Date.now();
      const done = await run(wf.body.data.workflowId, {});
      assert.equal(done.status, 'success', JSON.stringify(done.error));
      assert.ok(Date.now() - started >= 3_000, 'the model took its 3 s');
      // Polling every 200 ms growing to 2 s read it six times in those 3 s.
      assert.ok(reads >= 1 && reads <= 2, `the task was read ${reads} times`);
    } finally {
      ops.execute = execute;
      fake.delay(0);
      fake.reply(null);
    }
  });

  test('a task that cannot start or fails fails the node (continueOnFail keeps going); canceling the execution cancels the task', async () => {
    const wf = await create('Unknown agent', [
      start,
      { name: 'Write', type: 'engine.agent', parameters: { agentId: 'nobody', taskType: 'write-guide', context: {} } },
    ]);
    const failed = await run(wf.body.data.workflowId, {});
    assert.deepEqual([failed.status, failed.error.node, failed.error.details.code], ['error', 'Write', 'AGENT_NOT_FOUND']);
    const soft = await create('Soft', [
      start,
      {
        name: 'Write',
        type: 'engine.agent',
        parameters: { agentId: 'docs-author', taskType: 'write-guide', context: { audience: 'ops' } },
        continueOnFail: true,
      },
    ]);
    const kept = await run<{ error: string }>(soft.body.data.workflowId, {});
    assert.equal(kept.status, 'success');
    assert.match(kept.result.items[0].error, /could not start.*missing topic/);

    fake.delay(20_000);
    try {
      const slow = await create('Slow agent', [
        start,
        { name: 'Write', type: 'engine.agent', parameters: { agentId: 'docs-author', taskType: 'write-guide', context: { topic: 'x', audience: 'y' } } },
      ]);
      const started = (await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${slow.body.data.workflowId}/execute`, { body: { data: {} } })).body.data;
      const running = async () =>
        (await p.rest<V1<{ tasks: { taskId: string }[] }>>('GET', '/v1/control-plane/agents/tasks?status=running&agentId=docs-author')).body.data.tasks;
      let tasks: { taskId: string }[] = [];
      for (let i = 0; i < 100 && !tasks.length; i++) {
        await sleep(100);
        tasks = await running();
      }
      assert.equal(tasks.length, 1, 'the task runs');
      assert.equal((await p.rest('POST', `/v1/engine/executions/${started.executionId}/cancel`)).status, 200);
      let status = '';
      for (let i = 0; i < 50 && status !== 'cancelled'; i++) {
        await sleep(100);
        status = (await p.rest<V1<{ status: string }>>('GET', `/v1/control-plane/agents/tasks/${tasks[0].taskId}`)).body.data.status;
      }
      assert.equal(status, 'cancelled');
    } finally {
      fake.delay(0);
    }
  });

  test('saving agent or prompt nodes needs agent:execute or prompt:test; parameters are checked', async () => {
    const engineKey = (await p.createKey({ service: 'engine', permissions: ['workflow:write'] })).key;
    const agentNode = { name: 'Write', type: 'engine.agent', parameters: { agentId: 'docs-author', taskType: 'write-guide', context: {} } };
    const denied = await create('No right', [start, agentNode], engineKey);
    assert.equal(denied.status, 403, JSON.stringify(denied.body));
    assert.deepEqual([denied.body.error.code, denied.body.error.details.required], ['insufficient_permissions', 'agent:execute']);
    const promptDenied = await create('No right', [start, { name: 'P', type: 'engine.prompt', parameters: { promptId: 'greet-customer' } }], engineKey);
    assert.equal(promptDenied.body.error.details.required, 'prompt:test');
    const allowed = (await p.createKey({ service: 'engine', permissions: ['workflow:write', 'agent:execute'] })).key;
    const saved = await create('With right', [start, agentNode], allowed);
    assert.equal(saved.status, 201);
    // Rewiring, renaming or changing the settings of a workflow that holds an agent node needs agent:execute too.
    const id = saved.body.data.workflowId;
    for (const change of [{ connections: {} }, { name: 'Renamed' }, { settings: { timezone: 'UTC' } }]) {
      const res = await p.rest<V1<never>>('PUT', `/v1/engine/workflows/${id}`, { key: engineKey, body: change });
      assert.equal(res.status, 403, `${JSON.stringify(change)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.details.required, 'agent:execute');
    }
    assert.equal((await p.rest<V1<Workflow>>('GET', `/v1/engine/workflows/${id}`)).body.data.name, 'With right', 'nothing changed');
    assert.equal((await p.rest('PUT', `/v1/engine/workflows/${id}`, { key: allowed, body: { name: 'Renamed' } })).status, 200);
    const bad = await create('Bad', [start, { name: 'W', type: 'engine.agent', parameters: { agentId: 'a', taskType: 'b', context: 'text', timeout: 2 } }]);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'WORKFLOW_INVALID');
    const missing = await create('Missing', [start, { name: 'W', type: 'engine.agent', parameters: { agentId: 'a' } }]);
    assert.deepEqual(missing.body.error.details.missingParameters, ['taskType']);
  });
});
