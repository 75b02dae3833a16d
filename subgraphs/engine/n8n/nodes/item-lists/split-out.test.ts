import assert from 'node:assert/strict';
import { disposeHarness, outputFailure as failure, runOutput as run, type Json } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

/** The item of n8n's own tests for Item Lists 2.2 and later. */
const sample = {
  data: { entry1: { id: 1, info: 'some info 1' }, entry2: { id: 2, info: 'some info 2' }, entry3: { id: 3, info: 'some info 3' } },
  data2: ['a', 'b', 'c'],
  data3: { a: 1, b: 2, c: 3 },
  data4: null,
  tag: 'bar',
};
const entries = [
  { id: 1, info: 'some info 1' },
  { id: 2, info: 'some info 2' },
  { id: 3, info: 'some info 3' },
];

describe('n8n Split Out 1', () => {
  test('a list of objects becomes the items themselves; a list of values goes under the field name', async () => {
    assert.deepEqual(await run('splitOut', 1, { fieldToSplitOut: 'rows' }, [{ rows: [{ a: 1 }, { a: 2 }], x: 0 }]), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(await run('splitOut', 1, { fieldToSplitOut: 'tags' }, [{ tags: ['x', 'y'] }, { tags: ['z'] }]), [
      { tags: 'x' },
      { tags: 'y' },
      { tags: 'z' },
    ]);
  });

  test('an object splits into its values, a single value or null into one item, a missing field into none', async () => {
    assert.deepEqual(await run('splitOut', 1, { fieldToSplitOut: 'data' }, [sample]), entries);
    assert.deepEqual(await run('splitOut', 1, { fieldToSplitOut: 'tag' }, [sample, { tag: null }, { other: 1 }]), [{ tag: 'bar' }, { tag: null }]);
  });

  test('all other fields: copied before the split field, which is removed (a nested one from its parent)', async () => {
    const out = await run('splitOut', 1, { fieldToSplitOut: 'order.lines', include: 'allOtherFields' }, [
      { id: 7, order: { lines: [1, 2], total: 3 }, z: true },
    ]);
    assert.deepEqual(out, [
      { id: 7, order: { total: 3 }, z: true, 'order.lines': 1 },
      { id: 7, order: { total: 3 }, z: true, 'order.lines': 2 },
    ]);
  });

  test('selected other fields (text, read by dot notation) follow the split field; none given fails', async () => {
    const out = await run('splitOut', 1, { fieldToSplitOut: 'tags', include: 'selectedOtherFields', fieldsToInclude: 'id, meta.owner' }, [
      { id: 1, tags: ['a'], meta: { owner: 'me' } },
    ]);
    assert.deepEqual(out, [{ tags: 'a', id: 1, 'meta.owner': 'me' }]);
    const info = await failure('splitOut', 1, { fieldToSplitOut: 'tags', include: 'selectedOtherFields' }, [{ tags: ['a'] }]);
    assert.match(info.message, /No fields specified$/);
  });

  test('several fields split side by side, renamed by destinationFieldName (n8n 2.2 test cases)', async () => {
    assert.deepEqual(await run('splitOut', 1, { fieldToSplitOut: 'data3, data2, data' }, [sample]), [
      { data3: 1, data2: 'a', data: entries[0] },
      { data3: 2, data2: 'b', data: entries[1] },
      { data3: 3, data2: 'c', data: entries[2] },
    ]);
    assert.deepEqual(await run('splitOut', 1, { fieldToSplitOut: ' tag, data4', options: { destinationFieldName: 'entry1, entry2' } }, [sample]), [
      { entry1: 'bar', entry2: null },
    ]);
    const selected = await run(
      'splitOut',
      1,
      { fieldToSplitOut: 'data2, tag', include: 'selectedOtherFields', fieldsToInclude: 'data4', options: { destinationFieldName: 'fromArray, singleField' } },
      [sample],
    );
    assert.deepEqual(selected, [
      { fromArray: 'a', singleField: 'bar', data4: null },
      { fromArray: 'b', data4: null },
      { fromArray: 'c', data4: null },
    ]);
  });

  test('several fields with all other fields: the rest of the item, then the split values', async () => {
    const out = await run('splitOut', 1, { fieldToSplitOut: 'data2, data3', include: 'allOtherFields' }, [sample]);
    assert.deepEqual(out[1], { data: sample.data, data4: null, tag: 'bar', data2: 'b', data3: 2 });
    assert.deepEqual(Object.keys(out[0]!), ['data', 'data4', 'tag', 'data2', 'data3']);
  });

  test('as many destination names as fields are needed', async () => {
    const info = await failure('splitOut', 1, { fieldToSplitOut: 'a, b', options: { destinationFieldName: 'x' } }, [{ a: [1], b: [2] }]);
    assert.match(info.message, /If multiple fields to split out are given, the same number of destination fields must be given$/);
  });

  test('"$json." in front of the field is ignored; disableDotNotation reads a key with dots as it is', async () => {
    assert.deepEqual(await run('splitOut', 1, { fieldToSplitOut: '$json.list' }, [{ list: [1] }]), [{ list: 1 }]);
    const out = await run('splitOut', 1, { fieldToSplitOut: 'a.b', options: { disableDotNotation: true } }, [{ 'a.b': [1], a: { b: [2] } }]);
    assert.deepEqual(out, [{ 'a.b': 1 }]);
  });

  test('the field can be an expression, read for each item', async () => {
    const out = await run('splitOut', 1, { fieldToSplitOut: '={{ $json.which }}' }, [
      { which: 'x', x: [1, 2] },
      { which: 'y', y: [3] },
    ]);
    assert.deepEqual(out, [{ x: 1 }, { x: 2 }, { y: 3 }]);
  });

  test('"$binary" splits into nothing: items here carry no binary data', async () => {
    assert.deepEqual(await run('splitOut', 1, { fieldToSplitOut: '$binary', options: { includeBinary: true } }, [{ a: 1 }]), []);
  });
});

describe('n8n Item Lists: split out items, per version', () => {
  test('1: one field (a comma is part of its name); object entries become the items, a null entry an empty item', async () => {
    assert.deepEqual(await run('itemLists', 1, { fieldToSplitOut: 'a,b' }, [{ 'a,b': [{ x: 1 }, null, 2] }]), [{ x: 1 }, {}, { 'a,b': 2 }]);
  });

  test('1: selected other fields come first, the split field itself is not copied', async () => {
    const out = await run(
      'itemLists',
      1,
      { fieldToSplitOut: 'tags', include: 'selectedOtherFields', fieldsToInclude: { fields: [{ fieldName: 'id' }, { fieldName: 'tags' }] } },
      [{ id: 1, tags: ['a'] }],
    );
    assert.deepEqual(out, [{ id: 1, tags: 'a' }]);
    assert.deepEqual(Object.keys(out[0]!), ['id', 'tags']);
  });

  test('1: a missing field or one that is no list fails, naming it', async () => {
    assert.match((await failure('itemLists', 1, { fieldToSplitOut: 'nope' }, [{ a: 1 }])).message, /Couldn't find the field 'nope' in the input data$/);
    assert.match((await failure('itemLists', 1, { fieldToSplitOut: 'data' }, [sample])).message, /The provided field 'data' is not an array$/);
    const dotted = await failure('itemLists', 1, { fieldToSplitOut: 'a.b', options: { disableDotNotation: true } }, [{ a: { b: [1] } }]);
    assert.match(String(dotted.details.description), /turn off 'disable dot notation'/);
  });

  test('2: objects split into their values; a missing field still fails', async () => {
    assert.deepEqual(await run('itemLists', 2, { fieldToSplitOut: 'data' }, [sample]), entries);
    assert.match((await failure('itemLists', 2, { fieldToSplitOut: 'nope' }, [sample])).message, /Couldn't find the field 'nope' in the input data$/);
  });

  test('2.1: a missing field splits into nothing; a single value fails', async () => {
    assert.deepEqual(await run('itemLists', 2.1, { fieldToSplitOut: 'nope' }, [sample]), []);
    const info = await failure('itemLists', 2.1, { fieldToSplitOut: ' tag, data4', options: { destinationFieldName: 'entry1, entry2' } }, [sample]);
    assert.match(info.message, /The provided field 'tag' is not an array or object$/);
  });

  test('2.2: single values split as lists of one; other fields listed as a collection (n8n test case)', async () => {
    assert.deepEqual(await run('itemLists', 2.2, { fieldToSplitOut: ' tag, data4', options: { destinationFieldName: 'entry1, entry2' } }, [sample]), [
      { entry1: 'bar', entry2: null },
    ]);
    const out = await run(
      'itemLists',
      2.2,
      { fieldToSplitOut: 'data, data2', include: 'selectedOtherFields', fieldsToInclude: { fields: [{ fieldName: 'tag' }] } },
      [sample],
    );
    assert.deepEqual(out, [
      { data: entries[0], data2: 'a', tag: 'bar' },
      { data: entries[1], data2: 'b', tag: 'bar' },
      { data: entries[2], data2: 'c', tag: 'bar' },
    ]);
  });

  test('2.x: "$json." is part of the field name (so no such field: nothing to split)', async () => {
    assert.deepEqual(await run('itemLists', 2.2, { fieldToSplitOut: '$json.list' }, [{ list: [1] }]), []);
  });

  test('before 3, "disable dot notation" is read at the first item only; from 3 on, for each item', async () => {
    const items = [
      { flag: true, 'a.b': [1], a: { b: [2] } },
      { flag: false, a: { b: [4] } },
    ];
    const parameters = { fieldToSplitOut: 'a.b', options: { disableDotNotation: '={{ $json.flag }}' } };
    assert.deepEqual(await run('itemLists', 2.2, parameters, items), [{ 'a.b': 1 }]);
    assert.deepEqual(await run('itemLists', 3, parameters, items), [{ 'a.b': 1 }, { 'a.b': 4 }]);
  });

  test('3 and 3.1: selected fields are text, and a selected field named like the split one is copied whole', async () => {
    for (const version of [3, 3.1]) {
      const out = await run('itemLists', version, { fieldToSplitOut: '$json.tags', include: 'selectedOtherFields', fieldsToInclude: 'id, tags' }, [
        { id: 1, tags: ['a', 'b'] },
      ]);
      assert.deepEqual(out, [
        { tags: ['a', 'b'], id: 1 },
        { tags: ['a', 'b'], id: 1 },
      ]);
    }
  });

  test('3: destination field for a list of objects puts each object under it', async () => {
    const out = await run('itemLists', 3, { fieldToSplitOut: 'data', include: 'allOtherFields', options: { destinationFieldName: 'newData' } }, [
      { data: [{ n: 1 }], keep: true },
    ]);
    assert.deepEqual(out, [{ keep: true, newData: { n: 1 } }]);
  });
});

describe('n8n Split Out 1: a dot-notation destination (n8n test workflow)', () => {
  const item = {
    data: [
      { id: 3, char: 'c' },
      { id: 4, char: 'd' },
    ],
    data2: [{ text: 'foo' }],
    data3: [{ text: 'bar' }],
  };

  test('the entries go under the nested destination, the other fields kept', async () => {
    const out = await run('splitOut', 1, { fieldToSplitOut: 'data', include: 'allOtherFields', options: { destinationFieldName: 'data.foo' } }, [item]);
    assert.deepEqual(out, [
      { data2: [{ text: 'foo' }], data3: [{ text: 'bar' }], data: { foo: { id: 3, char: 'c' } } },
      { data2: [{ text: 'foo' }], data3: [{ text: 'bar' }], data: { foo: { id: 4, char: 'd' } } },
    ]);
  });

  test('with dot notation disabled the destination is one field named with the dot', async () => {
    const out = await run('splitOut', 1, { fieldToSplitOut: 'data', options: { destinationFieldName: 'a.b', disableDotNotation: true } }, [item]);
    assert.deepEqual(out[0], { 'a.b': { id: 3, char: 'c' } });
  });

  test('a destination through the prototype is refused and pollutes nothing', async () => {
    for (const destinationFieldName of ['__proto__.polluted', 'constructor.prototype.polluted']) {
      const info = await failure('splitOut', 1, { fieldToSplitOut: 'data', include: 'allOtherFields', options: { destinationFieldName } }, [item]);
      assert.match(info.message, /Invalid destination field name/);
    }
    assert.equal(({} as Json).polluted, undefined);
  });
});
