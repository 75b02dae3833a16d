import assert from 'node:assert/strict';
import { disposeHarness, importRefusal } from '../../../../../../test/support/n8n-harness';
import { assertItems, assignments, expectedOf, failureOf, LOOSE_CASES, runSet, setNode, STRICT_CASES, TYPED_INPUT } from '../testing';

afterAll(disposeHarness);

/** Set 3.3+ assignments from [name, type, value]. */
const assign = (...list: [string, string, unknown][]) => ({
  assignments: { assignments: list.map(([name, type, value], i) => ({ id: `id-${i}`, name, value, type })) },
});

describe('n8n Set 3.3 and 3.4: assignments and type conversion', () => {
  for (const version of [3.3, 3.4]) {
    for (const [label, cases] of Object.entries(STRICT_CASES)) {
      test(`${version}: ${label}, as n8n's test workflow (other input fields not included by default)`, async () => {
        const out = await runSet(version, { assignments: assignments(cases), options: {} }, [TYPED_INPUT]);
        assertItems(out, [expectedOf(cases)]);
      });
    }
  }

  for (const [label, cases] of Object.entries(LOOSE_CASES)) {
    test(`3.3: ${label} with ignoreConversionErrors keeps what does not convert`, async () => {
      const out = await runSet(3.3, { assignments: assignments(cases), options: { ignoreConversionErrors: true } }, [TYPED_INPUT]);
      assertItems(out, [expectedOf(cases)]);
    });
  }

  test("a value that does not convert fails with n8n's message", async () => {
    const failure = await failureOf(runSet(3.4, assign(['ok', 'boolean', 'yes']), [{}]));
    assert.equal(failure.message, "'ok' expects a boolean but we got 'yes' [item 0]");
    const object = await failureOf(runSet(3.3, assign(['o', 'object', '={{ $json.list }}']), [{ list: [1] }]));
    assert.equal(object.message, "'o' expects a object but we got array [item 0]");
  });

  test('values that are null or undefined become null, whatever the type', async () => {
    const out = await runSet(3.4, assign(['s', 'string', '={{ $json.none }}'], ['n', 'number', null], ['o', 'object', '={{ $json.gone }}']), [{ none: null }]);
    assertItems(out, [{ s: null, n: null, o: null }]);
  });

  test('numbers read as n8n reads them: blank text is 0, hex and exponents count, a comma does not', async () => {
    const out = await runSet(3.4, assign(['blank', 'number', ' '], ['hex', 'number', '0x1F'], ['exp', 'number', '1e3'], ['num', 'number', 7]), [{}]);
    assertItems(out, [{ blank: 0, hex: 31, exp: 1000, num: 7 }]);
    const failure = await failureOf(runSet(3.4, assign(['comma', 'number', '3,14']), [{}]));
    assert.equal(failure.message, "'comma' expects a number but we got '3,14' [item 0]");
  });

  test('objects read from JSON, a JavaScript object literal, or the text null', async () => {
    const out = await runSet(3.4, assign(['json', 'object', '{"a": [1]}'], ['js', 'object', "{ b: 'two', c: [3,], }"], ['none', 'object', 'null']), [{}]);
    assertItems(out, [{ json: { a: [1] }, js: { b: 'two', c: [3] }, none: null }]);
  });

  test('arrays read from JSON, with single quotes accepted', async () => {
    assertItems(await runSet(3.3, assign(['a', 'array', "['x', 'y']"]), [{}]), [{ a: ['x', 'y'] }]);
  });

  test('a type n8n does not know passes the value through unchanged', async () => {
    assertItems(await runSet(3.4, assign(['v', 'custom', '12']), [{}]), [{ v: '12' }]);
  });

  test('a repeated name keeps its first place and its last value; dotted names are paths', async () => {
    const out = await runSet(3.4, assign(['x', 'string', 'first'], ['a.b', 'number', '1'], ['x', 'string', 'last']), [{}]);
    assertItems(out, [{ x: 'last', a: { b: 1 } }]);
    const flat = await runSet(3.4, { ...assign(['a.b', 'number', '1']), options: { dotNotation: false } }, [{}]);
    assertItems(flat, [{ 'a.b': 1 }]);
  });
});

describe('n8n Set 3.3 and 3.4: other input fields', () => {
  const input = { a: 1, b: { c: 2, d: 3 }, e: 'x' };
  const set = assign(['a', 'number', '10'], ['new', 'string', 'n']);

  test('includeOtherFields false (the default) ignores include', async () => {
    assertItems(await runSet(3.3, { ...set, include: 'all' }, [input]), [{ a: 10, new: 'n' }]);
  });

  test('includeOtherFields with include all (the default)', async () => {
    assertItems(await runSet(3.4, { ...set, includeOtherFields: true }, [input]), [{ a: 10, b: { c: 2, d: 3 }, e: 'x', new: 'n' }]);
  });

  test('includeOtherFields with selected fields', async () => {
    const out = await runSet(3.4, { ...set, includeOtherFields: true, include: 'selected', includeFields: 'b.d, e' }, [input]);
    assertItems(out, [{ d: 3, e: 'x', a: 10, new: 'n' }]);
  });

  test('includeOtherFields with all except', async () => {
    const out = await runSet(3.3, { ...set, includeOtherFields: true, include: 'except', excludeFields: 'b' }, [input]);
    assertItems(out, [{ a: 10, e: 'x', new: 'n' }]);
  });

  test('3.3 includeBinary and 3.4 stripBinary are accepted and have nothing to act on', async () => {
    const expected = [{ a: 10, b: { c: 2, d: 3 }, e: 'x', new: 'n' }];
    assertItems(await runSet(3.3, { ...set, includeOtherFields: true, options: { includeBinary: true } }, [input]), expected);
    assertItems(await runSet(3.4, { ...set, includeOtherFields: true, options: { stripBinary: false } }, [input]), expected);
  });
});

describe('n8n Set 3.3 and 3.4: failures and refusals', () => {
  test('with continue on failure, an item whose expression fails becomes an error item; the others run', async () => {
    // n8n's own expression errors fail (a JavaScript error inside {{ }} gives undefined, as in n8n).
    const out = await runSet(3.4, assign(['v', 'string', "={{ $json.a ? $json.a.b : $('Nowhere').item.json.x }}"]), [{ a: { b: 'ok' } }, {}], {
      onError: 'continueRegularOutput',
    });
    assert.equal(out.length, 2);
    assertItems([out[0]!], [{ v: 'ok' }]);
    assert.match(String(out[1]!.error), /Nowhere/);
    assert.deepEqual(out[1]!.pairedItem, { item: 1 });
  });

  test('a binary field is refused at import: binary data does not exist here', () => {
    const refusal = importRefusal(setNode(3.4, assign(['file', 'binary', 'data'])));
    assert.equal(refusal?.reason, 'unsupported_option');
    assert.equal(refusal?.option, 'field type binary');
    assert.match(refusal!.message, /"file" has the type binary: .*binary item data/);
  });

  test('other types n8n validates but this engine does not implement are refused at import', () => {
    for (const type of ['dateTime', 'time', 'url', 'jwt', 'options']) {
      assert.equal(importRefusal(setNode(3.3, assign(['f', type, 'x'])))?.option, `field type ${type}`, type);
    }
  });

  test('in JSON mode, leftover assignments are not checked (they do not run)', () => {
    assert.equal(importRefusal(setNode(3.4, { mode: 'raw', jsonOutput: '{}', ...assign(['file', 'binary', 'data']) })), undefined);
  });
});
