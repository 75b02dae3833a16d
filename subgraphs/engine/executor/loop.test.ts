import assert from 'node:assert/strict';
import { AppError } from '../../../kernel/errors';
import { guardedFetch } from '../../../kernel/outbound';
import { compile, validateDefinition } from './compile';
import { UNLIMITED } from '../nodes';
import { chooseStart, WorkflowExecutor } from './loop';
import type { ExecutionErrorInfo, ExecutorHooks, LogEntry, NodeRun, RunOutcome } from './types';
import { ExpressionEngine, type Item } from '../expressions';
import { NODE_TYPES } from './catalog';
import type { NodeDefinition, NodeServices, WebhookReply } from '../nodes';
import { CODE_LIMITS, Sandbox } from '../sandbox';

function errorOf(outcome: RunOutcome): ExecutionErrorInfo {
  assert.ok(outcome.status === 'error', `the run ended ${outcome.status}`);
  return outcome.error;
}

function abortReasonOf(outcome: RunOutcome): { code?: unknown } {
  assert.ok(outcome.status === 'aborted', `the run ended ${outcome.status}`);
  return outcome.reason as { code?: unknown };
}

const expressionSandbox = new Sandbox({ memoryMb: 32, timeoutMs: 1000, poolSize: 2 });
const codeSandbox = new Sandbox({ ...CODE_LIMITS, poolSize: 2 });
const executor = new WorkflowExecutor(new ExpressionEngine(expressionSandbox));
afterAll(() => {
  expressionSandbox.dispose();
  codeSandbox.dispose();
});

type N = { name: string; type: string; parameters?: Record<string, unknown>; [k: string]: unknown };
/** nodes + [from, to, output?, input?] edges -> a validated definition */
function workflow(nodes: N[], edges: [string, string, number?, number?][], settings = {}) {
  const connections: Record<string, { main: { node: string; type: string; index: number }[][] }> = {};
  for (const [from, to, output = 0, input = 0] of edges) {
    const main = (connections[from] ??= { main: [] }).main;
    while (main.length <= output) main.push([]);
    main[output]!.push({ node: to, type: 'main', index: input });
  }
  return validateDefinition({ nodes, connections, settings });
}

interface Run {
  outcome: RunOutcome;
  runs: NodeRun[];
  logs: LogEntry[];
  replies: WebhookReply[];
}

async function run(
  def: ReturnType<typeof workflow>,
  input: Record<string, unknown>[] = [{}],
  opts: { services?: Partial<NodeServices>; done?: Map<string, Item[][]>; signal?: AbortSignal; mode?: string; maxNodeRuns?: number } = {},
): Promise<Run> {
  const runs: NodeRun[] = [];
  const logs: LogEntry[] = [];
  const replies: WebhookReply[] = [];
  const hooks: ExecutorHooks = { afterNode: (r) => void runs.push(r), log: (l) => void logs.push(l), reply: (r) => void replies.push(r) };
  const compiled = compile(def);
  const outcome = await executor.run({
    compiled,
    execution: { id: 'e1', mode: opts.mode ?? 'manual', resumeUrl: '/webhook/resume/e1/x' },
    workflow: { id: 'w1', name: 'Test', active: true },
    input: input.map((json) => ({ json })),
    startNode: chooseStart(compiled, opts.mode ?? 'manual'),
    done: opts.done,
    budgets: opts.maxNodeRuns ? { ...UNLIMITED, maxLoopTurns: opts.maxNodeRuns } : undefined,
    signal: opts.signal ?? new AbortController().signal,
    services: {
      codeSandbox,
      fetch: async () => {
        throw new Error('no network in this test');
      },
      runWorkflow: async () => {
        throw new Error('no sub-workflows in this test');
      },
      ...opts.services,
    },
    hooks,
  });
  return { outcome, runs, logs, replies };
}

const items = (r: Run) => (r.outcome.status === 'success' ? r.outcome.result.items : assert.fail(`expected success, got ${JSON.stringify(r.outcome)}`));
const ran = (r: Run) => r.runs.map((x) => x.node);
const output = (r: Run, node: string) => r.runs.find((x) => x.node === node)?.output?.map((o) => o.map((i) => i.json));
const start: N = { name: 'Start', type: 'engine.manualTrigger' };

describe('set', () => {
  test('merges values (expressions, dotted names) into each item; keepOnlySet drops the rest', async () => {
    const r = await run(
      workflow(
        [
          start,
          { name: 'Set', type: 'engine.set', parameters: { values: { greeting: 'Hi {{ $json.name }}', 'address.city': 'Oslo', n: '{{ $json.n + 1 }}' } } },
          { name: 'Only', type: 'engine.set', parameters: { values: { kept: '{{ $json.greeting }}' }, keepOnlySet: true } },
        ],
        [
          ['Start', 'Set'],
          ['Set', 'Only'],
        ],
      ),
      [
        { name: 'Ann', n: 1, address: { zip: '0150' } },
        { name: 'Bob', n: 2 },
      ],
    );
    assert.deepEqual(output(r, 'Set'), [
      [
        { name: 'Ann', n: 2, address: { zip: '0150', city: 'Oslo' }, greeting: 'Hi Ann' },
        { name: 'Bob', n: 3, address: { city: 'Oslo' }, greeting: 'Hi Bob' },
      ],
    ]);
    assert.deepEqual(items(r), [{ kept: 'Hi Ann' }, { kept: 'Hi Bob' }]);
    assert.deepEqual(
      output(r, 'Start'),
      [
        [
          { name: 'Ann', n: 1, address: { zip: '0150' } },
          { name: 'Bob', n: 2 },
        ],
      ],
      'inputs are not modified',
    );
  });
});

describe('routing', () => {
  test('if: true items by output 0, the others by output 1; an output without items does not run its branch', async () => {
    const def = workflow(
      [
        start,
        { name: 'If', type: 'engine.if', parameters: { condition: '{{ $json.amount > 100 }}' } },
        { name: 'Big', type: 'engine.set', parameters: { values: { big: true } } },
        { name: 'Small', type: 'engine.set', parameters: { values: { big: false } } },
        { name: 'After small', type: 'engine.noOp' },
      ],
      [
        ['Start', 'If'],
        ['If', 'Big', 0],
        ['If', 'Small', 1],
        ['Small', 'After small'],
      ],
    );
    const both = await run(def, [{ amount: 150 }, { amount: 5 }]);
    assert.deepEqual(output(both, 'If'), [[{ amount: 150 }], [{ amount: 5 }]]);
    assert.deepEqual(ran(both), ['Start', 'If', 'Big', 'Small', 'After small']);
    const onlyBig = await run(def, [{ amount: 500 }]);
    assert.deepEqual(ran(onlyBig), ['Start', 'If', 'Big'], 'the false branch did not run');
    assert.equal(onlyBig.outcome.status, 'success');
  });

  test('switch: first matching rule wins, rule outputs, fallback "extra", unmatched dropped without a fallback', async () => {
    const def = (fallbackOutput?: unknown) =>
      workflow(
        [
          start,
          {
            name: 'Switch',
            type: 'engine.switch',
            parameters: {
              rules: [{ condition: '$json.n < 10' }, { condition: '$json.n < 100' }, { condition: '{{ $json.n < 1000 }}', output: 0 }],
              ...(fallbackOutput !== undefined ? { fallbackOutput } : {}),
            },
          },
        ],
        [['Start', 'Switch']],
      );
    const input = [{ n: 5 }, { n: 50 }, { n: 500 }, { n: 5000 }];
    assert.deepEqual(output(await run(def('extra'), input), 'Switch'), [[{ n: 5 }, { n: 500 }], [{ n: 50 }], [], [{ n: 5000 }]]);
    assert.deepEqual(output(await run(def(), input), 'Switch'), [[{ n: 5 }, { n: 500 }], [{ n: 50 }], []]);
    assert.deepEqual(output(await run(def(1), input), 'Switch'), [[{ n: 5 }, { n: 500 }], [{ n: 50 }, { n: 5000 }], []]);
  });

  test('filter keeps the items whose condition holds', async () => {
    const r = await run(workflow([start, { name: 'Filter', type: 'engine.filter', parameters: { condition: '$json.ok' } }], [['Start', 'Filter']]), [
      { ok: true, i: 1 },
      { ok: false, i: 2 },
      { ok: 'yes', i: 3 },
    ]);
    assert.deepEqual(items(r), [
      { ok: true, i: 1 },
      { ok: 'yes', i: 3 },
    ]);
  });
});

describe('merge waits for its inputs', () => {
  const branches = (mode: Record<string, unknown>) =>
    workflow(
      [
        start,
        { name: 'A', type: 'engine.set', parameters: { values: { a: '{{ $json.i }}' }, keepOnlySet: true } },
        { name: 'B1', type: 'engine.noOp' },
        { name: 'B', type: 'engine.set', parameters: { values: { b: '{{ $json.i * 10 }}' }, keepOnlySet: true } },
        { name: 'Merge', type: 'engine.merge', parameters: mode },
      ],
      // B's branch is longer than A's: the merge still runs once, after both.
      [
        ['Start', 'A'],
        ['Start', 'B1'],
        ['B1', 'B'],
        ['A', 'Merge', 0, 0],
        ['B', 'Merge', 0, 1],
      ],
    );
  const input = [{ i: 1 }, { i: 2 }];

  test('append', async () => {
    const r = await run(branches({ mode: 'append' }), input);
    assert.deepEqual(items(r), [{ a: 1 }, { a: 2 }, { b: 10 }, { b: 20 }]);
    assert.equal(ran(r).filter((n) => n === 'Merge').length, 1);
    assert.ok(ran(r).indexOf('Merge') > ran(r).indexOf('B'));
  });

  test('combineByPosition', async () => {
    assert.deepEqual(items(await run(branches({ mode: 'combineByPosition' }), input)), [
      { a: 1, b: 10 },
      { a: 2, b: 20 },
    ]);
  });

  test('chooseBranch', async () => {
    assert.deepEqual(items(await run(branches({ mode: 'chooseBranch', output: 'input2' }), input)), [{ b: 10 }, { b: 20 }]);
  });

  test('an input whose branch did not run is empty; a merge none of whose inputs got items is skipped', async () => {
    const def = workflow(
      [
        start,
        { name: 'If', type: 'engine.if', parameters: { condition: '$json.go' } },
        { name: 'Merge', type: 'engine.merge' },
        { name: 'After', type: 'engine.noOp' },
      ],
      [
        ['Start', 'If'],
        ['If', 'Merge', 0, 0],
        ['If', 'Merge', 1, 1],
        ['Merge', 'After'],
      ],
    );
    assert.deepEqual(items(await run(def, [{ go: true }])), [{ go: true }]);
    const filtered = workflow(
      [
        start,
        { name: 'F', type: 'engine.filter', parameters: { condition: 'false' } },
        { name: 'G', type: 'engine.filter', parameters: { condition: 'false' } },
        { name: 'Merge', type: 'engine.merge' },
      ],
      [
        ['Start', 'F'],
        ['Start', 'G'],
        ['F', 'Merge', 0, 0],
        ['G', 'Merge', 0, 1],
      ],
    );
    const r = await run(filtered);
    assert.deepEqual(ran(r), ['Start', 'F', 'G']);
  });
});

describe('code', () => {
  test('gets items, returns plain objects or items; console lines go to the logs', async () => {
    const r = await run(
      workflow(
        [
          start,
          {
            name: 'Code',
            type: 'engine.code',
            parameters: {
              code: 'console.log("got", items.length, { first: items[0].json.n });\nreturn items.map((i) => ({ doubled: i.json.n * 2, viaInput: $input.first().json.n }));',
            },
          },
        ],
        [['Start', 'Code']],
      ),
      [{ n: 2 }, { n: 3 }],
    );
    assert.deepEqual(items(r), [
      { doubled: 4, viaInput: 2 },
      { doubled: 6, viaInput: 2 },
    ]);
    assert.ok(r.logs.some((l) => l.node === 'Code' && l.message === 'console: got 2 {"first":2}'));
  });

  test('runOnceForEachItem, async code, and $node', async () => {
    const r = await run(
      workflow(
        [
          start,
          { name: 'Tag', type: 'engine.set', parameters: { values: { tag: 'x' } } },
          {
            name: 'Each',
            type: 'engine.code',
            parameters: { mode: 'runOnceForEachItem', code: 'await null;\nreturn { n: $json.n, idx: $itemIndex, tag: $node["Tag"].json.tag };' },
          },
        ],
        [
          ['Start', 'Tag'],
          ['Tag', 'Each'],
        ],
      ),
      [{ n: 1 }, { n: 2 }],
    );
    assert.deepEqual(items(r), [
      { n: 1, idx: 0, tag: 'x' },
      { n: 2, idx: 1, tag: 'x' },
    ]);
  });

  test('a throwing script, an endless one and a memory bomb fail the node with a clear error', async () => {
    const fail = async (code: string, extra: Record<string, unknown> = {}) => {
      const r = await run(workflow([start, { name: 'Code', type: 'engine.code', parameters: { code }, ...extra }], [['Start', 'Code']]));
      assert.equal(r.outcome.status, 'error');
      return (r.outcome as Extract<RunOutcome, { status: 'error' }>).error;
    };
    const thrown = await fail('throw new Error("bad input")');
    assert.equal(thrown.code, 'NODE_EXECUTION_FAILED');
    assert.equal(thrown.node, 'Code');
    assert.equal(thrown.nodeType, 'engine.code');
    assert.match(thrown.message, /bad input/);
    const loop = await fail('while (true) {}', { timeout: 0.3 });
    assert.match(loop.message, /time limit/);
    assert.equal(loop.details.reason, 'timeout');
    const bomb = await fail('const a = []; for (;;) a.push(new Array(1e5).fill(1));');
    assert.match(bomb.message, /memory limit of 64 MB/);
    const escape = await fail('return [{ pid: process.pid }]');
    assert.match(escape.message, /process is not defined/);
    const shape = await fail('return 42');
    assert.match(shape.message, /must be objects or \{json\} items/);
  });
});

describe('node settings', () => {
  test('retryOnFail runs the node again (tries recorded); continueOnFail passes an error item on', async () => {
    let calls = 0;
    const fetch: NodeServices['fetch'] = async () => {
      calls++;
      if (calls < 3) throw new AppError('upstream_error', 'connection refused', { reason: 'ECONNREFUSED' });
      return { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"ok":true}'), truncated: false };
    };
    const r = await run(
      workflow(
        [
          start,
          { name: 'HTTP', type: 'engine.httpRequest', parameters: { url: 'https://api.example.com/x' }, retryOnFail: true, maxTries: 3, waitBetweenTries: 10 },
        ],
        [['Start', 'HTTP']],
      ),
      [{}],
      { services: { fetch } },
    );
    assert.deepEqual(items(r), [{ ok: true }]);
    assert.equal(r.runs.find((x) => x.node === 'HTTP')!.tries, 3);
    assert.equal(r.logs.filter((l) => /Attempt \d of 3 failed/.test(l.message)).length, 2);

    const cont = await run(
      workflow(
        [
          start,
          { name: 'Code', type: 'engine.code', parameters: { code: 'throw new Error("nope")' }, continueOnFail: true },
          { name: 'Next', type: 'engine.set', parameters: { values: { after: true } } },
        ],
        [
          ['Start', 'Code'],
          ['Code', 'Next'],
        ],
      ),
    );
    assert.deepEqual(items(cont), [{ error: 'Code failed: Error: nope', after: true }]);
    assert.equal(cont.runs.find((x) => x.node === 'Code')!.status, 'error');
  });

  test('a node past its timeout fails; a disabled node passes its items on', async () => {
    const hang: NodeServices['fetch'] = () => new Promise(() => undefined);
    const r = await run(
      workflow([start, { name: 'HTTP', type: 'engine.httpRequest', parameters: { url: 'https://slow.example.com' }, timeout: 0.1 }], [['Start', 'HTTP']]),
      [{}],
      { services: { fetch: hang } },
    );
    assert.equal(r.outcome.status, 'error');
    assert.match(errorOf(r.outcome).message, /time limit of 0.1 s/);
    const d = await run(workflow([start, { name: 'Off', type: 'engine.set', parameters: { values: { x: 1 } }, disabled: true }], [['Start', 'Off']]), [
      { y: 2 },
    ]);
    assert.deepEqual(items(d), [{ y: 2 }]);
  });
});

describe('execution control', () => {
  test('wait suspends with its items; with the outputs so far it continues where it stopped', async () => {
    const def = workflow(
      [
        start,
        { name: 'Before', type: 'engine.set', parameters: { values: { step: 1 } } },
        { name: 'Wait', type: 'engine.wait', parameters: { seconds: 60 } },
        { name: 'After', type: 'engine.set', parameters: { values: { step: 2, before: '{{ $node["Before"].json.step }}' } } },
      ],
      [
        ['Start', 'Before'],
        ['Before', 'Wait'],
        ['Wait', 'After'],
      ],
    );
    const first = await run(def, [{ id: 7 }]);
    assert.equal(first.outcome.status, 'waiting');
    const waiting = first.outcome as Extract<RunOutcome, { status: 'waiting' }>;
    assert.equal(waiting.node, 'Wait');
    assert.deepEqual(
      waiting.items.map((i) => i.json),
      [{ id: 7, step: 1 }],
    );
    assert.ok(waiting.until!.getTime() > Date.now() + 50_000);
    assert.deepEqual(ran(first), ['Start', 'Before']);

    const done = new Map<string, Item[][]>(first.runs.map((r) => [r.node, r.output!]));
    done.set('Wait', [waiting.items]);
    const second = await run(def, [{ id: 7 }], { done });
    assert.deepEqual(ran(second), ['After'], 'nothing before the wait runs again');
    assert.deepEqual(items(second), [{ id: 7, step: 2, before: 1 }]);
  });

  test('respondToWebhook hands its answer over at once; the execution goes on', async () => {
    const r = await run(
      workflow(
        [
          { name: 'Hook', type: 'engine.webhook' },
          {
            name: 'Reply',
            type: 'engine.respondToWebhook',
            parameters: { statusCode: 201, headers: { 'X-Order': '{{ $json.body.id }}' }, body: { accepted: '{{ $json.body.id }}' } },
          },
          { name: 'Later', type: 'engine.noOp' },
        ],
        [
          ['Hook', 'Reply'],
          ['Reply', 'Later'],
        ],
      ),
      [{ body: { id: 'o-1' } }],
      { mode: 'webhook' },
    );
    assert.deepEqual(r.replies, [{ status: 201, headers: { 'x-order': 'o-1' }, body: { accepted: 'o-1' } }]);
    assert.deepEqual(ran(r), ['Hook', 'Reply', 'Later']);
  });

  test('executeWorkflow passes its items to the other workflow and its result on', async () => {
    const seen: unknown[] = [];
    const r = await run(
      workflow([start, { name: 'Call', type: 'engine.executeWorkflow', parameters: { workflowId: 'child-{{ $json.v }}' } }], [['Start', 'Call']]),
      [{ v: 1 }],
      {
        services: {
          runWorkflow: async (id, list) => {
            seen.push(
              id,
              list.map((i) => i.json),
            );
            return [{ json: { fromChild: true } }];
          },
        },
      },
    );
    assert.deepEqual(seen, ['child-1', [{ v: 1 }]]);
    assert.deepEqual(items(r), [{ fromChild: true }]);
  });

  test('an abort stops the running node and the execution', async () => {
    const controller = new AbortController();
    let aborted = false;
    const fetch: NodeServices['fetch'] = (_url, init) =>
      new Promise((_, reject) => init.signal!.addEventListener('abort', () => ((aborted = true), reject(new Error('aborted')))));
    setTimeout(() => controller.abort(Object.assign(new Error('canceled'), { code: 'canceled' })), 50);
    const r = await run(
      workflow(
        [start, { name: 'HTTP', type: 'engine.httpRequest', parameters: { url: 'https://x.example.com' } }, { name: 'Never', type: 'engine.noOp' }],
        [
          ['Start', 'HTTP'],
          ['HTTP', 'Never'],
        ],
      ),
      [{}],
      { services: { fetch }, signal: controller.signal },
    );
    assert.equal(r.outcome.status, 'aborted');
    assert.equal(abortReasonOf(r.outcome).code, 'canceled');
    assert.ok(aborted, 'the HTTP call got the signal');
    assert.deepEqual(ran(r), ['Start']);
  });

  test('a workflow without a trigger gives the items to every node without inputs; other triggers are skipped', async () => {
    const noTrigger = workflow(
      [
        { name: 'A', type: 'engine.noOp' },
        { name: 'B', type: 'engine.set', parameters: { values: { b: 1 } } },
      ],
      [],
    );
    assert.deepEqual(ran(await run(noTrigger, [{ x: 1 }])), ['A', 'B']);
    const twoTriggers = workflow(
      [{ name: 'Hook', type: 'engine.webhook' }, start, { name: 'S', type: 'engine.noOp' }],
      [
        ['Hook', 'S'],
        ['Start', 'S'],
      ],
    );
    assert.deepEqual(ran(await run(twoTriggers, [{ x: 1 }], { mode: 'webhook' })), ['Hook', 'S']);
    assert.deepEqual(ran(await run(twoTriggers, [{ x: 1 }], { mode: 'manual' })), ['Start', 'S']);
  });

  test('httpRequest goes through the SSRF guard: loopback and private addresses are refused', async () => {
    const policy = { allowHttp: true, allowPrivateNetworks: false };
    const r = await run(
      workflow(
        [
          start,
          { name: 'HTTP', type: 'engine.httpRequest', parameters: { url: 'http://127.0.0.1:9/admin' } },
          { name: 'Meta', type: 'engine.httpRequest', parameters: { url: 'http://169.254.169.254/latest/meta-data' } },
        ],
        [['Start', 'HTTP']],
      ),
      [{}],
      { services: { fetch: (url, init) => guardedFetch(url, init, policy) } },
    );
    assert.equal(r.outcome.status, 'error');
    const error = errorOf(r.outcome);
    assert.equal(error.node, 'HTTP');
    assert.equal(error.details.code, 'WEBHOOK_INVALID');
    assert.equal(error.details.reason, 'private_address');
  });
});

describe('validation before anything is stored', () => {
  const invalid = (nodes: N[], connections: Record<string, unknown>, details: Record<string, unknown>, code = 'WORKFLOW_INVALID') =>
    assert.throws(
      () => validateDefinition({ nodes, connections }),
      (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, code, err.message);
        for (const [k, v] of Object.entries(details)) assert.deepEqual(err.details[k], v, `${k} in ${JSON.stringify(err.details)}`);
        return true;
      },
    );
  const main = (to: string, output = 0, index = 0) => ({ main: [...Array(output).fill([]), [{ node: to, type: 'main', index }]] });

  test('unknown node type, duplicate names', () => {
    invalid([start, { name: 'X', type: 'engine.teleport' }], {}, { reason: 'unknown_node_type', node: 'X', type: 'engine.teleport' });
    invalid([start, { name: 'X', type: 'n8n-nodes-base.slack' }], {}, { reason: 'unknown_node_type', node: 'X' });
    invalid([start, { name: 'Start', type: 'engine.noOp' }], {}, { reason: 'duplicate_node_name', node: 'Start' });
  });

  test('connections to missing nodes, outputs or inputs; loops', () => {
    invalid([start], { Start: main('Ghost') }, { reason: 'unknown_connection_target', node: 'Start', target: 'Ghost' });
    invalid([start], { Ghost: main('Start') }, { reason: 'unknown_connection_source', node: 'Ghost' });
    invalid([start, { name: 'N', type: 'engine.noOp' }], { Start: main('N', 1) }, { reason: 'invalid_output', node: 'Start', output: 1 });
    invalid([start, { name: 'N', type: 'engine.noOp' }], { Start: main('N', 0, 1) }, { reason: 'invalid_input', target: 'N', input: 1 });
    invalid([start, { name: 'T', type: 'engine.manualTrigger' }], { Start: main('T') }, { reason: 'invalid_input', target: 'T' });
    invalid(
      [start, { name: 'A', type: 'engine.noOp' }, { name: 'B', type: 'engine.noOp' }],
      { Start: main('A'), A: main('B'), B: main('A') },
      { reason: 'cycle', nodes: ['A', 'B'] },
    );
  });

  test('a required parameter missing names the node and the parameters; a bad cron is SCHEDULE_INVALID', () => {
    invalid([start, { name: 'Check', type: 'engine.if' }], {}, { node: 'Check', missingParameters: ['condition'] });
    invalid([start, { name: 'Call', type: 'engine.httpRequest', parameters: { method: 'GET' } }], {}, { node: 'Call', missingParameters: ['url'] });
    invalid(
      [{ name: 'Every', type: 'engine.scheduleTrigger', parameters: { cron: 'every tuesday' } }],
      {},
      { node: 'Every', parameter: 'cron' },
      'SCHEDULE_INVALID',
    );
  });

  test('shape problems are validation errors by field', () => {
    assert.throws(
      () => validateDefinition({ nodes: [{ name: '', type: 1 }, 'x'], connections: {} }),
      (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, 'validation_error');
        const fields = (err.details.errors as { field: string }[]).map((e) => e.field);
        assert.deepEqual(fields, ['nodes.0.name', 'nodes.0.type', 'nodes.1']);
        return true;
      },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// n8n's execution order v1

/** Node types only these tests use: registered in this process. */
function testNode(def: NodeDefinition): void {
  (NODE_TYPES as Map<string, NodeDefinition>).set(`test.${def.name}`, def);
}
// Two inputs; `required` as n8n's requiredInputs; passes on what arrived, saying which inputs had items.
testNode({
  name: 'join',
  description: 'test',
  inProcess: true,
  inputs: () => 2,
  requiredInputs: (p) => p.required as number | number[],
  execute: async (ctx) => ({ outputs: [[{ json: { inputs: ctx.inputs.map((l) => l.map((i) => i.json)) } }]] }),
});
// All items to output `to`.
testNode({
  name: 'route',
  description: 'test',
  inProcess: true,
  outputs: () => 2,
  execute: async (ctx) => ({ outputs: ctx.node.parameters.to === 1 ? [[], ctx.items] : [ctx.items, []] }),
});
// Its items in reverse order (the items themselves: their paired items go with them).
testNode({ name: 'reverse', description: 'test', inProcess: true, execute: async (ctx) => ({ outputs: [[...ctx.items].reverse()] }) });
// Each item: the json of the item of `node` it came from ($('node').item), and the run index.
testNode({
  name: 'lineage',
  description: 'test',
  inProcess: true,
  execute: async (ctx) => ({
    outputs: [
      ctx.items.map((_, i) => ({
        json: { from: ctx.lineage?.pairedItem(String(ctx.node.parameters.node), i)?.json ?? null, run: ctx.lineage?.runIndex ?? null },
      })),
    ],
  }),
});

const V1 = { executionOrder: 'v1' };
const at = (name: string, type: string, x: number, y: number, parameters: Record<string, unknown> = {}): N => ({ name, type, position: [x, y], parameters });

describe('execution order v1 (n8n)', () => {
  test('a node fed by two branches runs once per branch; branches run depth first, the top one first', async () => {
    const def = workflow(
      [
        at('Start', 'engine.manualTrigger', 0, 0),
        at('Low', 'engine.noOp', 200, 300),
        at('High', 'engine.noOp', 200, -100),
        at('Both', 'engine.noOp', 400, 0),
        at('After', 'engine.noOp', 600, 0),
      ],
      [
        ['Start', 'Low'],
        ['Start', 'High'],
        ['Low', 'Both'],
        ['High', 'Both'],
        ['Both', 'After'],
      ],
      V1,
    );
    const r = await run(def, [{ n: 1 }]);
    assert.deepEqual(ran(r), ['Start', 'High', 'Both', 'After', 'Low', 'Both', 'After']);
    assert.deepEqual(
      r.runs.map((x) => x.runIndex),
      [0, 0, 0, 0, 0, 1, 1],
    );
    assert.deepEqual(items(r), [{ n: 1 }]);
  });

  test('the same depth-first order without v1 settings runs each node once (legacy order kept)', async () => {
    const def = workflow(
      [at('Start', 'engine.manualTrigger', 0, 0), at('Low', 'engine.noOp', 200, 300), at('High', 'engine.noOp', 200, -100), at('Both', 'engine.noOp', 400, 0)],
      [
        ['Start', 'Low'],
        ['Start', 'High'],
        ['Low', 'Both'],
        ['High', 'Both'],
      ],
    );
    const r = await run(def, [{ n: 1 }]);
    assert.deepEqual(ran(r), ['Start', 'Low', 'High', 'Both']);
    assert.deepEqual(items(r), [{ n: 1 }, { n: 1 }]);
    assert.equal(r.runs[0]!.output![0]![0]!.pairedItem, undefined, 'no paired items in the legacy order');
  });

  test('same height: the left one first; outputs without items run nothing', async () => {
    const def = workflow(
      [
        at('Start', 'engine.manualTrigger', 0, 0),
        at('Route', 'test.route', 100, 0, { to: 0 }),
        at('Right', 'engine.noOp', 400, 0),
        at('Left', 'engine.noOp', 200, 0),
        at('Never', 'engine.noOp', 200, 200),
      ],
      [
        ['Start', 'Route'],
        ['Route', 'Right'],
        ['Route', 'Left'],
        ['Route', 'Never', 1],
      ],
      V1,
    );
    assert.deepEqual(ran(await run(def)), ['Start', 'Route', 'Left', 'Right']);
  });

  test('a node with two inputs waits for both, then runs once with both', async () => {
    const def = workflow(
      [
        at('Start', 'engine.manualTrigger', 0, 0),
        at('A', 'engine.set', 200, 0, { values: { a: 1 } }),
        at('B', 'engine.set', 200, 200, { values: { b: 1 } }),
        at('Join', 'test.join', 400, 100),
      ],
      [
        ['Start', 'A'],
        ['Start', 'B'],
        ['A', 'Join', 0, 0],
        ['B', 'Join', 0, 1],
      ],
      V1,
    );
    const r = await run(def, [{}]);
    assert.deepEqual(ran(r), ['Start', 'A', 'B', 'Join']);
    assert.deepEqual(items(r), [{ inputs: [[{ a: 1 }], [{ b: 1 }]] }]);
  });

  test('when nothing else is left, a waiting node runs with what it has, unless its required inputs are missing', async () => {
    const shape = (required?: number | number[]) =>
      workflow(
        [
          at('Start', 'engine.manualTrigger', 0, 0),
          at('Route', 'test.route', 200, 0, { to: 0 }),
          at('X', 'engine.noOp', 400, 200),
          at('Join', 'test.join', 600, 0, required === undefined ? {} : { required }),
          at('End', 'engine.noOp', 800, 0),
        ],
        [
          ['Start', 'Route'],
          ['Route', 'Join', 0, 0],
          ['Route', 'X', 1],
          ['X', 'Join', 0, 1],
          ['Join', 'End'],
        ],
        V1,
      );
    const partial = await run(shape(), [{ k: 1 }]);
    assert.deepEqual(ran(partial), ['Start', 'Route', 'Join', 'End']);
    assert.deepEqual(items(partial), [{ inputs: [[{ k: 1 }], []] }]);
    assert.deepEqual(ran(await run(shape(1), [{ k: 1 }])), ['Start', 'Route', 'Join', 'End'], 'one input required: it has one');
    assert.deepEqual(ran(await run(shape([0]), [{ k: 1 }])), ['Start', 'Route', 'Join', 'End'], 'input 0 required: it has it');
    const all = await run(shape(2), [{ k: 1 }]);
    assert.deepEqual(ran(all), ['Start', 'Route'], 'both inputs required (n8n Merge chooseBranch): it never runs');
    assert.equal(all.outcome.status, 'success');
    assert.deepEqual(ran(await run(shape([1]), [{ k: 1 }])), ['Start', 'Route'], 'input 1 required and missing');
  });

  test('loops are accepted in v1 only; a node running past the limit fails the execution, naming it', async () => {
    const nodes = [at('Start', 'engine.manualTrigger', 0, 0), at('A', 'engine.noOp', 200, 0), at('B', 'engine.noOp', 400, 0)];
    const edges: [string, string][] = [
      ['Start', 'A'],
      ['A', 'B'],
      ['B', 'A'],
    ];
    assert.throws(
      () => workflow(nodes, edges),
      (err: unknown) => err instanceof AppError && err.details.reason === 'cycle',
    );
    const r = await run(workflow(nodes, edges, V1), [{}], { maxNodeRuns: 50 });
    assert.equal(r.outcome.status, 'error');
    if (r.outcome.status !== 'error') return;
    assert.equal(r.outcome.error.code, 'EXECUTION_FAILED');
    assert.equal(r.outcome.error.node, 'A');
    assert.equal(r.outcome.error.details.reason, 'loop_limit');
    assert.match(r.outcome.error.message, /Node "A" ran 50 times/);
    assert.equal(r.runs.filter((x) => x.node === 'A').length, 50);
  });

  test('paired items: each output item knows its input item, so $("Node").item follows items back through several nodes', async () => {
    const def = workflow(
      [
        at('Start', 'engine.manualTrigger', 0, 0),
        at('Keep', 'engine.filter', 200, 0, { condition: '{{ $json.n > 1 }}' }),
        at('Tag', 'engine.set', 400, 0, { values: { tagged: true } }),
        at('Reverse', 'test.reverse', 600, 0),
        at('Where', 'test.lineage', 800, 0, { node: 'Start' }),
      ],
      [
        ['Start', 'Keep'],
        ['Keep', 'Tag'],
        ['Tag', 'Reverse'],
        ['Reverse', 'Where'],
      ],
      V1,
    );
    const r = await run(def, [{ n: 1 }, { n: 2 }, { n: 3 }]);
    assert.deepEqual(output(r, 'Reverse')![0], [
      { n: 3, tagged: true },
      { n: 2, tagged: true },
    ]);
    assert.deepEqual(items(r), [
      { from: { n: 3 }, run: 0 },
      { from: { n: 2 }, run: 0 },
    ]);
    const tag = r.runs.find((x) => x.node === 'Tag')!.output![0]!;
    assert.deepEqual(
      tag.map((i) => i.pairedItem),
      [{ item: 0 }, { item: 1 }],
      'same count in and out: same index',
    );
  });

  test('paired items: a broken chain falls back to the same index', async () => {
    const def = workflow(
      [
        at('Start', 'engine.manualTrigger', 0, 0),
        at('Two', 'engine.code', 200, 0, { code: 'return [{ json: { x: 1 } }, { json: { x: 2 } }, { json: { x: 3 } }];' }),
        at('Where', 'test.lineage', 400, 0, { node: 'Start' }),
      ],
      [
        ['Start', 'Two'],
        ['Two', 'Where'],
      ],
      V1,
    );
    const r = await run(def, [{ n: 1 }, { n: 2 }]);
    assert.deepEqual(
      items(r).map((i) => i.from),
      [{ n: 1 }, { n: 2 }, null],
    );
  });

  test('replay: stored runs are taken as they were, the rest runs (resume in place)', async () => {
    const def = workflow(
      [
        at('Start', 'engine.manualTrigger', 0, 0),
        at('A', 'engine.set', 200, 0, { values: { a: 1 } }),
        at('B', 'engine.set', 200, 200, { values: { b: 1 } }),
        at('Both', 'engine.noOp', 400, 100),
      ],
      [
        ['Start', 'A'],
        ['Start', 'B'],
        ['A', 'Both'],
        ['B', 'Both'],
      ],
      V1,
    );
    const first = await run(def, [{}]);
    const stored = new Map<string, { output: Item[][] }[]>();
    for (const x of first.runs.slice(0, 3)) (stored.get(x.node) ?? stored.set(x.node, []).get(x.node)!)[x.runIndex] = { output: x.output! };
    const runs: NodeRun[] = [];
    const compiled = compile(def);
    const outcome = await executor.run({
      compiled,
      execution: { id: 'e1', mode: 'manual', resumeUrl: '' },
      workflow: { id: 'w1', name: 'Test', active: true },
      input: [{ json: {} }],
      startNode: 'Start',
      stored,
      signal: new AbortController().signal,
      services: { codeSandbox, fetch: async () => assert.fail(), runWorkflow: async () => assert.fail() },
      hooks: { afterNode: (r) => void runs.push(r) },
    });
    assert.deepEqual(
      runs.map((x) => [x.node, x.runIndex]),
      [
        ['B', 0],
        ['Both', 1],
      ],
      'only what was not stored ran',
    );
    assert.equal(outcome.status, 'success');
  });
});
