import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { compilePath, ExpressionEngine, ExpressionError, parseTemplate, type ExpressionData } from './engine';
import { rewrite } from './syntax';
import { Sandbox, type Prelude } from '../sandbox';

/** A sandbox that counts its uses (to prove plain paths never reach it) and notes what each run asked for. */
class CountingSandbox extends Sandbox {
  runs = 0;
  preludes: (Prelude | undefined)[] = [];
  override run(req: Parameters<Sandbox['run']>[0]) {
    this.runs++;
    this.preludes.push(req.prelude);
    return super.run(req);
  }
}
const sandbox = new CountingSandbox({ memoryMb: 32, timeoutMs: 1000, poolSize: 2 });
const engine = new ExpressionEngine(sandbox);
afterAll(() => sandbox.dispose());

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
    for (const src of [
      '$json',
      '$json.a.b',
      '$json["a b"][0].c',
      '$node["Fetch order"].json.id',
      '$node.Set.json.x',
      "$('Set').item.json.x",
      '$input.first().json.y',
      '$input.item.json',
      '$execution.id',
      '$itemIndex',
    ]) {
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
      {
        double: '{{ $json.n * 2 }}',
        label: '{{ $json.name.toUpperCase() }}-{{ $itemIndex }}',
        total: '{{ $input.all().reduce((s, i) => s + i.json.n, 0) }}',
        ref: '{{ $node["A"].json.x + 1 }}',
      },
      data(
        [
          { n: 1, name: 'a' },
          { n: 2, name: 'b' },
          { n: 3, name: 'c' },
        ],
        { A: [{ x: 10 }, { x: 20 }, { x: 30 }] },
      ),
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

/** `={{ … }}` parameters resolved as a native n8n node's (ResolveOptions.n8n). */
async function n8n<T extends Record<string, string>>(params: T, d: ExpressionData = data([{}])): Promise<Record<keyof T, unknown>[]> {
  return (await engine.resolve(params, d, { n8n: true })) as Record<keyof T, unknown>[];
}

describe("n8n's syntax: the rewrite before the sandbox", () => {
  test('extension calls go through the dispatcher; optional chains keep their short-circuit', () => {
    const cases: [string, string][] = [
      ['$json.name.toTitleCase()', '$$ext($json.name, "toTitleCase")()'],
      ['$json.a?.isEmpty()', '$$ext($json.a, "isEmpty", 1)?.()'],
      ['$json.a?.b.toTitleCase().length', '$$opt($json.a, ($$v0) => $$ext($$v0.b, "toTitleCase")().length)'],
      ['new Date().toDateTime().plus(1, "day")', '$$ext($$ext(new Date(), "toDateTime")(), "plus")(1, "day")'],
      ['typeof $json.x.isEmpty()', 'typeof $$ext($json.x, "isEmpty")()'],
      ['x => { return x.sum() }', 'x => { return $$ext(x, "sum")() }'],
      ['`a ${$json.s.toSnakeCase()} b`', '`a ${$$ext($json.s, "toSnakeCase")()} b`'],
      ['$if($json.a, $json.a.b, "none")', '(($json.a) ? ( $json.a.b) : ( "none"))'],
      ['$if(1, 2)', '((1) ? ( 2) : (false))'],
      ['Math.min(1, 2);', 'Math.min(1, 2)'],
      ['$input.first().json.a + Object.keys($json).length', '$input.first().json.a + Object.keys($json).length'],
    ];
    for (const [source, code] of cases) assert.equal(rewrite(source).code, code, source);
  });

  test('strings, regular expressions, comments and property reads are left alone', () => {
    for (const source of ['\'a.isEmpty()\' + "b.sum()"', '/x.sum()/.test($json.a) ? 1 / 2 : 3', '$json.keys', '1 + /* .sum() */ 2', '$json.a ? .5 : 1']) {
      assert.equal(rewrite(source).code, source, source);
      assert.equal(rewrite(source).extensions, false, source);
    }
    assert.equal(rewrite('"unterminated').code, '"unterminated', 'a source that does not tokenize is left for the sandbox to report');
    assert.throws(() => rewrite('$if(true)'), /\$if requires at least 2 parameters/);
  });
});

describe("n8n's rule", () => {
  test('a template path resolves its {{ }} without the leading =; other plain strings stay text', async () => {
    const params = {
      html: '<b>{{ $json.name }}</b> {{ $json.tags }} {{ $json.missing }} {{ $json.none }} {{ $json.o }}',
      one: '{{ $json.n }}',
      other: '{{ $json.name }}',
      eq: '={{ $json.name }}',
    };
    const [out] = await engine.resolve(params, data([{ name: 'Ann', tags: ['a', 'b'], none: null, o: { a: 1 }, n: 5 }]), {
      n8n: true,
      templates: ['html', 'one'],
    });
    // Each value as text, as n8n's replace() writes it; a template is text even when it is one expression.
    assert.deepEqual(out, { html: '<b>Ann</b> a,b undefined null [object Object]', one: '5', other: '{{ $json.name }}', eq: 'Ann' });
  });

  test('$now and $today are luxon DateTimes in the workflow time zone (UTC by default)', async () => {
    const params = {
      zone: '={{ $now.zoneName }}',
      now: '={{ $now.toMillis() }}',
      iso: '={{ $now }}',
      today: '={{ $today.toISO() }}',
      kind: '={{ DateTime.isDateTime($today) }}',
    };
    const before = Date.now();
    const [berlin] = await n8n(params, { ...data([{}]), workflow: { id: 'w', name: 'W', active: true, timezone: 'Europe/Berlin' } });
    const after = Date.now();
    assert.equal(berlin!.zone, 'Europe/Berlin');
    assert.ok((berlin!.now as number) >= before && (berlin!.now as number) <= after);
    const expected = DateTime.fromMillis(berlin!.now as number, { zone: 'Europe/Berlin' });
    assert.equal(berlin!.iso, expected.toISO(), 'a DateTime result is its ISO text with the offset');
    assert.equal(berlin!.today, expected.startOf('day').toISO());
    assert.equal(berlin!.kind, true);
    const [utc] = await n8n({ zone: '={{ $now.zoneName }}', text: '=Today: {{ $today }}' });
    assert.equal(utc!.zone, 'UTC');
    assert.match(utc!.text as string, /^Today: \d{4}-\d{2}-\d{2}T00:00:00\.000Z$/);
    await assert.rejects(
      n8n({ v: '={{ $now }}' }, { ...data([{}]), workflow: { id: 'w', name: 'W', active: true, timezone: 'Mars/Olympus' } }),
      /time zone "Mars\/Olympus" is not a time zone/,
    );
  });

  test('text around expressions joins values as n8n does; a whole expression keeps its type', async () => {
    const [out] = await n8n(
      {
        text: '=obj {{ $json.obj }} arr {{ $json.arr }} n {{ null }} z {{ 0 }} f {{ false }} nan {{ 0 / 0 }} d {{ new Date(0) .getTime() }}.',
        whole: '={{ $json.obj }}',
        plain: '=no braces',
      },
      data([{ obj: { a: 1 }, arr: [1, [2, null], 'x'] }]),
    );
    assert.deepEqual(out, { text: 'obj [object Object] arr 1,2,,x n  z 0 f false nan  d 0.', whole: { a: 1 }, plain: 'no braces' });
  });

  test("a JavaScript error inside an expression gives undefined (n8n's rule); n8n's own errors fail the node", async () => {
    const [out] = await n8n({ path: '={{ $json.a.b.c }}', code: '={{ $json.a.b.c + 1 }}', text: '=x{{ $json.a.b }}y', unknown: '={{ nosuchvariable }}' });
    assert.deepEqual(out, { path: null, code: null, text: 'xy', unknown: null });
    await assert.rejects(n8n({ v: "={{ $('Nope').item.json.a }}" }), /No node called "Nope" has run before this one/);
    await assert.rejects(n8n({ v: '={{ $node["Nope"].json.a }}' }), /No node called "Nope" has run before this one/);
    await assert.rejects(n8n({ v: '={{ $json.x * }}' }), /invalid syntax/);
    await assert.rejects(n8n({ v: '={{ "a".toUpperCase }}' }), /this is a function, please add \(\)/);
    await assert.rejects(n8n({ v: '={{ DateTime }}' }), /this is a DateTime, please access its methods/);
  });

  test('$execution.mode is test or production; $workflow is id, name, active', async () => {
    const [manual] = await n8n({ mode: '={{ $execution.mode }}', id: '={{ $execution.id }}', wf: '={{ $workflow }}', name: '={{ $workflow.name }}' });
    assert.deepEqual(manual, { mode: 'test', id: 'exec-1', wf: { id: 'wf-1', name: 'Orders', active: true }, name: 'Orders' });
    const [webhook] = await n8n(
      { mode: '={{ $execution.mode }}', computed: '={{ $execution.mode.toUpperCase() }}' },
      { ...data([{}]), execution: { id: 'e', mode: 'webhook', resumeUrl: '' } },
    );
    assert.deepEqual(webhook, { mode: 'production', computed: 'PRODUCTION' });
  });

  test("the platform's own nodes keep their rule: $now is a Date, objects in text are JSON, errors fail", async () => {
    const [out] = await engine.resolve({ now: '{{ $now.getTime() > 0 }}', text: 'o {{ $json.o }}', ext: '{{ "ab".toTitleCase() }}' }, data([{ o: { a: 1 } }]));
    assert.deepEqual(out, { now: true, text: 'o {"a":1}', ext: 'Ab' });
    await assert.rejects(engine.resolve({ v: '{{ $json.a.b.c }}' }, data([{}])), /Cannot read properties of undefined/);
  });
});

describe('variables', () => {
  const lineage = {
    runIndex: 2,
    // item i of this node came from item 1 - i of "Source"
    pairedItem: (node: string, i: number) => (node === 'Source' ? { json: { n: 10 + (1 - i) } } : undefined),
  };
  const withLineage = (): ExpressionData => ({
    ...data([{}, {}], { Source: [{ n: 10 }, { n: 11 }] }),
    vars: { region: 'eu' },
    prevNode: { name: 'Source', outputIndex: 0, runIndex: 1 },
    lineage,
  });

  test('$vars, $prevNode, $runIndex; $("Node").item and $node by paired item — by plain path and in the sandbox', async () => {
    const before = sandbox.runs;
    const paths = await n8n(
      {
        vars: '={{ $vars.region }}',
        prev: '={{ $prevNode.name }}',
        run: '={{ $runIndex }}',
        item: "={{ $('Source').item.json.n }}",
        legacy: '={{ $node["Source"].json.n }}',
        first: "={{ $('Source').first().json.n }}",
      },
      withLineage(),
    );
    assert.equal(sandbox.runs, before, 'plain paths');
    assert.deepEqual(paths, [
      { vars: 'eu', prev: 'Source', run: 2, item: 11, legacy: 11, first: 10 },
      { vars: 'eu', prev: 'Source', run: 2, item: 10, legacy: 10, first: 10 },
    ]);
    const code = await n8n(
      {
        vars: '={{ $vars.region.toUpperCase() }}',
        prev: '={{ $prevNode.name + $prevNode.outputIndex + $prevNode.runIndex }}',
        run: '={{ $runIndex + 1 }}',
        item: "={{ $('Source').item.json.n + 1 }}",
        legacy: '={{ $node["Source"].json.n + 1 }}',
        executed: "={{ [$('Source').isExecuted, $('Other').isExecuted] }}",
        all: "={{ $('Source').all().length }}",
      },
      withLineage(),
    );
    assert.deepEqual(code, [
      { vars: 'EU', prev: 'Source01', run: 3, item: 12, legacy: 12, executed: [true, false], all: 2 },
      { vars: 'EU', prev: 'Source01', run: 3, item: 11, legacy: 11, executed: [true, false], all: 2 },
    ]);
    const [none] = await n8n({ vars: '={{ $vars }}', run: '={{ $runIndex }}' });
    assert.deepEqual(none, { vars: {}, run: 0 });
  });
});

describe('cost', () => {
  test('luxon and the extensions are loaded only for the expressions that use them', async () => {
    const asked = async (expr: string) => {
      const from = sandbox.preludes.length;
      const [out] = await n8n({ v: `={{ ${expr} }}` }, data([{ a: 1.234, s: 'x', at: '2024-03-30T18:49:00.000Z' }]));
      return [sandbox.preludes.slice(from), out!.v];
    };
    assert.deepEqual(await asked('$json.a'), [[], 1.234], 'a plain path does not reach the sandbox');
    assert.deepEqual(await asked('$json.a * 2'), [['bare'], 2.468]);
    assert.deepEqual(await asked('Math.round($json.a * 100) / 100'), [['bare'], 1.23]);
    assert.deepEqual(await asked('$input.first().json.a + 1'), [['bare'], 2.234]);
    assert.deepEqual(await asked('$json.a.round(2)'), [['extensions'], 1.23]);
    assert.deepEqual(await asked('$ifEmpty($json.s, "-")'), [['extensions'], 'x']);
    assert.deepEqual(await asked('$json.at.toInt()'), [['extensions'], 1711824540000], "a Date's extension that needs no luxon");
    assert.deepEqual(await asked('$json.at.plus(1, "day")'), [['n8n'], '2024-03-31T18:49:00.000Z']);
    assert.deepEqual(await asked('$now.year > 2000'), [['n8n'], true]);
    assert.deepEqual(await asked('DateTime.fromISO("2024-01-01").year'), [['n8n'], 2024]);
  });

  test("one evaluation's prototype changes and globals are not visible to the next", async () => {
    const [first] = await n8n({
      v: '={{ (String.prototype.trim = () => "hacked", Array.prototype.sum = () => -1, DateTime.prototype.toISO = () => "hacked", globalThis.leak = 1, "a".trim()) }}',
    });
    assert.equal(first!.v, 'hacked');
    const [next] = await n8n({
      leak: '={{ typeof leak }}',
      trim: '={{ " a ".trim() }}',
      sum: '={{ [1, 2].sum() }}',
      iso: '={{ DateTime.fromMillis(0, { zone: "UTC" }).toISO() }}',
    });
    assert.deepEqual(next, { leak: 'undefined', trim: 'a', sum: 3, iso: '1970-01-01T00:00:00.000Z' });
  });
});
