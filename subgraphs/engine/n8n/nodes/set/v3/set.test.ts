import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runItems, runWorkflow } from '../../../../../../test/support/n8n-harness';
import { assertItems, expectedOf, failureOf, listedFields, LOOSE_CASES, runSet, setNode, STRICT_CASES, TYPED_INPUT } from '../testing';

afterAll(disposeHarness);

/** A 3.0–3.2 manual mapping of `values` fields. */
const fields = (...values: Record<string, unknown>[]) => ({ fields: { values } });

describe('n8n Set 3.0–3.2: manual mapping and type conversion', () => {
  for (const [label, cases] of Object.entries(STRICT_CASES)) {
    test(`3.0: ${label}, as n8n's test workflow`, async () => {
      const out = await runSet(3, { fields: listedFields(cases), include: 'none', options: {} }, [TYPED_INPUT]);
      assertItems(out, [expectedOf(cases)]);
    });
  }

  for (const [label, cases] of Object.entries(LOOSE_CASES)) {
    test(`3.1: ${label} with ignoreConversionErrors keeps what does not convert`, async () => {
      const out = await runSet(3.1, { fields: listedFields(cases), include: 'none', options: { ignoreConversionErrors: true } }, [TYPED_INPUT]);
      assertItems(out, [expectedOf(cases)]);
    });
  }

  test("a value that does not convert fails with n8n's message for its item", async () => {
    const params = { ...fields({ name: 'count', type: 'numberValue', numberValue: '={{ $json.n }}' }), include: 'none' };
    const failure = await failureOf(runSet(3.2, params, [{ n: '4' }, { n: 'four' }]));
    assert.equal(failure.message, "'count' expects a number but we got 'four' [item 1]");
    assert.match(String(failure.details.description), /change the type for the field "count" or activate the option “Ignore Type Conversion Errors”/);
    const array = await failureOf(runSet(3, { ...fields({ name: 'list', type: 'arrayValue', arrayValue: 'a, b' }), include: 'none' }, [{}]));
    assert.equal(array.message, "'list' expects a array but we got 'a, b' [item 0]");
    const bool = await failureOf(
      runSet(3, { ...fields({ name: 'flag', type: 'booleanValue', booleanValue: '={{ $json.v }}' }), include: 'none' }, [{ v: [1, 2] }]),
    );
    assert.equal(bool.message, "'flag' expects a boolean but we got array [item 0]");
  });

  test('unstored types and values take n8n defaults: string, "" (0), "true", "" and {}', async () => {
    const params = {
      ...fields({ name: 'text' }, { name: 'n', type: 'numberValue' }, { name: 'b', type: 'booleanValue' }, { name: 'o', type: 'objectValue' }),
      include: 'none',
    };
    assertItems(await runSet(3, params, [{}]), [{ text: '', n: 0, b: true, o: {} }]);
    const failure = await failureOf(runSet(3, { ...fields({ name: 'a', type: 'arrayValue' }), include: 'none' }, [{}]));
    assert.equal(failure.message, "'a' expects a array but we got '' [item 0]");
  });

  test('null and undefined: 3.0 writes text, 3.1 refuses a string field (or null when ignoring errors), 3.2 writes null', async () => {
    const strings = {
      ...fields({ name: 's', stringValue: '={{ null }}' }, { name: 'n', type: 'numberValue', numberValue: '={{ $json.none }}' }),
      include: 'none',
    };
    assertItems(await runSet(3, strings, [{ none: null }]), [{ s: 'null', n: null }]);
    const failure = await failureOf(runSet(3.1, strings, [{ none: null }]));
    assert.equal(failure.message, "'s' expects a string but we got 'null' [item 0]");
    assertItems(await runSet(3.1, { ...strings, options: { ignoreConversionErrors: true } }, [{ none: null }]), [{ s: null, n: null }]);
    const all = ['string', 'number', 'boolean', 'array', 'object'].map((t) => ({ name: t, type: `${t}Value`, [`${t}Value`]: '={{ null }}' }));
    assertItems(await runSet(3.2, { ...fields(...all), include: 'none' }, [{}]), [{ string: null, number: null, boolean: null, array: null, object: null }]);
  });

  test('an object field given as an expression is the JSON of its text, repaired as n8n does', async () => {
    const params = {
      ...fields(
        {
          name: 'made',
          type: 'objectValue',
          objectValue: '={ "n": {{ $json.n }}, "s": "{{ $json.s }}", "list": {{ JSON.stringify($json.list) }}, "o": "{{ $json.obj }}" }',
        },
        { name: 'repaired', type: 'objectValue', objectValue: "={ key: 'v', }" },
        { name: 'whole', type: 'objectValue', objectValue: '={{ $json.obj }}' },
      ),
      include: 'none',
    };
    const out = await runSet(3, params, [{ n: 3, s: 'x', list: [1, 'a'], obj: { k: [true] } }]);
    // Inside text an object renders as n8n's template joins it ([object Object]), not as JSON.
    assertItems(out, [{ made: { n: 3, s: 'x', list: [1, 'a'], o: '[object Object]' }, repaired: { key: 'v' }, whole: { k: [true] } }]);
  });

  test('an object expression that is not a JSON object fails, naming the field', async () => {
    const invalid = await failureOf(runSet(3, { ...fields({ name: 'o', type: 'objectValue', objectValue: '={ "a": }' }), include: 'none' }, [{}]));
    assert.equal(invalid.message, `The entry "o" inside 'Fields to Set' in item 0 contains invalid JSON`);
    const array = await failureOf(runSet(3.2, { ...fields({ name: 'o', type: 'objectValue', objectValue: '=[1, {{ 2 }}]' }), include: 'none' }, [{}]));
    assert.equal(array.message, `The entry "o" inside 'Fields to Set' in item 0 does not contain a valid JSON object`);
  });

  test('an object field given as text reads JSON or a JavaScript object literal', async () => {
    const literal = "{a: 1, 'b': [1, 2,], c: undefined, d: -2, /* note */ e, [f]: 0x10, g: `t`,}";
    const params = {
      ...fields({ name: 'js', type: 'objectValue', objectValue: literal }, { name: 'json', type: 'objectValue', objectValue: '{"x": null}' }),
      include: 'none',
    };
    assertItems(await runSet(3.1, params, [{}]), [{ js: { a: 1, b: [1, 2], c: 'undefined', d: -2, e: 'e', f: 16 }, json: { x: null } }]);
    const failure = await failureOf(runSet(3.1, { ...fields({ name: 'o', type: 'objectValue', objectValue: '{a: 1} + 1' }), include: 'none' }, [{}]));
    assert.equal(failure.message, "'o' expects a object but we got '{a: 1} + 1' [item 0]");
  });

  test('fields are written in the order of their names as object keys: integer-like names first, a repeated name once', async () => {
    const params = {
      ...fields({ name: 'b', stringValue: '1' }, { name: '2', stringValue: '2' }, { name: 'a', stringValue: '3' }, { name: 'b', stringValue: '4' }),
      include: 'none',
    };
    assertItems(await runSet(3, params, [{}]), [{ '2': '2', b: '4', a: '3' }]);
  });

  test('a field type n8n validates but this engine does not implement is refused at import', () => {
    const refusal = importRefusal(setNode(3.1, fields({ name: 'when', type: 'dateTimeValue', dateTimeValue: '2024-01-01' })));
    assert.equal(refusal?.reason, 'unsupported_option');
    assert.equal(refusal?.option, 'field type dateTime');
    assert.match(refusal!.message, /"when" has the type dateTime: .*Luxon/);
  });
});

describe('n8n Set 3.0–3.2: include', () => {
  const input = { a: 1, b: { c: 2, d: 3 }, e: 'x' };
  const set = fields({ name: 'a', type: 'numberValue', numberValue: 10 }, { name: 'new', stringValue: 'n' });

  test('all (the default): the input fields, a set field in its place, new fields after', async () => {
    assertItems(await runSet(3, set, [input]), [{ a: 10, b: { c: 2, d: 3 }, e: 'x', new: 'n' }]);
  });

  test('none: only the set fields', async () => {
    assertItems(await runSet(3.1, { ...set, include: 'none' }, [input]), [{ a: 10, new: 'n' }]);
  });

  test('selected: the listed fields first (a dotted one under its last key), then the set fields', async () => {
    const out = await runSet(3.2, { ...set, include: 'selected', includeFields: 'e, b.c,missing' }, [input]);
    assertItems(out, [{ e: 'x', c: 2, a: 10, new: 'n' }]);
  });

  test('except: all input fields but the listed ones, dotted paths included', async () => {
    const out = await runSet(3.2, { ...set, include: 'except', excludeFields: 'b.d, e' }, [input]);
    assertItems(out, [{ a: 10, b: { c: 2 }, new: 'n' }]);
  });

  test('without dot notation names are keys; ["a.b"] means the key a.b', async () => {
    const params = { ...fields({ name: 'x.y', stringValue: 'v' }), include: 'selected', includeFields: '["a.b"], b.c', options: { dotNotation: false } };
    const out = await runSet(3.2, params, [{ 'a.b': 1, b: { c: 2 }, 'b.c': 3 }]);
    assertItems(out, [{ 'a.b': 1, 'b.c': 3, 'x.y': 'v' }]);
  });

  test("an unknown include option fails with n8n's message", async () => {
    const failure = await failureOf(runSet(3, { ...set, include: 'some' }, [input]));
    assert.equal(failure.message, 'The include option "some" is not known!');
  });

  test('includeBinary is accepted and has nothing to act on', async () => {
    assertItems(await runSet(3.2, { ...set, include: 'none', options: { includeBinary: false } }, [input]), [{ a: 10, new: 'n' }]);
  });
});

describe('n8n Set 3.x: JSON mode (raw)', () => {
  test('the JSON is written onto the item; dotted keys are paths unless dotNotation is false', async () => {
    const params = { mode: 'raw', jsonOutput: '{ "a.b": 1, "c": [true] }', include: 'all' };
    assertItems(await runSet(3, params, [{ x: 0, a: { z: 9 } }]), [{ x: 0, a: { z: 9, b: 1 }, c: [true] }]);
    assertItems(await runSet(3, { ...params, options: { dotNotation: false } }, [{ x: 0 }]), [{ x: 0, 'a.b': 1, c: [true] }]);
  });

  test('expressions inside the JSON are resolved for each item', async () => {
    const params = { mode: 'raw', jsonOutput: '={ "name": "{{ $json.first }} {{ $json.last }}", "tags": {{ $json.tags.toJsonString() }} }', include: 'none' };
    const out = await runSet(3.2, params, [
      { first: 'Ada', last: 'L', tags: ['x'] },
      { first: 'Bo', last: 'M', tags: [] },
    ]);
    assertItems(out, [
      { name: 'Ada L', tags: ['x'] },
      { name: 'Bo M', tags: [] },
    ]);
  });

  test("n8n's default JSON when the node stores none; repaired JSON", async () => {
    assertItems(await runSet(3, { mode: 'raw', include: 'none' }, [{}]), [{ my_field_1: 'value', my_field_2: 1 }]);
    assertItems(await runSet(3.1, { mode: 'raw', jsonOutput: "{ name: 'x', list: [1, 2,], }", include: 'none' }, [{}]), [{ name: 'x', list: [1, 2] }]);
  });

  test("JSON that is invalid, not an object, or null fails with n8n's messages", async () => {
    const invalid = await failureOf(runSet(3, { mode: 'raw', jsonOutput: '{ "a": 1,, }' }, [{}]));
    assert.equal(invalid.message, "The 'JSON Output' in item 0 contains invalid JSON");
    const list = await failureOf(runSet(3, { mode: 'raw', jsonOutput: '=[{{ 1 }}]' }, [{}]));
    assert.equal(list.message, "The 'JSON Output' in item 0 does not contain a valid JSON object");
    const empty = await failureOf(runSet(3, { mode: 'raw', jsonOutput: 'null' }, [{}]));
    assert.equal(empty.message, 'Cannot convert undefined or null to object');
  });
});

describe('n8n Set 3.x: node settings', () => {
  test("continuing on failure makes an error item for the failing item only (n8n's shapes per mode)", async () => {
    const manual = { ...fields({ name: 'n', type: 'numberValue', numberValue: '={{ $json.v }}' }), include: 'none' };
    const out = await runSet(3.2, manual, [{ v: '1' }, { v: 'x' }], { onError: 'continueRegularOutput' });
    assertItems(out, [{ n: 1 }, { error: "'n' expects a number but we got 'x' [item 1]", pairedItem: { item: 1 } }]);
    const raw = { mode: 'raw', jsonOutput: '={{ $json.j }}', include: 'none' };
    const rawOut = await runSet(3, raw, [{ j: 'nope' }, { j: '{"ok": 1}' }], { onError: 'continueRegularOutput' });
    assertItems(rawOut, [{ error: "The 'JSON Output' in item 0 contains invalid JSON" }, { ok: 1 }]);
  });

  test('Duplicate Item repeats each item in manual runs only', async () => {
    const params = { ...fields({ name: 'a', stringValue: '=x{{ $json.i }}' }), include: 'none', duplicateItem: true, duplicateCount: 2 };
    assertItems(await runSet(3.1, params, [{ i: 1 }, { i: 2 }]), [{ a: 'x1' }, { a: 'x1' }, { a: 'x1' }, { a: 'x2' }, { a: 'x2' }, { a: 'x2' }]);
    const workflow = {
      nodes: [
        { name: 'Input', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 0], parameters: {} },
        { name: 'Set', position: [200, 0], ...setNode(3.1, params) },
      ],
      connections: { Input: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
    };
    const run = await runWorkflow(workflow, { pinned: { Input: [[{ i: 1 }]] }, mode: 'webhook' });
    assertItems(run.nodes.get('Set')![0], [{ a: 'x1' }]);
  });
});

describe('n8n Set 3: the input item files', () => {
  const file = { data: Buffer.from('a,b').toString('base64'), mimeType: 'text/csv', fileName: 'rows.csv' };
  const assignments = { assignments: { assignments: [{ name: 'n', value: 1, type: 'number' }] } };
  const filesOf = async (version: number, parameters: Record<string, unknown>) =>
    (await runItems(setNode(version, parameters), [{ json: { k: 'v' }, binary: { data: file } }]))[0]!.map((i) => Object.keys(i.binary ?? {}));

  test('before 3.4 they pass on only with includeBinary', async () => {
    assert.deepEqual(await filesOf(3.3, { ...assignments, options: {} }), [[]]);
    assert.deepEqual(await filesOf(3.3, { ...assignments, options: { includeBinary: true } }), [['data']]);
  });

  test('from 3.4 they pass on unless stripBinary is set or no input field is kept', async () => {
    assert.deepEqual(await filesOf(3.4, { ...assignments, includeOtherFields: true, options: {} }), [['data']]);
    assert.deepEqual(await filesOf(3.4, { ...assignments, includeOtherFields: true, options: { stripBinary: true } }), [[]]);
    assert.deepEqual(await filesOf(3.4, { ...assignments, options: {} }), [[]]);
  });
});
