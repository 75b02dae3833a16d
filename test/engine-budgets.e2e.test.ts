import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runLoadClient } from './support/load-client';
import type { Gql, V1 } from './support/answers';
import type { Execution } from './support/engine-answers';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { importN8n } from './support/n8n-export';

/**
 * Every execution has budgets (ENGINE_EXECUTION_MAX_*: items per node output, run data kept,
 * runs of one node, running time), which a user can read; crossing one fails the execution with
 * the budget's name, its limit and the value that crossed it. The attack — a 3 MB request
 * split into 1,000,000 items looped over one at a time, three at once — is refused at the split,
 * before the items exist, while /health keeps answering.
 */

const to = (node: string, index = 0) => ({ node, type: 'main', index });
const n8n = (name: string, type: string, typeVersion: number, parameters: Record<string, unknown>, position: [number, number]) => ({
  id: name,
  name,
  type: `n8n-nodes-base.${type}`,
  typeVersion,
  position,
  parameters,
});

/** Start -> Split Out (`list`) -> Loop Over Items (batch 1) -loop-> Body -> back; done -> Done: the workflow. */
const ATTACK = {
  name: 'Split and loop',
  settings: { executionOrder: 'v1' },
  nodes: [
    n8n('Start', 'manualTrigger', 1, {}, [0, 0]),
    n8n('Split', 'splitOut', 1, { fieldToSplitOut: 'list', options: {} }, [200, 0]),
    n8n('Loop', 'splitInBatches', 3, { options: {} }, [400, 0]),
    n8n('Body', 'noOp', 1, {}, [600, 100]),
    n8n('Done', 'noOp', 1, {}, [600, -100]),
  ],
  connections: {
    Start: { main: [[to('Split')]] },
    Split: { main: [[to('Loop')]] },
    Loop: { main: [[to('Done')], [to('Body')]] },
    Body: { main: [[to('Loop')]] },
  },
};

const importWorkflow = importN8n;

async function runSync(p: TestPlatform, workflowId: string, data: Record<string, unknown>) {
  const res = await p.rest<V1<Execution>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { body: { mode: 'sync', data, timeout: 120 } });
  assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 500));
  return res.body.data;
}

function assertBudget(execution: Execution, budget: string, limit: number, node?: string) {
  assert.equal(execution.status, 'error', JSON.stringify(execution).slice(0, 500));
  assert.equal(execution.error.code, 'EXECUTION_FAILED');
  assert.equal(execution.error.details.budget, budget, JSON.stringify(execution.error));
  assert.equal(execution.error.details.limit, limit);
  assert.ok((execution.error.details.value as number) >= limit, JSON.stringify(execution.error.details));
  assert.ok(execution.error.message.includes(budget), execution.error.message);
  if (node) assert.equal(execution.error.node, node);
}

describe('with the default budgets', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform();
  });
  afterAll(async () => {
    await p?.stop();
  });

  test('the budgets can be read, with the variable that sets each', async () => {
    const res = await p.graphql<Gql<{ executionBudgets: { name: string; variable: string; limit: number; unit: string }[] }>>(
      '{ executionBudgets { name variable limit unit description } }',
    );
    assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
    assert.deepEqual(
      res.body.data.executionBudgets.map((b) => [b.name, b.variable, b.limit, b.unit]),
      [
        ['maxItemsPerOutput', 'ENGINE_EXECUTION_MAX_ITEMS_PER_OUTPUT', 100_000, 'items'],
        ['maxRunDataBytes', 'ENGINE_EXECUTION_MAX_RUN_DATA_BYTES', 64 * 1024 * 1024, 'bytes'],
        ['maxLoopTurns', 'ENGINE_EXECUTION_MAX_LOOP_TURNS', 100_000, 'runs of one node'],
        ['maxDurationMs', 'ENGINE_EXECUTION_MAX_DURATION_MS', 3_600_000, 'ms'],
        ['maxBinaryBytes', 'BINARY_DATA_MAX_BYTES', 16 * 1024 * 1024, 'bytes'],
        ['maxExecutionBinaryBytes', 'BINARY_DATA_MAX_EXECUTION_BYTES', 64 * 1024 * 1024, 'bytes'],
      ],
    );
  });

  test('1,000,000 items split out of a 3 MB request, three at once, three times: refused at the split; /health keeps answering throughout', async () => {
    const id = await importWorkflow(p, ATTACK);
    const body = JSON.stringify({ mode: 'sync', timeout: 120, data: { list: new Array(1_000_000).fill(12) } });
    assert.ok(body.length >= 3_000_000, `a 3 MB request (${body.length} bytes)`);
    const bodyFile = path.join(mkdtempSync(path.join(tmpdir(), 'budgets-')), 'body.json');
    writeFileSync(bodyFile, body);
    // Each /health answer's status and when it arrived.
    const health: { status: number; at: number }[] = [];
    let attacking = true;
    const poll = (async () => {
      while (attacking) {
        const res = await fetch(`${p.url}/health`);
        await res.arrayBuffer();
        health.push({ status: res.status, at: performance.now() });
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const attackStarted = performance.now();
    let attackEnded = Infinity;
    // The attackers are a process of their own: this one runs the platform and the /health poller.
    const { answers } = await runLoadClient({
      url: p.url,
      key: p.adminKey,
      path: `/v1/engine/workflows/${id}/execute`,
      bodyFile,
      rounds: 3,
      concurrency: 3,
    }).finally(async () => {
      attackEnded = performance.now();
      attacking = false;
      await poll;
    });
    const executions = answers.map((a) => {
      assert.equal(a.status, 200, JSON.stringify(a.body).slice(0, 500));
      return (a.body as V1<Execution>).data;
    });
    for (const e of executions) assertBudget(e, 'ENGINE_EXECUTION_MAX_ITEMS_PER_OUTPUT', 100_000, 'Split');
    // Refused as the list was found, before a single item of it was made.
    assert.equal(executions[0].error.details.value, 1_000_000);
    assert.equal(executions[0].error.nodeType, 'n8n-nodes-base.splitOut');
    const stored = (await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${executions[0].executionId}?includeData=true`)).body.data;
    assert.deepEqual(
      stored.nodeData.map((n) => n.nodeName),
      ['Start'],
      'nothing after the split ran or was stored',
    );
    // Large bodies are read one step per turn of the event loop, so /health is served between
    // them all along (how fast is a machine's matter: latency belongs to the bench, not here).
    const during = health.filter((h) => h.at > attackStarted && h.at < attackEnded);
    assert.ok(during.length >= 20, `/health answered ${during.length} times during the ${((attackEnded - attackStarted) / 1000).toFixed(1)} s attack`);
    assert.deepEqual([...new Set(health.map((h) => h.status))], [200]);
  }, 300_000);
});

describe('with small budgets', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({
      ENGINE_EXECUTION_MAX_ITEMS_PER_OUTPUT: '1000',
      ENGINE_EXECUTION_MAX_LOOP_TURNS: '50',
      ENGINE_EXECUTION_MAX_RUN_DATA_BYTES: String(256 * 1024),
      ENGINE_EXECUTION_MAX_DURATION_MS: '2000',
    });
  });
  afterAll(async () => {
    await p?.stop();
  });

  test('items per output: a split, a code node, and every combination of a merge each stop at the limit', async () => {
    const split = await importWorkflow(p, ATTACK);
    assertBudget(await runSync(p, split, { list: new Array(1001).fill(1) }), 'ENGINE_EXECUTION_MAX_ITEMS_PER_OUTPUT', 1000, 'Split');
    const code = await importWorkflow(p, {
      name: 'Many',
      nodes: [
        { name: 'Start', type: 'engine.manualTrigger' },
        { name: 'Make', type: 'engine.code', parameters: { code: 'return Array.from({ length: 5000 }, (_, i) => ({ i }));' }, continueOnFail: true },
      ],
      connections: { Start: { main: [[to('Make')]] } },
    });
    const made = await runSync(p, code, {});
    // Not caught by continueOnFail: a budget stops the execution.
    assertBudget(made, 'ENGINE_EXECUTION_MAX_ITEMS_PER_OUTPUT', 1000, 'Make');
    assert.equal(made.error.details.value, 5000);
    const merge = await importWorkflow(p, {
      name: 'All pairs',
      settings: { executionOrder: 'v1' },
      nodes: [
        n8n('Start', 'manualTrigger', 1, {}, [0, 0]),
        n8n('Left', 'splitOut', 1, { fieldToSplitOut: 'a' }, [200, -100]),
        n8n('Right', 'splitOut', 1, { fieldToSplitOut: 'b' }, [200, 100]),
        n8n('Pairs', 'merge', 3, { mode: 'combine', combineBy: 'combineAll', options: {} }, [400, 0]),
      ],
      connections: { Start: { main: [[to('Left'), to('Right')]] }, Left: { main: [[to('Pairs')]] }, Right: { main: [[to('Pairs', 1)]] } },
    });
    const pairs = await runSync(p, merge, { a: new Array(100).fill({ x: 1 }), b: new Array(100).fill({ y: 2 }) });
    assertBudget(pairs, 'ENGINE_EXECUTION_MAX_ITEMS_PER_OUTPUT', 1000, 'Pairs');
    assert.equal(pairs.error.details.value, 10_000);
  });

  test('loop turns: a loop over more items than turns stops at the node that would run once more', async () => {
    const id = await importWorkflow(p, ATTACK);
    const e = await runSync(p, id, { list: new Array(200).fill(1) });
    assertBudget(e, 'ENGINE_EXECUTION_MAX_LOOP_TURNS', 50);
    assert.ok(['Loop', 'Body'].includes(e.error.node ?? ''));
    assert.equal(e.error.details.reason, 'loop_limit');
    assert.equal((await runSync(p, id, { list: new Array(40).fill(1) })).status, 'success', 'a loop within its turns ends');
  });

  test('run data: the output that would make the execution keep more than its budget fails it, and is not stored', async () => {
    const id = await importWorkflow(p, {
      name: 'Big rows',
      nodes: [
        { name: 'Start', type: 'engine.manualTrigger' },
        { name: 'Small', type: 'engine.code', parameters: { code: 'return [{ text: "x".repeat(100000) }];' } },
        { name: 'Large', type: 'engine.code', parameters: { code: 'return [{ text: "y".repeat(200000) }];' } },
      ],
      connections: { Start: { main: [[to('Small')]] }, Small: { main: [[to('Large')]] } },
    });
    const e = await runSync(p, id, {});
    assertBudget(e, 'ENGINE_EXECUTION_MAX_RUN_DATA_BYTES', 256 * 1024, 'Large');
    const stored = (await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${e.executionId}?includeData=true`)).body.data;
    assert.deepEqual(
      stored.nodeData.map((n) => n.nodeName),
      ['Start', 'Small'],
    );
  });

  test('running time: the platform’s limit, or the workflow’s executionTimeout when lower, each named', async () => {
    const busy = (settings: Record<string, unknown>) =>
      importWorkflow(p, {
        name: 'Busy',
        settings,
        nodes: [
          { name: 'Start', type: 'engine.manualTrigger' },
          { name: 'Sleep', type: 'engine.code', parameters: { code: 'const end = Date.now() + 5000; while (Date.now() < end) {} return items;' } },
        ],
        connections: { Start: { main: [[to('Sleep')]] } },
      });
    const platform = await runSync(p, await busy({ executionTimeout: 3600 }), {});
    assertBudget(platform, 'ENGINE_EXECUTION_MAX_DURATION_MS', 2000);
    assert.equal(platform.error.details.reason, 'timeout');
    const own = await runSync(p, await busy({ executionTimeout: 1 }), {});
    assertBudget(own, 'settings.executionTimeout', 1);
  });
});
