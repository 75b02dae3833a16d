import assert from 'node:assert/strict';
import { disposeHarness, runNode, type Json, type NodeUnderTest } from '../../../../../test/support/n8n-harness';
import { failure } from './testing';

/**
 * n8n's filter parameter (conditions.ts), run through Filter 2.2 the way an import runs it: each
 * case gives the operator, the items' values (read by `={{ $json.v }}`) and which n8n keeps.
 */

afterAll(disposeHarness);

const STRICT = { caseSensitive: true, leftValue: '', typeValidation: 'strict', version: 2 };
const LOOSE = { ...STRICT, typeValidation: 'loose' };

interface Case {
  operator: Json;
  rightValue?: unknown;
  options?: Json;
  values: unknown[];
  kept: unknown[];
}

function filterNode(conditions: Json[], options: Json | undefined = STRICT, combinator = 'and', typeVersion = 2.2): NodeUnderTest {
  return { type: 'n8n-nodes-base.filter', typeVersion, parameters: { conditions: { ...(options ? { options } : {}), conditions, combinator } } };
}

/** The values of `v` that Filter keeps. */
async function kept(c: Omit<Case, 'kept'>, settings?: Json): Promise<unknown[]> {
  const node = filterNode([{ leftValue: '={{ $json.v }}', rightValue: c.rightValue ?? '', operator: c.operator }], c.options ?? STRICT);
  const [out] = await runNode(
    node,
    c.values.map((v) => ({ v })),
    { settings },
  );
  return (out ?? []).map((j) => j.v);
}

async function check(cases: Record<string, Case>): Promise<void> {
  for (const [name, c] of Object.entries(cases)) assert.deepEqual(await kept(c), c.kept, name);
}

describe('n8n filter conditions: strings', () => {
  test('every string operation, case-sensitive', async () => {
    const s = (operation: string, rightValue?: unknown, extra: Json = {}) => ({ type: 'string', operation, ...extra, rightValue });
    const values = ['Apple', 'apple pie', 'banana', ''];
    await check({
      equals: { operator: s('equals'), rightValue: 'apple pie', values, kept: ['apple pie'] },
      notEquals: { operator: s('notEquals'), rightValue: 'apple pie', values, kept: ['Apple', 'banana', ''] },
      contains: { operator: s('contains'), rightValue: 'an', values, kept: ['banana'] },
      notContains: { operator: s('notContains'), rightValue: 'pp', values, kept: ['banana', ''] },
      startsWith: { operator: s('startsWith'), rightValue: 'app', values, kept: ['apple pie'] },
      notStartsWith: { operator: s('notStartsWith'), rightValue: 'app', values, kept: ['Apple', 'banana', ''] },
      endsWith: { operator: s('endsWith'), rightValue: 'na', values, kept: ['banana'] },
      notEndsWith: { operator: s('notEndsWith'), rightValue: 'e', values, kept: ['banana', ''] },
      regex: { operator: s('regex'), rightValue: '^[a-z]+$', values, kept: ['banana'] },
      notRegex: { operator: s('notRegex'), rightValue: '/^a/', values, kept: ['Apple', 'banana', ''] },
      empty: { operator: s('empty', undefined, { singleValue: true }), values, kept: [''] },
      notEmpty: { operator: s('notEmpty', undefined, { singleValue: true }), values, kept: ['Apple', 'apple pie', 'banana'] },
    });
  });

  test('ignoring case lower-cases both sides; a regex keeps its pattern and gains the i flag', async () => {
    const options = { ...STRICT, caseSensitive: false };
    const values = ['Apple', 'APPLE', 'pear'];
    await check({
      equals: { operator: { type: 'string', operation: 'equals' }, rightValue: 'aPPle', options, values, kept: ['Apple', 'APPLE'] },
      startsWith: { operator: { type: 'string', operation: 'startsWith' }, rightValue: 'AP', options, values, kept: ['Apple', 'APPLE'] },
      regex: { operator: { type: 'string', operation: 'regex' }, rightValue: '^apple$', options, values, kept: ['Apple', 'APPLE'] },
      'regex written /…/ with flags': { operator: { type: 'string', operation: 'regex' }, rightValue: '/^PEAR$/m', options, values, kept: ['pear'] },
    });
  });

  test('a /…/g pattern matches every item (no state carried from one item to the next)', async () => {
    // n8n's Switch test workflow: /^value$/g on the same value.
    assert.deepEqual(await kept({ operator: { type: 'string', operation: 'regex' }, rightValue: '/^value$/g', values: ['value', 'value', 'other'] }), [
      'value',
      'value',
    ]);
  });

  test('exists and notExists: undefined and null do not exist, an empty string does', async () => {
    const values = ['a', '', null, undefined];
    await check({
      exists: { operator: { type: 'string', operation: 'exists', singleValue: true }, values, kept: ['a', ''] },
      notExists: { operator: { type: 'string', operation: 'notExists', singleValue: true }, values, kept: [null, undefined] },
    });
  });

  test('a missing string compares as an empty one', async () => {
    assert.deepEqual(await kept({ operator: { type: 'string', operation: 'empty', singleValue: true }, values: [undefined, 'x'] }), [undefined]);
  });

  test('an invalid regular expression fails the node with the pattern error', async () => {
    const info = await failure(filterNode([{ leftValue: 'x', rightValue: '(', operator: { type: 'string', operation: 'regex' } }]), [{}]);
    assert.match(info.message, /Invalid regular expression/);
  });
});

describe('n8n filter conditions: numbers, dates, booleans', () => {
  test('every number operation', async () => {
    const n = (operation: string, extra: Json = {}) => ({ type: 'number', operation, ...extra });
    const values = [1, 5, 10];
    await check({
      equals: { operator: n('equals'), rightValue: 5, values, kept: [5] },
      notEquals: { operator: n('notEquals'), rightValue: 5, values, kept: [1, 10] },
      gt: { operator: n('gt'), rightValue: 5, values, kept: [10] },
      lt: { operator: n('lt'), rightValue: 5, values, kept: [1] },
      gte: { operator: n('gte'), rightValue: 5, values, kept: [5, 10] },
      lte: { operator: n('lte'), rightValue: 5, values, kept: [1, 5] },
      empty: { operator: n('empty', { singleValue: true }), values: [1, null, undefined], kept: [null, undefined] },
      notEmpty: { operator: n('notEmpty', { singleValue: true }), values: [1, null, 0], kept: [1, 0] },
    });
  });

  test('every date operation, on ISO strings, dates without time and SQL-style dates', async () => {
    const d = (operation: string) => ({ type: 'dateTime', operation });
    const values = ['2023-10-20T16:45:52.367Z', '2023-10-21', '2023-10-26 08:00:00'];
    await check({
      // n8n's own test workflow: before 2023-10-21.
      before: { operator: d('before'), rightValue: '2023-10-21', values, kept: ['2023-10-20T16:45:52.367Z'] },
      after: { operator: d('after'), rightValue: '2023-10-21', values, kept: ['2023-10-26 08:00:00'] },
      equals: { operator: d('equals'), rightValue: '2023-10-21T00:00:00Z', values, kept: ['2023-10-21'] },
      notEquals: { operator: d('notEquals'), rightValue: '2023-10-21T00:00:00.000Z', values, kept: ['2023-10-20T16:45:52.367Z', '2023-10-26 08:00:00'] },
      afterOrEquals: { operator: d('afterOrEquals'), rightValue: '2023-10-21', values, kept: ['2023-10-21', '2023-10-26 08:00:00'] },
      beforeOrEquals: { operator: d('beforeOrEquals'), rightValue: '2023-10-21', values, kept: ['2023-10-20T16:45:52.367Z', '2023-10-21'] },
      'missing date': { operator: d('before'), rightValue: '2030-01-01', values: [null, '2023-01-01'], kept: ['2023-01-01'] },
    });
  });

  test("a date without an offset is read in the workflow's time zone", async () => {
    const c = { operator: { type: 'dateTime', operation: 'before' }, rightValue: '2024-01-01T00:30:00Z', values: ['2024-01-01T01:00:00'] };
    assert.deepEqual(await kept(c), []);
    assert.deepEqual(await kept(c, { timezone: 'Europe/Berlin' }), ['2024-01-01T01:00:00']);
  });

  test('every boolean operation', async () => {
    const b = (operation: string, extra: Json = {}) => ({ type: 'boolean', operation, ...extra });
    const values = [true, false];
    await check({
      true: { operator: b('true', { singleValue: true }), values, kept: [true] },
      false: { operator: b('false', { singleValue: true }), values, kept: [false] },
      equals: { operator: b('equals'), rightValue: false, values, kept: [false] },
      notEquals: { operator: b('notEquals'), rightValue: false, values, kept: [true] },
      empty: { operator: b('empty', { singleValue: true }), values: [true, null], kept: [null] },
      notEmpty: { operator: b('notEmpty', { singleValue: true }), values: [false, null], kept: [false] },
    });
  });

  test('loose booleans: "false" and 0 are false from filter version 2; version 1 took any non-empty value as true', async () => {
    const operator = { type: 'boolean', operation: 'true', singleValue: true };
    const values = ['true', 'false', 'FALSE', 1, 0, 'yes'];
    assert.deepEqual(await kept({ operator, options: LOOSE, values }), ['true', 1, 'yes']);
    assert.deepEqual(await kept({ operator, options: { ...LOOSE, version: 1 }, values }), ['true', 'false', 'FALSE', 1, 'yes']);
  });
});

describe('n8n filter conditions: arrays and objects', () => {
  test('every array operation; the right value of a length comparison is a number', async () => {
    const a = (operation: string, extra: Json = {}) => ({ type: 'array', operation, ...extra });
    const values = [[], ['x'], ['x', 'Y', 'z']];
    await check({
      contains: { operator: a('contains', { rightType: 'any' }), rightValue: 'x', values, kept: [['x'], ['x', 'Y', 'z']] },
      notContains: { operator: a('notContains', { rightType: 'any' }), rightValue: 'x', values, kept: [[]] },
      lengthEquals: { operator: a('lengthEquals', { rightType: 'number' }), rightValue: 1, values, kept: [['x']] },
      lengthNotEquals: { operator: a('lengthNotEquals', { rightType: 'number' }), rightValue: 1, values, kept: [[], ['x', 'Y', 'z']] },
      lengthGt: { operator: a('lengthGt', { rightType: 'number' }), rightValue: 1, values, kept: [['x', 'Y', 'z']] },
      lengthLt: { operator: a('lengthLt', { rightType: 'number' }), rightValue: 1, values, kept: [[]] },
      lengthGte: { operator: a('lengthGte', { rightType: 'number' }), rightValue: 1, values, kept: [['x'], ['x', 'Y', 'z']] },
      lengthLte: { operator: a('lengthLte', { rightType: 'number' }), rightValue: 1, values, kept: [[], ['x']] },
      empty: { operator: a('empty', { singleValue: true }), values: [[], ['x'], undefined], kept: [[], undefined] },
      notEmpty: { operator: a('notEmpty', { singleValue: true }), values: [[], ['x']], kept: [['x']] },
    });
  });

  test('array contains ignores the case of strings when case is ignored', async () => {
    const options = { ...STRICT, caseSensitive: false };
    const c = { operator: { type: 'array', operation: 'contains', rightType: 'any' }, rightValue: 'y', options, values: [['x', 'Y'], ['x']] };
    assert.deepEqual(await kept(c), [['x', 'Y']]);
  });

  test('object empty and notEmpty', async () => {
    const o = (operation: string) => ({ type: 'object', operation, singleValue: true });
    await check({
      empty: { operator: o('empty'), values: [{}, { a: 1 }, null], kept: [{}, null] },
      notEmpty: { operator: o('notEmpty'), values: [{}, { a: 1 }], kept: [{ a: 1 }] },
    });
  });
});

describe('n8n filter conditions: type validation', () => {
  test("strict: a value of the wrong type fails with n8n's message naming condition and item", async () => {
    const node = filterNode([
      { leftValue: 'x', rightValue: 'x', operator: { type: 'string', operation: 'equals' } },
      { leftValue: '={{ $json.n }}', rightValue: 3, operator: { type: 'number', operation: 'gt' } },
    ]);
    const info = await failure(node, [{ n: 5 }, { n: '7' }]);
    assert.equal(info.message, `Node "Node" failed: Wrong type: '7' is a string but was expecting a number [condition 1, item 1]`);
    assert.equal(info.details.itemIndex, 1);
    assert.match(String(info.details.description), /Convert types where required/);
  });

  test('strict: both values of the same wrong type', async () => {
    const node = filterNode([{ leftValue: 'a', rightValue: 'b', operator: { type: 'number', operation: 'equals' } }]);
    const info = await failure(node, [{}]);
    assert.equal(info.message, 'Node "Node" failed: Comparison type expects a number but both fields are a string');
  });

  test('strict: the right value of a single-value operation is not checked', async () => {
    assert.deepEqual(await kept({ operator: { type: 'number', operation: 'exists', singleValue: true }, rightValue: 'ignored', values: [1] }), [1]);
  });

  test('strict: an object is not a string', async () => {
    const info = await failure(filterNode([{ leftValue: '={{ $json.o }}', rightValue: 'x', operator: { type: 'string', operation: 'equals' } }]), [
      { o: { a: 1 } },
    ]);
    assert.equal(info.message, 'Node "Node" failed: Wrong type: \'[object Object]\' is an object but was expecting a string [condition 0, item 0]');
  });

  test('loose: values are converted as n8n converts them', async () => {
    await check({
      'number from string': { operator: { type: 'number', operation: 'gt' }, rightValue: '4', options: LOOSE, values: ['5', ' 12 ', 3], kept: ['5', ' 12 '] },
      'string from number and object': {
        operator: { type: 'string', operation: 'contains' },
        rightValue: 1,
        options: LOOSE,
        values: [10, { a: 1 }, 'x'],
        kept: [10, { a: 1 }],
      },
      'array from JSON text': {
        operator: { type: 'array', operation: 'contains', rightType: 'any' },
        rightValue: 'b',
        options: LOOSE,
        values: ['["a","b"]', "['b']", '[]'],
        kept: ['["a","b"]', "['b']"],
      },
      'object from JSON and JavaScript text': {
        operator: { type: 'object', operation: 'notEmpty', singleValue: true },
        options: LOOSE,
        values: ['{"a":1}', "{b: 'x',}", '{}'],
        kept: ['{"a":1}', "{b: 'x',}"],
      },
      'empty string as number 0 (filter versions below 3)': {
        operator: { type: 'number', operation: 'equals' },
        rightValue: 0,
        options: LOOSE,
        values: ['', '5'],
        kept: [''],
      },
    });
  });

  test("loose: a value that cannot be converted fails with n8n's conversion message", async () => {
    const node = filterNode([{ leftValue: '={{ $json.v }}', rightValue: 1, operator: { type: 'number', operation: 'equals' } }], LOOSE);
    const info = await failure(node, [{ v: 'abc' }]);
    assert.equal(info.message, "Node \"Node\" failed: Conversion error: the string 'abc' can't be converted to a number [condition 0, item 0]");
    assert.equal(info.details.description, 'Try changing the type of the comparison.');
  });

  test('without stored typeValidation the runtime reads loose (as n8n: only "strict" is strict)', async () => {
    assert.deepEqual(
      await kept({ operator: { type: 'number', operation: 'equals' }, rightValue: '1', options: { caseSensitive: true }, values: [1, '2'] }),
      [1],
    );
  });
});

describe('n8n filter conditions: combining', () => {
  const conds = [
    { leftValue: '={{ $json.a }}', rightValue: 1, operator: { type: 'number', operation: 'equals' } },
    { leftValue: '={{ $json.b }}', rightValue: 'x', operator: { type: 'string', operation: 'equals' } },
  ];
  const items = [
    { a: 1, b: 'x' },
    { a: 1, b: 'y' },
    { a: 2, b: 'x' },
    { a: 2, b: 'y' },
  ];

  test('and keeps the items meeting every condition, or those meeting one', async () => {
    assert.deepEqual((await runNode(filterNode(conds, STRICT, 'and'), items))[0], [{ a: 1, b: 'x' }]);
    assert.deepEqual((await runNode(filterNode(conds, STRICT, 'or'), items))[0], [
      { a: 1, b: 'x' },
      { a: 1, b: 'y' },
      { a: 2, b: 'x' },
    ]);
  });

  test('and stops at the first failing condition: a later wrong type is not reached', async () => {
    const later = [conds[0]!, { leftValue: 'text', rightValue: 1, operator: { type: 'number', operation: 'equals' } }];
    assert.deepEqual((await runNode(filterNode(later, STRICT, 'and'), [{ a: 2 }]))[0], []);
  });

  test('an unknown operation or combinator lets nothing pass, as in n8n', async () => {
    assert.deepEqual(await kept({ operator: { type: 'string', operation: 'like' }, rightValue: 'a', values: ['a'] }), []);
    assert.deepEqual((await runNode(filterNode(conds, STRICT, 'xor'), items))[0], []);
  });

  test("without stored options the filter takes what n8n's editor derives from the node: strict unless looseTypeValidation", async () => {
    const node = (params: Json): NodeUnderTest => ({
      type: 'n8n-nodes-base.filter',
      typeVersion: 2.2,
      parameters: {
        conditions: { conditions: [{ leftValue: '={{ $json.v }}', rightValue: 1, operator: { type: 'number', operation: 'equals' } }], combinator: 'and' },
        ...params,
      },
    });
    await failure(node({}), [{ v: '1' }]);
    assert.deepEqual((await runNode(node({ looseTypeValidation: true }), [{ v: '1' }, { v: 2 }]))[0], [{ v: '1' }]);
  });
});
