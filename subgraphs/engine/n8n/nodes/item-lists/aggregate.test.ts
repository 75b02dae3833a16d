import assert from 'node:assert/strict';
import { disposeHarness, outputFailure as failure, runOutput as run, type Json } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

const people = [
  { name: 'Ada', tags: ['math', null], address: { city: 'London' }, age: 36 },
  { name: 'Alan', tags: ['logic'], address: { city: 'Wilmslow' }, age: null },
  { name: 'Grace', address: { city: 'Arlington' } },
];

const fields = (...list: Json[]) => ({ fieldToAggregate: list });

describe('n8n Aggregate 1: individual fields', () => {
  test('each field becomes a list of its values, null and missing values left out, nulls inside lists too', async () => {
    const out = await run(
      'aggregate',
      1,
      { fieldsToAggregate: fields({ fieldToAggregate: 'name' }, { fieldToAggregate: 'age' }, { fieldToAggregate: 'tags' }) },
      people,
    );
    assert.deepEqual(out, [{ name: ['Ada', 'Alan', 'Grace'], age: [36], tags: [['math'], ['logic']] }]);
  });

  test('keepMissing keeps null and missing values (and nulls inside lists)', async () => {
    const out = await run(
      'aggregate',
      1,
      { fieldsToAggregate: fields({ fieldToAggregate: 'age' }, { fieldToAggregate: 'tags' }), options: { keepMissing: true } },
      people,
    );
    assert.deepEqual(out, [{ age: [36, null, undefined], tags: [['math', null], ['logic'], undefined] }]);
  });

  test('mergeLists flattens list values into one list', async () => {
    const out = await run('aggregate', 1, { fieldsToAggregate: fields({ fieldToAggregate: 'tags' }), options: { mergeLists: true } }, people);
    assert.deepEqual(out, [{ tags: ['math', 'logic'] }]);
  });

  test('a nested field is read by dot notation and named after its last part; a renamed output with dots nests', async () => {
    const out = await run(
      'aggregate',
      1,
      { fieldsToAggregate: fields({ fieldToAggregate: 'address.city' }, { fieldToAggregate: 'name', renameField: true, outputFieldName: 'people.names' }) },
      people,
    );
    assert.deepEqual(out, [{ city: ['London', 'Wilmslow', 'Arlington'], people: { names: ['Ada', 'Alan', 'Grace'] } }]);
  });

  test('disableDotNotation reads and writes keys that contain dots as they are', async () => {
    const out = await run('aggregate', 1, { fieldsToAggregate: fields({ fieldToAggregate: 'a.b' }), options: { disableDotNotation: true } }, [
      { 'a.b': 1, a: { b: 2 } },
      { 'a.b': 3 },
    ]);
    assert.deepEqual(out, [{ 'a.b': [1, 3] }]);
  });

  test('an output name is only used while "Rename Field" is on', async () => {
    const out = await run('aggregate', 1, { fieldsToAggregate: fields({ fieldToAggregate: 'name', renameField: false, outputFieldName: 'ignored' }) }, people);
    assert.deepEqual(out, [{ name: ['Ada', 'Alan', 'Grace'] }]);
  });

  test('an output field used twice fails, naming it', async () => {
    const info = await failure(
      'aggregate',
      1,
      { fieldsToAggregate: fields({ fieldToAggregate: 'name' }, { fieldToAggregate: 'age', renameField: true, outputFieldName: 'name' }) },
      people,
    );
    assert.match(info.message, /The 'name' output field is used more than once$/);
    assert.equal(info.details.description, 'Please make sure each output field name is unique');
  });

  test('no field to aggregate fails; a field no item has gives an empty list', async () => {
    const info = await failure('aggregate', 1, { fieldsToAggregate: {} }, people);
    assert.match(info.message, /No fields specified$/);
    assert.deepEqual(await run('aggregate', 1, { fieldsToAggregate: fields({ fieldToAggregate: 'nowhere' }) }, people), [{ nowhere: [] }]);
  });

  test('includeBinaries is accepted: items here carry json only, so the result is the same', async () => {
    const out = await run(
      'aggregate',
      1,
      { fieldsToAggregate: fields({ fieldToAggregate: 'name' }), options: { includeBinaries: true, keepOnlyUnique: true } },
      people,
    );
    assert.deepEqual(out, [{ name: ['Ada', 'Alan', 'Grace'] }]);
  });
});

describe('n8n Aggregate 1: all item data', () => {
  test('every item json goes into one list under "data" by default', async () => {
    const out = await run('aggregate', 1, { aggregate: 'aggregateAllItemData' }, [{ a: 1 }, { b: 2 }]);
    assert.deepEqual(out, [{ data: [{ a: 1 }, { b: 2 }] }]);
  });

  test('specified fields only, under another name; an item left with none of them is dropped', async () => {
    const out = await run(
      'aggregate',
      1,
      { aggregate: 'aggregateAllItemData', destinationFieldName: 'rows', include: 'specifiedFields', fieldsToInclude: 'b, a' },
      [{ a: 1, b: 2, c: 3 }, { c: 4 }, { b: 5 }],
    );
    assert.deepEqual(out, [{ rows: [{ a: 1, b: 2 }, { b: 5 }] }]);
  });

  test('all fields except some; fields to exclude left from another mode are not read', async () => {
    const except = await run('aggregate', 1, { aggregate: 'aggregateAllItemData', include: 'allFieldsExcept', fieldsToExclude: 'c' }, [
      { a: 1, c: 3 },
      { c: 4 },
    ]);
    assert.deepEqual(except, [{ data: [{ a: 1 }] }]);
    const stale = await run('aggregate', 1, { aggregate: 'aggregateAllItemData', include: 'allFields', fieldsToExclude: 'c' }, [{ a: 1, c: 3 }]);
    assert.deepEqual(stale, [{ data: [{ a: 1, c: 3 }] }]);
  });
});

describe('n8n Item Lists: concatenate items', () => {
  test('Item Lists 1 (aggregateItems): a blank field fails', async () => {
    const info = await failure('itemLists', 1, { operation: 'aggregateItems' }, people);
    assert.match(info.message, /Field to aggregate is blank$/);
  });

  test('Item Lists 1 and 2.0: a field no item has fails unless keepMissing; with dot notation off the message says how to reach nested fields', async () => {
    for (const version of [1, 2]) {
      const info = await failure('itemLists', version, { operation: 'aggregateItems', fieldsToAggregate: fields({ fieldToAggregate: 'nowhere' }) }, people);
      assert.match(info.message, /Couldn't find the field 'nowhere' in the input data$/);
    }
    const kept = await run(
      'itemLists',
      2,
      { operation: 'aggregateItems', fieldsToAggregate: fields({ fieldToAggregate: 'nowhere' }), options: { keepMissing: true } },
      [{ a: 1 }],
    );
    assert.deepEqual(kept, [{ nowhere: [undefined] }]);
    const nested = await failure(
      'itemLists',
      1,
      { operation: 'aggregateItems', fieldsToAggregate: fields({ fieldToAggregate: 'address.city' }), options: { disableDotNotation: true } },
      people,
    );
    assert.match(String(nested.details.description), /turn off 'disable dot notation'/);
  });

  test('Item Lists 2.1 and later: a field no item has gives an empty list', async () => {
    for (const [version, operation] of [
      [2.1, 'aggregateItems'],
      [2.2, 'aggregateItems'],
      [3, 'concatenateItems'],
      [3.1, 'concatenateItems'],
    ] as const) {
      const out = await run(
        'itemLists',
        version,
        { operation, fieldsToAggregate: fields({ fieldToAggregate: 'name' }, { fieldToAggregate: 'nowhere' }) },
        people,
      );
      assert.deepEqual(out, [{ name: ['Ada', 'Alan', 'Grace'], nowhere: [] }], `version ${version}`);
    }
  });

  test('Item Lists 1-2 list the fields of "all item data" as a collection of field names', async () => {
    const out = await run(
      'itemLists',
      2.2,
      { operation: 'aggregateItems', aggregate: 'aggregateAllItemData', include: 'specifiedFields', fieldsToInclude: { fields: [{ fieldName: 'a' }] } },
      [{ a: 1, b: 2 }],
    );
    assert.deepEqual(out, [{ data: [{ a: 1 }] }]);
  });

  test('Item Lists 3 lists them as text, like the Aggregate node', async () => {
    const out = await run(
      'itemLists',
      3,
      { operation: 'concatenateItems', aggregate: 'aggregateAllItemData', destinationFieldName: 'data2', include: 'allFieldsExcept', fieldsToExclude: 'b' },
      [{ a: 1, b: 2 }],
    );
    assert.deepEqual(out, [{ data2: [{ a: 1 }] }]);
  });
});

describe('n8n Aggregate 1: groupByFields (n8n 1 test workflow)', () => {
  const emails = [
    { email: 'Grant.Goyette@hotmail.com', confirmed: true, domain: 'hotmail.com' },
    { email: 'Ian_Schroeder@yahoo.com', confirmed: false, domain: 'yahoo.com' },
    { email: 'Jerome83@yahoo.com', confirmed: false, domain: 'yahoo.com' },
    { email: 'Marie55@gmail.com', confirmed: false, domain: 'gmail.com' },
    { email: 'Rene78@yahoo.com', confirmed: true, domain: 'yahoo.com' },
  ];

  test('individual fields: one item per group, in first-seen order, the grouped field first', async () => {
    const out = await run(
      'aggregate',
      1,
      {
        fieldsToAggregate: fields({ fieldToAggregate: 'email' }, { fieldToAggregate: 'confirmed', renameField: true, outputFieldName: 'confirmStatus' }),
        options: { groupByFields: 'domain' },
      },
      emails,
    );
    assert.deepEqual(out, [
      { domain: 'hotmail.com', email: ['Grant.Goyette@hotmail.com'], confirmStatus: [true] },
      { domain: 'yahoo.com', email: ['Ian_Schroeder@yahoo.com', 'Jerome83@yahoo.com', 'Rene78@yahoo.com'], confirmStatus: [false, false, true] },
      { domain: 'gmail.com', email: ['Marie55@gmail.com'], confirmStatus: [false] },
    ]);
    assert.deepEqual(Object.keys(out[0]!), ['domain', 'email', 'confirmStatus']);
  });

  test('all item data: each group keeps its items whole, or with fields excluded', async () => {
    const all = await run('aggregate', 1, { aggregate: 'aggregateAllItemData', options: { groupByFields: 'domain' } }, emails);
    assert.deepEqual(
      all.map((g) => [g.domain, (g.data as unknown[]).length]),
      [
        ['hotmail.com', 1],
        ['yahoo.com', 3],
        ['gmail.com', 1],
      ],
    );
    assert.deepEqual(all[2], { domain: 'gmail.com', data: [emails[3]] });
    const except = await run(
      'aggregate',
      1,
      {
        aggregate: 'aggregateAllItemData',
        destinationFieldName: 'items',
        include: 'allFieldsExcept',
        fieldsToExclude: 'domain',
        options: { groupByFields: 'domain' },
      },
      emails,
    );
    assert.deepEqual(except[0], { domain: 'hotmail.com', items: [{ email: 'Grant.Goyette@hotmail.com', confirmed: true }] });
  });
});
