import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { compilePath, ExpressionEngine, ExpressionError, parseTemplate, type ExpressionData } from './expressions';
import { Sandbox } from './sandbox';

/** A sandbox that counts its uses, to prove plain paths never reach it. */
class CountingSandbox extends Sandbox {
  runs = 0;
  override run(req: Parameters<Sandbox['run']>[0]) {
    this.runs++;
    return super.run(req);
  }
}
const sandbox = new CountingSandbox({ memoryMb: 32, timeoutMs: 1000, poolSize: 2 });
const engine = new ExpressionEngine(sandbox);
after(() => sandbox.dispose());

function data(items: Record<string, unknown>[], nodes: Record<string, Record<string, unknown>[]> = {}): ExpressionData {
  return {
    items: items.map((json) => ({ json })),
    nodes: new Map(Object.entries(nodes).map(([k, v]) => [k, v.map((json) => ({ json }))])),
    execution: { id: 'exec-1', mode: 'manual', resumeUrl: '/webhook/resume/exec-1/t' },
    workflow: { id: 'wf-1', name: 'Orders', active: true },
  };
}

describe('templates', () => {
  test('split text and {{ expressions }}, braces inside literals included', () => {
    assert.equal(parseTemplate('no braces'), null);
    assert.deepEqual(parseTemplate('Hi {{ $json.name }}!'), [{ text: 'Hi ' }, { expr: '$json.name' }, { text: '!' }]);
    assert.deepEqual(parseTemplate('{{ ({ a: "}}" }).a }}'), [{ expr: '({ a: "}}" }).a' }]);
    assert.deepEqual(parseTemplate('{{ unclosed'), null);
  });

  test('plain paths compile to accessors; anything else does not', () => {
    for (const src of ['$json', '$json.a.b', '$json["a b"][0].c', '$node["Fetch order"].json.id', "$node.Set.json.x", "$('Set').item.json.x", '$input.first().json.y', '$input.item.json', '$execution.id', '$itemIndex']) {
      assert.ok(compilePath(src), src);
    }
    for (const src of ['$json.a + 1', '$json.a.toUpperCase()', 'Math.max(1, 2)', '$json[$json.key]', '$jsonx', '$node[name].json']) {
      assert.equal(compilePath(src), null, src);
    }
  });
});

describe('resolving parameters', () => {
  test('plain paths are resolved without the sandbox; a whole {{ }} keeps its type', async () => {
    const before = sandbox.runs;
    const params = {
      id: '{{ $json.order.id }}',
      line: 'Order {{ $json.order.id }} for {{ $json.customer["full name"] }}',
      first: '{{ $json.items[0] }}',
      fromNode: '{{ $node["Lookup"].json.tier }}',
      legacy: "{{ $('Lookup').item.json.tier }}",
      missing: '{{ $json.nope }}',
      nested: { deep: ['{{ $json.order.total }}', 'fixed'] },
      count: '{{ $json.items.length }}',
      exec: '{{ $execution.id }}',
    };
    const [out] = await engine.resolve(
      params,
      data([{ order: { id: 17, total: 9.5 }, customer: { 'full name': 'Ann Lee' }, items: [{ sku: 'a' }] }], { Lookup: [{ tier: 'gold' }] }),
    );
    assert.deepEqual(out, {
      id: 17,
      line: 'Order 17 for Ann Lee',
      first: { sku: 'a' },
      fromNode: 'gold',
      legacy: 'gold',
      missing: null,
      nested: { deep: [9.5, 'fixed'] },
      count: 1,
      exec: 'exec-1',
    });
    assert.equal(sandbox.runs, before, 'no sandbox evaluation');
    assert.deepEqual(params.nested.deep, ['{{ $json.order.total }}', 'fixed'], 'the parameters are not modified');
  });

  test('other expressions run in the sandbox, all items of a node in one evaluation', async () => {
    const before = sandbox.runs;
    const out = await engine.resolve(
      { double: '{{ $json.n * 2 }}', label: '{{ $json.name.toUpperCase() }}-{{ $itemIndex }}', total: '{{ $input.all().reduce((s, i) => s + i.json.n, 0) }}', ref: '{{ $node["A"].json.x + 1 }}' },
      data([{ n: 1, name: 'a' }, { n: 2, name: 'b' }, { n: 3, name: 'c' }], { A: [{ x: 10 }, { x: 20 }, { x: 30 }] }),
    );
    assert.deepEqual(out, [
      { double: 2, label: 'A-0', total: 6, ref: 11 },
      { double: 4, label: 'B-1', total: 6, ref: 21 },
      { double: 6, label: 'C-2', total: 6, ref: 31 },
    ]);
    assert.equal(sandbox.runs, before + 1);
  });

  test('bare expressions (conditions) and raw parameters (code)', async () => {
    const [out] = await engine.resolve(
      { condition: '$json.amount > 100', rules: [{ condition: '$json.amount < 5' }], code: 'return {{ not an expression }}' },
      data([{ amount: 150 }]),
      { bareExpressions: ['condition', 'rules.*.condition'], raw: ['code'] },
    );
    assert.deepEqual(out, { condition: true, rules: [{ condition: false }], code: 'return {{ not an expression }}' });
  });

  test('inherited properties go to the sandbox rather than leaking host prototypes', async () => {
    const [out] = await engine.resolve({ a: '{{ typeof $json.constructor }}', b: '{{ $json.toString }}' }, data([{ x: 1 }]));
    assert.equal(out!.a, 'function');
    assert.equal(out!.b, null);
  });

  test('errors name the expression', async () => {
    await assert.rejects(engine.resolve({ v: '{{ $json.a.b.c }}' }, data([{}])), (err: unknown) => {
      assert.ok(err instanceof ExpressionError);
      assert.match(err.message, /Cannot read properties of undefined \(reading 'b'\) \[in \{\{ \$json\.a\.b\.c \}\}\]/);
      return true;
    });
    await assert.rejects(engine.resolve({ v: '{{ $node["Nope"].json.x }}' }, data([{}])), /No node called "Nope" has run/);
    await assert.rejects(engine.resolve({ v: '{{ $json.x * }}' }, data([{}])), /SyntaxError|Unexpected/);
  });

  test('an expression cannot reach the process, and an endless one is stopped', async () => {
    const [out] = await engine.resolve({ p: '{{ typeof process }}', r: '{{ typeof require }}' }, data([{}]));
    assert.deepEqual(out, { p: 'undefined', r: 'undefined' });
    const started = Date.now();
    await assert.rejects(engine.resolve({ v: '{{ (() => { while (true) {} })() }}' }, data([{}])), (err: unknown) => {
      assert.ok(err instanceof ExpressionError);
      assert.equal(err.reason, 'timeout');
      return true;
    });
    assert.ok(Date.now() - started < 3000);
  });
});
