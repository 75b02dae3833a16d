import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, outputFailure as failure, runOutput as run, type Json } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

const orders = [
  { id: 1, customer: { name: 'Ada' }, total: 10 },
  { id: 2, customer: { name: 'Alan' }, total: 10 },
  { id: 1, customer: { name: 'Ada' }, total: 10 },
  { id: 3, customer: { name: 'Ada' }, total: 12 },
];

/** n8n's own test items for Item Lists 3.1: one value of each type, twice. */
const mixed = [{ mixed: '1' }, { mixed: 1 }, { mixed: true }, { mixed: false }, { mixed: {} }, { mixed: [] }].map((i) => ({ ...i, match: 'foo' }));

describe('n8n Remove Duplicates 1, 1.1, 2', () => {
  test('all fields (nested ones included): the first of equal items stays, the order is kept', async () => {
    for (const version of [1, 1.1, 2]) {
      assert.deepEqual(await run('removeDuplicates', version, {}, orders), [orders[0], orders[1], orders[3]], `version ${version}`);
    }
  });

  test('selected fields, by dot notation; removeOtherFields keeps only them, nested as they were', async () => {
    const out = await run('removeDuplicates', 2, { compare: 'selectedFields', fieldsToCompare: 'customer.name', options: { removeOtherFields: true } }, orders);
    assert.deepEqual(out, [{ customer: { name: 'Ada' } }, { customer: { name: 'Alan' } }]);
  });

  test("all fields except some (of the first item's fields)", async () => {
    const out = await run('removeDuplicates', 1, { compare: 'allFieldsExcept', fieldsToExclude: 'id, total' }, orders);
    assert.deepEqual(out, [orders[0], orders[1]]);
  });

  test('options left from a compare mode that has none are not read', async () => {
    const out = await run('removeDuplicates', 2, { compare: 'allFields', options: { removeOtherFields: true } }, orders);
    assert.deepEqual(out, [orders[0], orders[1], orders[3]]);
  });

  test('disableDotNotation compares keys that contain dots as they are', async () => {
    const items = [
      { 'a.b': 1, a: { b: 1 } },
      { 'a.b': 1, a: { b: 2 } },
    ];
    assert.deepEqual(await run('removeDuplicates', 2, { compare: 'selectedFields', fieldsToCompare: 'a.b', options: { disableDotNotation: true } }, items), [
      items[0],
    ]);
  });

  test('no fields given fails, naming what is missing', async () => {
    assert.match(
      (await failure('removeDuplicates', 2, { compare: 'selectedFields' }, orders)).message,
      /No fields specified. Please add a field to compare on$/,
    );
    assert.match(
      (await failure('removeDuplicates', 2, { compare: 'allFieldsExcept' }, orders)).message,
      /No fields specified. Please add a field to exclude from comparison$/,
    );
  });

  test('a compared field missing from an item fails', async () => {
    const info = await failure('removeDuplicates', 2, { compare: 'selectedFields', fieldsToCompare: 'total' }, [{ total: 1 }, { id: 2 }]);
    assert.match(info.message, /'total' field is missing from some input items$/);
  });

  test('a field whose type varies fails; 1.1 and 2 skip nulls and say in which items', async () => {
    const items = [{ v: 1 }, { v: null }, { v: 'x' }];
    const v1 = await failure('removeDuplicates', 1, { compare: 'selectedFields', fieldsToCompare: 'v' }, items);
    assert.match(v1.message, /'v' isn't always the same type$/);
    assert.equal(v1.details.description, 'The type of this field varies between items');
    // The positions are in n8n's sorted order (null, 1, 'x'), where the null is skipped.
    const v2 = await failure('removeDuplicates', 2, { compare: 'selectedFields', fieldsToCompare: 'v' }, items);
    assert.equal(v2.details.description, "The type of this field varies between items, in item [1] it's a number and in item [2] it's a string ");
    assert.deepEqual(await run('removeDuplicates', 1.1, { compare: 'selectedFields', fieldsToCompare: 'v' }, [{ v: 1 }, { v: null }, { v: 1 }]), [
      { v: 1 },
      { v: null },
    ]);
  });

  test('2: the operations that keep a history across executions are refused at import, saying what they need', () => {
    for (const operation of ['removeItemsSeenInPreviousExecutions', 'clearDeduplicationHistory']) {
      const refusal = importRefusal({ type: 'n8n-nodes-base.removeDuplicates', typeVersion: 2, parameters: { operation } });
      assert.equal(refusal?.reason, 'unsupported_option');
      assert.equal(refusal?.option, 'operation');
      assert.match(refusal!.message, new RegExp(`${operation}.*history of values across executions.*deduplication store`));
    }
    assert.equal(importRefusal({ type: 'n8n-nodes-base.removeDuplicates', typeVersion: 2, parameters: { operation: 'removeDuplicateInputItems' } }), undefined);
  });
});

describe('n8n Item Lists: remove duplicates, per version', () => {
  test('1 and 2 list fields as a collection of field names', async () => {
    for (const version of [1, 2, 2.1, 2.2]) {
      const out = await run(
        'itemLists',
        version,
        { operation: 'removeDuplicates', compare: 'selectedFields', fieldsToCompare: { fields: [{ fieldName: 'total' }] } },
        orders,
      );
      assert.deepEqual(out, [orders[0], orders[3]], `version ${version}`);
    }
  });

  test('3 lists them as text and fails on a type that varies', async () => {
    assert.deepEqual(await run('itemLists', 3, { operation: 'removeDuplicates', compare: 'selectedFields', fieldsToCompare: 'total' }, orders), [
      orders[0],
      orders[3],
    ]);
    const info = await failure('itemLists', 3, { operation: 'removeDuplicates', compare: 'selectedFields', fieldsToCompare: 'mixed' }, [...mixed, ...mixed]);
    assert.match(info.message, /'mixed' isn't always the same type$/);
  });

  test('3.1 compares values of different types (n8n test case)', async () => {
    const items = [...mixed, ...mixed];
    const cases: [Json, Json[]][] = [
      [{}, mixed],
      [{ compare: 'selectedFields', fieldsToCompare: 'mixed' }, mixed],
      [{ compare: 'selectedFields', fieldsToCompare: 'match' }, [mixed[0]!]],
      [{ compare: 'allFieldsExcept', fieldsToExclude: 'mixed' }, [mixed[0]!]],
      [{ compare: 'allFieldsExcept', fieldsToExclude: 'match' }, mixed],
    ];
    for (const [parameters, expected] of cases) {
      assert.deepEqual(await run('itemLists', 3.1, { operation: 'removeDuplicates', ...parameters, options: {} }, items), expected, JSON.stringify(parameters));
    }
  });

  test('removeOtherFields after all fields except some keeps the compared leaf paths', async () => {
    const out = await run(
      'itemLists',
      3.1,
      { operation: 'removeDuplicates', compare: 'allFieldsExcept', fieldsToExclude: 'id', options: { removeOtherFields: true } },
      orders,
    );
    assert.deepEqual(out, [
      { customer: { name: 'Ada' }, total: 10 },
      { customer: { name: 'Alan' }, total: 10 },
      { customer: { name: 'Ada' }, total: 12 },
    ]);
  });
});
