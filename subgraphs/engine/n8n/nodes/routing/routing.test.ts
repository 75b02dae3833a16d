import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runNode, type Json, type NodeUnderTest } from '../../../../../test/support/n8n-harness';
import { connectionRefusal, failure } from './testing';

afterAll(disposeHarness);

/** n8n's If and Filter (routing.ts): outputs as n8n produces them, per version. */

const ifV1 = (parameters: Json): NodeUnderTest => ({ type: 'n8n-nodes-base.if', typeVersion: 1, parameters });

describe('n8n If 1', () => {
  const items = [
    { n: 1, s: 'apple', b: true },
    { n: 5, s: 'Banana', b: false },
    { n: 12, s: 'kiwi', b: true },
  ];

  test('conditions of every type, all of them (the default) or any', async () => {
    const conditions = {
      number: [{ value1: '={{ $json.n }}', operation: 'larger', value2: 2 }],
      string: [{ value1: '={{ $json.s }}', operation: 'notContains', value2: 'w' }],
      boolean: [{ value1: '={{ $json.b }}', value2: true }],
    };
    assert.deepEqual(await runNode(ifV1({ conditions }), items), [[], items]);
    assert.deepEqual(await runNode(ifV1({ conditions, combineOperation: 'any' }), items), [items, []]);
    const some = { number: conditions.number, string: conditions.string };
    assert.deepEqual(await runNode(ifV1({ conditions: some }), items), [[items[1]], [items[0], items[2]]]);
  });

  test("operations and values left out of an export take n8n's defaults (number: smaller than 0)", async () => {
    assert.deepEqual(await runNode(ifV1({ conditions: { number: [{ value1: '={{ $json.n }}' }] } }), [{ n: -1 }, { n: 0 }]), [[{ n: -1 }], [{ n: 0 }]]);
  });

  test('values are compared as they are: equal is ===, larger on missing values compares 0', async () => {
    const equal = { number: [{ value1: '={{ $json.n }}', operation: 'equal', value2: 5 }] };
    assert.deepEqual(await runNode(ifV1({ conditions: equal }), [{ n: '5' }, { n: 5 }]), [[{ n: 5 }], [{ n: '5' }]]);
    const larger = { number: [{ value1: '={{ $json.missing }}', operation: 'larger', value2: -1 }] };
    assert.deepEqual(await runNode(ifV1({ conditions: larger }), [{}]), [[{}], []]);
  });

  test('string operations, regex with flags, emptiness of objects', async () => {
    const run = (condition: Json, values: unknown[]) =>
      runNode(
        ifV1({ conditions: { string: [{ value1: '={{ $json.v }}', ...condition }] } }),
        values.map((v) => ({ v })),
      );
    assert.deepEqual(await run({ operation: 'regex', value2: '/^b/i' }, ['Banana', 'apple']), [[{ v: 'Banana' }], [{ v: 'apple' }]]);
    assert.deepEqual(await run({ operation: 'notRegex', value2: 'an' }, ['Banana', 'kiwi']), [[{ v: 'kiwi' }], [{ v: 'Banana' }]]);
    assert.deepEqual(await run({ operation: 'startsWith', value2: 'ki' }, ['kiwi', 'Kiwi']), [[{ v: 'kiwi' }], [{ v: 'Kiwi' }]]);
    assert.deepEqual(await run({ operation: 'endsWith', value2: 'wi' }, ['kiwi', 'wiki']), [[{ v: 'kiwi' }], [{ v: 'wiki' }]]);
    assert.deepEqual(await run({ operation: 'isEmpty' }, ['', {}, [], 'x', 0]), [
      [{ v: '' }, { v: {} }, { v: [] }],
      [{ v: 'x' }, { v: 0 }],
    ]);
    assert.deepEqual(await run({ operation: 'isNotEmpty' }, [null, 'x']), [[{ v: 'x' }], [{ v: null }]]);
  });

  test('startsWith on a value that is not a string fails the node', async () => {
    const info = await failure(ifV1({ conditions: { string: [{ value1: '={{ $json.v }}', operation: 'startsWith', value2: '1' }] } }), [{ v: 12 }]);
    assert.match(info.message, /startsWith.*needs a string as value 1, not number/);
  });

  test('dates: after / before on strings and timestamps; a value that is no date fails the node', async () => {
    const dates = { dateTime: [{ value1: '={{ $json.d }}', operation: 'before', value2: '2023-10-21' }] };
    const items2 = [{ d: '2023-10-20T16:45:52.367Z' }, { d: 1700000000000 }];
    assert.deepEqual(await runNode(ifV1({ conditions: dates }), items2), [[items2[0]], [items2[1]]]);
    const info = await failure(ifV1({ conditions: dates }), [{ d: 'soon' }]);
    assert.equal(info.message, 'Node "Node" failed: The value "soon" is not a valid DateTime.');
  });

  test("types are checked in n8n's order (boolean, date, number, string) whatever the export's order", async () => {
    // With "any", the passing string condition would decide first if the export's order counted.
    const conditions = { string: [{ value1: 'a', operation: 'equal', value2: 'a' }], dateTime: [{ value1: 'never', value2: '2020-01-01' }] };
    const info = await failure(ifV1({ conditions, combineOperation: 'any' }), [{}]);
    assert.match(info.message, /"never" is not a valid DateTime/);
  });

  test('an unknown operation fails the node', async () => {
    const info = await failure(ifV1({ conditions: { number: [{ value1: 1, operation: 'between', value2: 2 }] } }), [{}]);
    assert.match(info.message, /unknown operation "between"/);
  });

  test('a failure with onError continueRegularOutput: n8n passes the input on by the first output', async () => {
    const node = { ...ifV1({ conditions: { dateTime: [{ value1: '={{ $json.d }}', value2: '2020-01-01' }] } }), onError: 'continueRegularOutput' };
    assert.deepEqual(await runNode(node, [{ d: '2021-01-01' }, { d: 'x' }]), [[{ d: '2021-01-01' }, { d: 'x' }]]);
  });
});

const filterParam = (conditions: Json[], options?: Json, combinator = 'and') => ({ ...(options ? { options } : {}), conditions, combinator });
const STRICT = { caseSensitive: true, leftValue: '', typeValidation: 'strict' };
const ifV2 = (typeVersion: number, parameters: Json): NodeUnderTest => ({ type: 'n8n-nodes-base.if', typeVersion, parameters });

describe('n8n If 2, 2.1, 2.2', () => {
  const count = (operation: string, rightValue: unknown) => ({ leftValue: '={{ $json.count }}', rightValue, operator: { type: 'number', operation } });
  const fruit = [
    { count: 1, label: 'Apple' },
    { count: 5, label: 'Banana' },
    { count: 12, label: 'Kiwi' },
  ];

  test("true by output 0, false by output 1 (n8n's number test workflow), in every version", async () => {
    for (const version of [2, 2.1, 2.2]) {
      const conditions = filterParam([count('equals', '1'), count('gt', '10')], { caseSensitive: true, leftValue: '' }, 'or');
      assert.deepEqual(await runNode(ifV2(version, { conditions, options: {} }), fruit), [[fruit[0], fruit[2]], [fruit[1]]], `version ${version}`);
    }
  });

  test("ignoreCase: the filter's stored caseSensitive decides; without stored options, the node's option", async () => {
    const label = [{ leftValue: '={{ $json.label }}', rightValue: 'apple', operator: { type: 'string', operation: 'equals' } }];
    const stored = ifV2(2.2, { conditions: filterParam(label, STRICT), options: { ignoreCase: true } });
    assert.deepEqual((await runNode(stored, fruit))[0], []);
    const derived = ifV2(2.2, { conditions: filterParam(label), options: { ignoreCase: true } });
    assert.deepEqual((await runNode(derived, fruit))[0], [fruit[0]]);
  });

  test('without stored options: looseTypeValidation is an option in 2, a node parameter from 2.1', async () => {
    const conditions = filterParam([count('equals', 5)]);
    const items = [{ count: '5' }];
    assert.deepEqual(await runNode(ifV2(2, { conditions, options: { looseTypeValidation: true } }), items), [items, []]);
    await failure(ifV2(2.1, { conditions, options: { looseTypeValidation: true } }), items);
    assert.deepEqual(await runNode(ifV2(2.1, { conditions, looseTypeValidation: true }), items), [items, []]);
  });

  test('without stored options: from 2.2 the filter is version 2 ("false" reads as false when loose)', async () => {
    const conditions = filterParam([{ leftValue: '={{ $json.flag }}', rightValue: '', operator: { type: 'boolean', operation: 'true', singleValue: true } }]);
    const items = [{ flag: 'false' }];
    assert.deepEqual(await runNode(ifV2(2.1, { conditions, looseTypeValidation: true }), items), [items, []]);
    assert.deepEqual(await runNode(ifV2(2.2, { conditions, looseTypeValidation: true }), items), [[], items]);
  });

  test("a failure without n8n's own hint gets the loose-validation hint under strict validation only", async () => {
    const conditions = filterParam([{ leftValue: 'x', rightValue: '[', operator: { type: 'string', operation: 'regex' } }], STRICT);
    assert.match(String((await failure(ifV2(2.1, { conditions }), [{}])).details.description), /Convert types where required/);
    assert.equal((await failure(ifV2(2.1, { conditions, looseTypeValidation: true }), [{}])).details.description, undefined);
    assert.equal((await failure(ifV2(2, { conditions, options: { looseTypeValidation: true } }), [{}])).details.description, undefined);
  });

  test('with onError continueRegularOutput an item that fails goes to false, the others are routed', async () => {
    const node = { ...ifV2(2.2, { conditions: filterParam([count('gt', 3)], STRICT) }), onError: 'continueRegularOutput' };
    const items = [{ count: 5 }, { count: 'many' }, { count: 1 }];
    assert.deepEqual(await runNode(node, items), [[items[0]], [items[1], items[2]]]);
  });

  test('a version n8n does not have is refused; If has two outputs', async () => {
    assert.equal(importRefusal({ type: 'n8n-nodes-base.if', typeVersion: 2.3 })?.reason, 'unsupported_version');
    assert.equal(await connectionRefusal(ifV2(2.2, {}), 1), undefined);
    assert.equal((await connectionRefusal(ifV2(2.2, {}), 2))?.reason, 'invalid_output');
  });
});

describe('n8n Filter', () => {
  const items = [
    { n: 1, s: 'a' },
    { n: 5, s: 'b' },
    { n: 9, s: 'c' },
  ];

  test('1: keeps the items meeting the conditions, AND (default) or OR', async () => {
    const conditions = { number: [{ value1: '={{ $json.n }}', operation: 'largerEqual', value2: 5 }], string: [{ value1: '={{ $json.s }}', value2: 'a' }] };
    const filter = (parameters: Json): NodeUnderTest => ({ type: 'n8n-nodes-base.filter', typeVersion: 1, parameters });
    assert.deepEqual(await runNode(filter({ conditions }), items), [[]]);
    assert.deepEqual(await runNode(filter({ conditions, combineConditions: 'OR' }), items), [items]);
    assert.deepEqual(await runNode(filter({ conditions: { number: conditions.number } }), items), [[items[1], items[2]]]);
  });

  test('2.x: keeps the items passing the filter, by its only output', async () => {
    for (const typeVersion of [2, 2.1, 2.2]) {
      const conditions = filterParam([{ leftValue: '={{ $json.n }}', rightValue: 5, operator: { type: 'number', operation: 'lt' } }], STRICT);
      assert.deepEqual(await runNode({ type: 'n8n-nodes-base.filter', typeVersion, parameters: { conditions } }, items), [[items[0]]]);
    }
  });

  test('2.x with onError continueRegularOutput discards an item that fails', async () => {
    const conditions = filterParam([{ leftValue: '={{ $json.n }}', rightValue: 5, operator: { type: 'number', operation: 'gt' } }], STRICT);
    const node = { type: 'n8n-nodes-base.filter', typeVersion: 2.2, parameters: { conditions }, onError: 'continueRegularOutput' };
    assert.deepEqual(await runNode(node, [{ n: 'x' }, { n: 9 }]), [[{ n: 9 }]]);
  });

  test('Filter has one output (n8n shows discarded items in its editor only)', async () => {
    const node = { type: 'n8n-nodes-base.filter', typeVersion: 2.2, parameters: {} };
    assert.equal(await connectionRefusal(node, 0), undefined);
    assert.equal((await connectionRefusal(node, 1))?.reason, 'invalid_output');
  });
});
