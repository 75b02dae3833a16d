import assert from 'node:assert/strict';
import { runNode, runWorkflow, type Json } from '../../../../../test/support/n8n-harness';
import { thrownMessage } from './code';
import { assertItems, direct, disposeCodeTesting, each, failure, node, run } from './testing';

/**
 * What the Code node's code sees and how it runs (runner.ts): n8n's variables, paired items
 * and node contexts, continueOnFail, promises and timers, and n8n's messages for thrown errors.
 */

afterAll(disposeCodeTesting);

describe("n8n Code: n8n's variables", () => {
  test('$input.first(), last(), item, $json and $itemIndex when running once for all items', async () => {
    assertItems(
      await run('return [{ f: $input.first().json.a, l: $input.last().json.a, i: $input.item.json.a, j: $json.a, idx: $itemIndex }]', [{ a: 1 }, { a: 2 }]),
      [{ f: 1, l: 2, i: 1, j: 1, idx: 0 }],
    );
  });

  test("$('Node'): first, last, all, item, itemMatching, isExecuted", async () => {
    const source = `const n = $('Input 1');
return [{ first: n.first().json.a, last: n.last().json.a, all: n.all().length, item: n.item.json.a, m: n.itemMatching(1).json.a, ran: n.isExecuted, no: $('Elsewhere').isExecuted }]`;
    assertItems(await run(source, [{ a: 1 }, { a: 2 }]), [{ first: 1, last: 2, all: 2, item: 1, m: 2, ran: true, no: false }]);
    assertItems(await each("return { same: $('Input 1').item.json.a }", [{ a: 1 }, { a: 2 }]), [{ same: 1 }, { same: 2 }]);
  });

  test('$node["Node"].json is the item at the same index; $items() reads a node or the input', async () => {
    assertItems(await each('return { a: $node["Input 1"].json.a, n: $items("Input 1").length, i: $items().length }', [{ a: 1 }, { a: 2 }]), [
      { a: 1, n: 2, i: 2 },
      { a: 2, n: 2, i: 2 },
    ]);
  });

  test('a node that has not run, an item that is not there', async () => {
    assert.equal(await failure("return $('Elsewhere').all()"), "Node 'Elsewhere' hasn't been executed");
    assert.equal(
      await failure("return $('Input 1').itemMatching(5)", [{ a: 1 }]),
      "Can't get data for $('Input 1').itemMatching(5): no item of 'Input 1' is paired with input item 5",
    );
  });

  test('$input.first() takes no arguments', async () => {
    assert.equal(await failure('return $input.first(1)'), '$input.first() should have no arguments');
  });

  test('$execution, $workflow, $mode, $runIndex, $nodeVersion, $vars, $parameter', async () => {
    const [out] = await run(
      'return { e: $execution, w: $workflow, m: $mode, r: $runIndex, v: $nodeVersion, vars: $vars, p: typeof $parameter.jsCode, id: $executionId }',
      [{}],
    );
    assert.deepEqual(out, {
      e: { id: 'harness', mode: 'test', resumeUrl: 'http://localhost/resume' },
      w: { active: false, id: 'harness', name: 'Harness' },
      m: 'manual',
      r: 0,
      v: 2,
      vars: {},
      p: 'string',
      id: 'harness',
    });
    const [production] = (await direct('return { e: $execution, w: $workflow, m: $mode }', [{}])).items;
    assert.deepEqual(production, {
      e: { id: 'e1', mode: 'production', resumeUrl: 'http://x/resume/e1' },
      w: { active: true, id: 'w1', name: 'W' },
      m: 'webhook',
    });
  });

  test('$env is refused as n8n refuses it by default', async () => {
    assert.equal(await failure('return { v: $env.HOME }'), 'access to env vars denied');
  });

  test("require: every module is disallowed (n8n's default)", async () => {
    assert.equal(await failure("const c = require('crypto');\nreturn {}"), "Module 'crypto' is disallowed");
  });

  test('btoa and atob', async () => {
    assertItems(await run('return { b: btoa("hello n8n"), a: atob("aGVsbG8gbjhu"), e: btoa(""), p: atob(btoa("ab")) }'), [
      { b: 'aGVsbG8gbjhu', a: 'hello n8n', e: '', p: 'ab' },
    ]);
    assert.equal(await failure('return { b: btoa("€") }'), 'Invalid character');
  });

  test('$now and $today are times of this run', async () => {
    const [out] = await run('return { now: new Date($now).getTime(), today: new Date($today).getTime() }');
    assert.ok(Math.abs((out!.now as number) - Date.now()) < 60_000);
    assert.ok((out!.today as number) <= (out!.now as number));
  });

  test("luxon's DateTime, Duration and Interval, and $now/$today as DateTimes, for code that names them", async () => {
    const [out] = await run(
      "return { iso: DateTime.fromMillis(0, { zone: 'UTC' }).toISO(), minutes: Duration.fromObject({ hours: 1 }).as('minutes'), " +
        "days: Interval.after(DateTime.fromMillis(0), { days: 2 }).length('days'), now: DateTime.isDateTime($now), today: $today.equals($now.startOf('day')) }",
    );
    assert.deepEqual(out, { iso: '1970-01-01T00:00:00.000Z', minutes: 60, days: 2, now: true, today: true });
  });

  test('luxon is built in the context on first use: the same globals for code that reaches them without naming them', async () => {
    // Names made at run time: the node cannot see from the text that the code uses dates.
    const lazy =
      "const g = globalThis, DT = 'Date' + 'Time', own = () => Object.getOwnPropertyDescriptor(g, DT);" +
      "const before = typeof own().get; const iso = g[DT].fromMillis(0, { zone: 'UTC' }).toISO(); const after = own();" +
      "return { before, iso, after: [typeof after.value, after.writable, after.enumerable, after.value === g[DT]], now: g['$' + 'now'].isLuxonDateTime === true }";
    // The second run takes the context made after the first, for code like it (the first may take one made ahead for other code).
    await direct(lazy, [{}]);
    const { items } = await direct(lazy, [{}]);
    assert.deepEqual(items, [{ before: 'function', iso: '1970-01-01T00:00:00.000Z', after: ['function', true, false, true], now: true }]);
    // Assigned before it is built, a global is just replaced; the others stay as they were.
    const assigned =
      "globalThis['Date' + 'Time'] = 1; return { dt: globalThis['Date' + 'Time'], duration: typeof Object.getOwnPropertyDescriptor(globalThis, 'Dur' + 'ation').get }";
    await direct(assigned, [{}]);
    assert.deepEqual((await direct(assigned, [{}])).items, [{ dt: 1, duration: 'function' }]);
  });

  test('console.log lines go to the execution log', async () => {
    const out = await direct('console.log("hello", { a: 1 }, 2);\nconsole.log(this);\nreturn []', [{}]);
    assert.deepEqual(out.logs, [
      ['info', 'console: hello {"a":1} 2'],
      ['info', 'console: [[ExecutionContext]]'],
    ]);
  });
});

describe("n8n Code: paired items, node contexts and n8n's error handling", () => {
  test('each result is paired with its input item; returned items keep the paired item they name', async () => {
    const perItem = await direct('return $json.a === 2 ? null : { b: $json.a }', [{ a: 1 }, { a: 2 }, { a: 3 }], { mode: 'runOnceForEachItem' });
    assert.deepEqual(perItem.items, [{ b: 1 }, { b: 3 }]);
    assert.deepEqual(perItem.paired, [{ item: 0 }, { item: 2 }]);
    const all = await direct('return [{ json: { a: 1 }, pairedItem: 1 }, { json: { b: 2 }, pairedItem: { item: 0, input: 0 } }, { json: {} }]', [{}, {}]);
    assert.deepEqual(all.paired, [{ item: 1 }, { item: 0, input: 0 }, undefined]);
  });

  test("execution order v1: $('Node').item follows the paired items back (through a node that reversed them)", async () => {
    const codeNode = (name: string, x: number, parameters: Json) => ({ name, type: 'n8n-nodes-base.code', typeVersion: 2, position: [x, 0], parameters });
    const link = (to: string) => ({ main: [[{ node: to, type: 'main', index: 0 }]] });
    const run = await runWorkflow({
      nodes: [
        { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
        codeNode('Make', 200, { jsCode: 'return [{ n: 1 }, { n: 2 }, { n: 3 }]' }),
        codeNode('Reverse', 400, { jsCode: 'return $input.all().reverse()' }),
        codeNode('Look', 600, {
          mode: 'runOnceForEachItem',
          jsCode: "return { mine: $json.n, fromMake: $('Make').item.json.n, sameIndex: $node['Make'].json.n }",
        }),
      ],
      connections: { Start: link('Make'), Make: link('Reverse'), Reverse: link('Look') },
      settings: { executionOrder: 'v1' },
    });
    assert.deepEqual(run.result, [
      { mine: 3, fromMake: 3, sameIndex: 1 },
      { mine: 2, fromMake: 2, sameIndex: 2 },
      { mine: 1, fromMake: 1, sameIndex: 3 },
    ]);
  });

  test('execution order v1: $prevNode, $runIndex, and input items that carry their paired item', async () => {
    const out = await runNode(node('return [{ prev: $prevNode, run: $runIndex, keys: Object.keys($input.first()) }]'), [{ a: 1 }], {
      settings: { executionOrder: 'v1' },
    });
    assert.deepEqual(out[0], [{ prev: { name: 'Input 1', outputIndex: 0, runIndex: 0 }, run: 0, keys: ['json', 'pairedItem'] }]);
  });

  test('$prevNode and node contexts need execution order v1 (an n8n Code node in a workflow of ours without it)', async () => {
    // An import always runs in v1 order (n8n/import.ts): only a workflow created in our format lacks it.
    await assert.rejects(direct('return { p: $prevNode.name }', [{}]), {
      message: "$prevNode is not available here: the node that fed this one is known in n8n's execution order v1 only",
    });
    await assert.rejects(direct("return $('Input 1').context", [{}], { nodes: { 'Input 1': [{}] } }), {
      message: "$('Input 1').context is not available here: node contexts are kept in n8n's execution order v1 only",
    });
  });

  test("a node's context, and the paired item the executor finds", async () => {
    const lineage = {
      runIndex: 2,
      pairedItem: (name: string, i: number) => (name === 'Loop' ? { json: { origin: 10 + i } } : undefined),
      context: (name: string) => (name === 'Loop' ? { noItemsLeft: true } : undefined),
    };
    const inputSource = [{ previousNode: 'Loop', previousNodeOutput: 1, previousNodeRun: 2 }];
    const source =
      "return { done: $('Loop').context.noItemsLeft, input: $input.context.noItemsLeft, node: $node['Loop'].context.noItemsLeft, origin: $('Loop').item.json.origin, run: $runIndex, prev: $prevNode.outputIndex }";
    const out = await direct(source, [{ a: 1 }, { a: 2 }], { lineage, inputSource, mode: 'runOnceForEachItem', nodes: { Loop: [{ x: 1 }] } });
    assert.deepEqual(out.items, [
      { done: true, input: true, node: true, origin: 10, run: 2, prev: 1 },
      { done: true, input: true, node: true, origin: 11, run: 2, prev: 1 },
    ]);
  });

  test('continueOnFail, all items: the failure becomes one {error} item', async () => {
    const out = await direct('throw new Error("Boom")', [{ a: 1 }, { a: 2 }], { continueOnFail: true });
    assert.deepEqual(out.items, [{ error: 'Boom [line 1]' }]);
    const regular = await runNode({ ...node('const a = 1;\nthrow new Error("Boom")'), onError: 'continueRegularOutput' }, [{ a: 1 }]);
    assert.deepEqual(regular[0], [{ error: 'Boom [line 2]' }]);
  });

  test('continueOnFail, each item: a failing item becomes an {error} item, the others go on', async () => {
    const out = await direct('if ($json.a === 2) throw new Error("bad");\nreturn { ok: $json.a }', [{ a: 1 }, { a: 2 }, { a: 3 }], {
      continueOnFail: true,
      mode: 'runOnceForEachItem',
    });
    assert.deepEqual(out.items, [{ ok: 1 }, { error: 'bad [line 1]' }, { ok: 3 }]);
    assert.deepEqual(out.paired, [{ item: 0 }, { item: 1 }, { item: 2 }]);
  });

  test('continueOnFail covers what n8n checks after the run too: the check becomes the {error} item', async () => {
    const out = await direct('return "text"', [{}], { continueOnFail: true });
    assert.deepEqual(out.items, [{ error: "Code doesn't return items properly" }]);
    await assert.rejects(direct('return "text"', [{}]), /Code doesn't return items properly/);
  });
});

describe('n8n Code: async code and timers', () => {
  test('promises and await', async () => {
    assertItems(await run('const v = await Promise.all([1, Promise.resolve(2)]);\nreturn { v }'), [{ v: [1, 2] }]);
  });

  test('timers fire by due time, whatever order they were set in; a cleared one never fires', async () => {
    const source = `const seen = [];
setTimeout(() => seen.push('c'), 30);
setTimeout(() => seen.push('a'), 10);
const gone = setTimeout(() => seen.push('never'), 5);
clearTimeout(gone);
setTimeout(() => seen.push('b'), 10);
setImmediate(() => seen.push('now'));
await new Promise((r) => setTimeout(r, 50));
return { seen }`;
    assertItems(await run(source), [{ seen: ['now', 'a', 'b', 'c'] }]);
  });

  test('an interval runs until cleared; timers set inside callbacks run too', async () => {
    const source = `let ticks = 0;
await new Promise((resolve) => {
  const t = setInterval(() => {
    ticks++;
    if (ticks === 5) { clearInterval(t); setTimeout(resolve, 10); }
  }, 100);
});
return { ticks }`;
    assertItems(await run(source), [{ ticks: 5 }]);
  });

  test('a timer waits while promise steps are still running (a timeout guard around work does not fire)', async () => {
    const source = `let fired = false;
const guard = setTimeout(() => { fired = true; }, 1000);
let steps = 0;
for (let i = 0; i < 500; i++) { await null; steps++; }
clearTimeout(guard);
return { fired, steps }`;
    assertItems(await run(source), [{ fired: false, steps: 500 }]);
  });

  test('Atomics.waitAsync, which would abort the sandbox process, is not there', async () => {
    assertItems(await run('return { t: typeof Atomics.waitAsync }'), [{ t: 'undefined' }]);
  });

  test('no real waiting: an hour of timers takes no time', async () => {
    const started = Date.now();
    assertItems(await run('await new Promise((r) => setTimeout(r, 3600000));\nreturn { done: true }'), [{ done: true }]);
    assert.ok(Date.now() - started < 5_000);
  });

  test('an error thrown in a timer fails the node with its line', async () => {
    assert.equal(await failure('await new Promise(() => {\n  setTimeout(function tick() {\n    throw new Error("late");\n  }, 10);\n});'), 'late [line 3]');
  });

  test('a promise that never settles meets the time limit', async () => {
    await assert.rejects(direct('await new Promise(() => {});\nreturn []', [{}], { timeout: 0.5 }), /^NodeError: Task execution timed out after 0\.5 seconds$/);
  });
});

describe('n8n Code: errors', () => {
  test('a thrown error: its message and line', async () => {
    assert.equal(await failure('const a = 1;\nthrow new Error("Something went wrong");'), 'Something went wrong [line 2]');
    assert.equal(await failure('const a = 1;\n\nunknown;\nreturn []'), 'unknown is not defined [line 3]');
  });

  test("the line is the named function's, else the code's own line", async () => {
    assert.equal(
      await failure('function my_function() {\n  null.map();\n}\nmy_function();\nreturn []'),
      "Cannot read properties of null (reading 'map') [line 2]",
    );
    assert.equal(await failure('const list = [1];\nlist.map((x) => {\n  return x.a.b;\n});'), "Cannot read properties of undefined (reading 'b') [line 2]");
  });

  test('in each-item mode the message carries no item number (n8n task runner)', async () => {
    assert.equal(await failure('if ($itemIndex === 1) throw new TypeError("bad");\nreturn $json', [{}, {}], { mode: 'runOnceForEachItem' }), 'bad [line 1]');
  });

  test('n8n keeps the text after the last colon; something not an error is "Unknown error"', async () => {
    assert.equal(await failure('throw new Error("Invalid value: 42")'), '42 [line 1]');
    assert.equal(await failure('throw "oops"'), 'Unknown error');
  });

  test('code that does not parse fails with the parser message', async () => {
    assert.equal(await failure('return ('), "Unexpected token '}'");
  });

  test('the message from a stack, as n8n reads it', () => {
    const stack = 'TypeError: a.unknown is not a function\n    at VmCodeWrapper (n8n-code:2:3)\n    at <isolated-vm>:1:1';
    assert.deepEqual(thrownMessage(stack), { message: 'a.unknown is not a function [line 2]', description: 'TypeError', lineNumber: 2 });
    assert.deepEqual(thrownMessage('Oops\n    at VmCodeWrapper (n8n-code:4:1)'), { message: 'Unknown error [line 4]', lineNumber: 4 });
  });
});
