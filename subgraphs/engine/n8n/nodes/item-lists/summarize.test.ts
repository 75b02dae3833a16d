import assert from 'node:assert/strict';
import { disposeHarness, outputFailure as failure, runOutput as run, type Json } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

const summarizing = (...values: Json[]) => ({ fieldsToSummarize: { values } });
const itemLists = (version: number, parameters: Json, items: Json[]) => run('itemLists', version, { operation: 'summarize', ...parameters }, items);

/** The items of n8n's own Item Lists summarize test. */
const rows = (
  [
    ['red', 'foo', 'a', 1],
    ['blue', 'spam', 'b', 2],
    ['green', 'bar', 'c', 3],
    ['red', 'foo', 'a', 4],
    ['red', 'bar', 'a', 5],
    ['blue', 'foo', 'a', 6],
    ['blue', 'foo', 'a', 7],
  ] as const
).map(([category, text, char, value]) => ({ category, text, char, value }));

const chars = summarizing(
  { aggregation: 'append', field: 'char' },
  { field: 'char' },
  { aggregation: 'countUnique', field: 'char' },
  { aggregation: 'concatenate', field: 'char', separateBy: ', ' },
);
const charsOf = (list: string[]) => ({
  appended_char: list,
  count_char: list.length,
  unique_count_char: new Set(list).size,
  concatenated_char: list.join(', '),
});

describe('n8n Item Lists: summarize (n8n test cases)', () => {
  test('split by two fields: one item per group, the split fields first', async () => {
    const out = await itemLists(1, { ...chars, fieldsToSplitBy: 'category, text' }, rows);
    assert.deepEqual(out, [
      { category: 'red', text: 'foo', ...charsOf(['a', 'a']) },
      { category: 'red', text: 'bar', ...charsOf(['a']) },
      { category: 'blue', text: 'spam', ...charsOf(['b']) },
      { category: 'blue', text: 'foo', ...charsOf(['a', 'a']) },
      { category: 'green', text: 'bar', ...charsOf(['c']) },
    ]);
    assert.deepEqual(Object.keys(out[0]!), ['category', 'text', 'appended_char', 'count_char', 'unique_count_char', 'concatenated_char']);
  });

  test('all splits in a single item nest the groups by value', async () => {
    const out = await itemLists(1, { ...chars, fieldsToSplitBy: 'category, text', options: { outputFormat: 'singleItem' } }, rows);
    assert.deepEqual(out, [
      {
        red: { foo: charsOf(['a', 'a']), bar: charsOf(['a']) },
        blue: { spam: charsOf(['b']), foo: charsOf(['a', 'a']) },
        green: { bar: charsOf(['c']) },
      },
    ]);
  });

  test('average (a number), max, min, sum and append of numbers', async () => {
    const values = ['average', 'max', 'min', 'max', 'sum', 'append'].map((aggregation) => ({ aggregation, field: 'value' }));
    const out = await itemLists(1, { ...summarizing(...values), fieldsToSplitBy: 'category' }, rows);
    assert.deepEqual(out, [
      { category: 'red', average_value: 10 / 3, max_value: 5, min_value: 1, sum_value: 10, appended_value: [1, 4, 5] },
      { category: 'blue', average_value: 5, max_value: 7, min_value: 2, sum_value: 15, appended_value: [2, 6, 7] },
      { category: 'green', average_value: 3, max_value: 3, min_value: 3, sum_value: 3, appended_value: [3] },
    ]);
  });
});

describe('n8n Item Lists: summarize, per version', () => {
  const dates = [
    { d: '1925-04-10', n: 'x' },
    { d: '1979-10-12', n: 3 },
    { d: '', n: null },
  ];

  test('1 and 2: max and min consider numbers only (none: Infinity); 3: any value, empty ones skipped, compared by < and >', async () => {
    const params = summarizing({ aggregation: 'max', field: 'd' }, { aggregation: 'min', field: 'd' }, { aggregation: 'min', field: 'n' });
    for (const version of [1, 2, 2.2])
      assert.deepEqual(await itemLists(version, params, dates), [{ max_d: -Infinity, min_d: Infinity, min_n: 3 }], `version ${version}`);
    for (const version of [3, 3.1])
      assert.deepEqual(await itemLists(version, params, dates), [{ max_d: '1979-10-12', min_d: '1925-04-10', min_n: 'x' }], `version ${version}`);
  });

  test('1 keeps key names as built; 2 and later replace dots and spaces by _, drop brackets and quotes, and move those keys last', async () => {
    const items = [{ a: { b: 1 }, c: 2, 'x y': 3 }];
    const params = summarizing({ aggregation: 'sum', field: 'a.b' }, { aggregation: 'sum', field: 'c' }, { aggregation: 'sum', field: '["x y"]' });
    const v1 = await itemLists(1, params, items);
    assert.deepEqual(Object.entries(v1[0]!), [
      ['sum_a.b', 1],
      ['sum_c', 2],
      ['sum_["x y"]', 3],
    ]);
    const v2 = await itemLists(2.1, params, items);
    assert.deepEqual(Object.entries(v2[0]!), [
      ['sum_c', 2],
      ['sum_a_b', 1],
      ['sum_x_y', 3],
    ]);
  });

  test('2 and later name a nested split field with _', async () => {
    const items = [{ p: { kind: 'k' }, v: 1 }];
    const params = { ...summarizing({ aggregation: 'sum', field: 'v' }), fieldsToSplitBy: 'p.kind' };
    assert.deepEqual(await itemLists(1, params, items), [{ 'p.kind': 'k', sum_v: 1 }]);
    assert.deepEqual(await itemLists(3, params, items), [{ p_kind: 'k', sum_v: 1 }]);
  });

  test('1 and 2.0 fail on a field no item has; 2.1 and later summarize it as empty', async () => {
    const params = summarizing({ aggregation: 'sum', field: 'nope' });
    for (const version of [1, 2]) {
      assert.match((await failure('itemLists', version, { operation: 'summarize', ...params }, rows)).message, /The field 'nope' does not exist in any items$/);
    }
    for (const version of [2.1, 3.1]) assert.deepEqual(await itemLists(version, params, rows), [{ sum_nope: 0 }], `version ${version}`);
  });

  test('group values become text keys, ordered as an object orders them (numbers first)', async () => {
    const items = [{ g: 'b' }, { g: 10 }, { g: 2 }, { g: 'a' }, { g: 2 }];
    const out = await itemLists(3.1, { ...summarizing({ field: 'g' }), fieldsToSplitBy: 'g' }, items);
    assert.deepEqual(out, [
      { g: '2', count_g: 2 },
      { g: '10', count_g: 1 },
      { g: 'b', count_g: 1 },
      { g: 'a', count_g: 1 },
    ]);
  });

  test('skipEmptySplitFields leaves out items whose group value is empty, false or missing (not 0)', async () => {
    const items = [{ g: '', v: 1 }, { g: 0, v: 2 }, { v: 3 }, { g: false, v: 4 }, { g: 'x', v: 5 }];
    const params = { ...summarizing({ aggregation: 'sum', field: 'v' }), fieldsToSplitBy: 'g', options: { skipEmptySplitFields: true } };
    assert.deepEqual(await itemLists(3, params, items), [
      { g: '0', sum_v: 2 },
      { g: 'x', sum_v: 5 },
    ]);
  });

  test('at least one aggregation needs a field', async () => {
    assert.match(
      (await failure('itemLists', 3, { operation: 'summarize' }, rows)).message,
      /You need to add at least one aggregation to 'Fields to Summarize' with non empty 'Field'$/,
    );
  });
});

describe('n8n Summarize 1 and 1.1', () => {
  const users = [
    { email: 'a@x', group: 0 },
    { email: 'b@x', group: 1 },
    { email: 'c@x', group: null },
    { email: 'd@x', group: 0 },
    { email: '', group: 1 },
  ];
  const appendEmails = { ...summarizing({ aggregation: 'append', field: 'email', includeEmpty: true }), fieldsToSplitBy: 'group' };

  test('1: group values as text, in the order first seen, after the aggregations', async () => {
    const out = await run('summarize', 1, appendEmails, users);
    assert.deepEqual(out, [
      { appended_email: ['a@x', 'd@x'], group: '0' },
      { appended_email: ['b@x', ''], group: '1' },
      { appended_email: ['c@x'], group: 'null' },
    ]);
    assert.deepEqual(Object.keys(out[0]!), ['appended_email', 'group']);
  });

  test('1.1: group values keep their type', async () => {
    assert.deepEqual(await run('summarize', 1.1, appendEmails, users), [
      { appended_email: ['a@x', 'd@x'], group: 0 },
      { appended_email: ['b@x', ''], group: 1 },
      { appended_email: ['c@x'], group: null },
    ]);
  });

  test('several split fields follow the aggregations, the innermost first', async () => {
    const out = await run('summarize', 1.1, { ...summarizing({ aggregation: 'sum', field: 'value' }), fieldsToSplitBy: 'category, text' }, rows);
    assert.deepEqual(out[0], { sum_value: 5, text: 'foo', category: 'red' });
    assert.deepEqual(Object.keys(out[0]!), ['sum_value', 'text', 'category']);
  });

  test('all splits in one item; key names with dots or spaces get _ in place', async () => {
    const out = await run(
      'summarize',
      1,
      {
        ...summarizing({ aggregation: 'sum', field: 'p.v' }, { aggregation: 'concatenate', field: 'p.v', separateBy: 'other', customSeparator: ' | ' }),
        fieldsToSplitBy: 'k',
        options: { outputFormat: 'singleItem' },
      },
      [
        { k: 'a', p: { v: 1 } },
        { k: 'a', p: { v: 2 } },
        { k: 'b', p: { v: 3 } },
      ],
    );
    assert.deepEqual(out, [{ a: { sum_p_v: 3, concatenated_p_v: '1 | 2' }, b: { sum_p_v: 3, concatenated_p_v: '3' } }]);
  });

  test('includeEmpty counts empty values too (count and count unique)', async () => {
    const params = summarizing(
      { field: 'email' },
      { field: 'email', aggregation: 'countUnique' },
      { field: 'group', aggregation: 'count', includeEmpty: true },
      { field: 'group', aggregation: 'countUnique', includeEmpty: true },
    );
    assert.deepEqual(await run('summarize', 1.1, params, users), [{ count_email: 4, unique_count_email: 4, count_group: 5, unique_count_group: 3 }]);
  });

  test('concatenate turns objects into JSON; append and concatenate leave out empty values unless asked', async () => {
    const items = [{ v: { a: 1 } }, { v: null }, { v: 'x' }, {}];
    const out = await run('summarize', 1.1, summarizing({ aggregation: 'concatenate', field: 'v' }, { aggregation: 'append', field: 'v' }), items);
    assert.deepEqual(out, [{ concatenated_v: '{"a":1},x', appended_v: [{ a: 1 }, 'x'] }]);
    const all = await run('summarize', 1.1, summarizing({ aggregation: 'concatenate', field: 'v', includeEmpty: true, separateBy: ' ' }), items);
    assert.deepEqual(all, [{ concatenated_v: '{"a":1} null x undefined' }]);
  });

  test('sum and average skip values that are no numbers', async () => {
    const out = await run('summarize', 1, summarizing({ aggregation: 'sum', field: 'v' }, { aggregation: 'average', field: 'v' }), [
      { v: 2 },
      { v: '3' },
      { v: 4 },
      {},
    ]);
    assert.deepEqual(out, [{ sum_v: 6, average_v: 3 }]);
  });

  test('1 fails on a field no item has, unless continueIfFieldNotFound; 1.1 carries on', async () => {
    const params = summarizing({ aggregation: 'sum', field: 'nope' });
    assert.match((await failure('summarize', 1, params, users)).message, /The field 'nope' does not exist in any items$/);
    assert.deepEqual(await run('summarize', 1, { ...params, options: { continueIfFieldNotFound: true } }, users), [{ sum_nope: 0 }]);
    assert.deepEqual(await run('summarize', 1.1, params, users), [{ sum_nope: 0 }]);
  });

  test('1.1 keeps 1 and "1" apart; skipEmptySplitFields also leaves out null', async () => {
    const items = [{ g: 1 }, { g: '1' }, { g: null }, { g: 1 }];
    assert.deepEqual(await run('summarize', 1.1, { ...summarizing({ field: 'g' }), fieldsToSplitBy: 'g' }, items), [
      { count_g: 2, g: 1 },
      { count_g: 1, g: '1' },
      { count_g: 0, g: null },
    ]);
    assert.deepEqual(await run('summarize', 1.1, { ...summarizing({ field: 'g' }), fieldsToSplitBy: 'g', options: { skipEmptySplitFields: true } }, items), [
      { count_g: 2, g: 1 },
      { count_g: 1, g: '1' },
    ]);
    assert.deepEqual(await run('summarize', 1, { ...summarizing({ field: 'g' }), fieldsToSplitBy: 'g', options: { skipEmptySplitFields: true } }, items), [
      { count_g: 3, g: '1' },
      { count_g: 0, g: 'null' },
    ]);
  });

  test('disableDotNotation reads keys with dots as they are', async () => {
    const out = await run('summarize', 1.1, { ...summarizing({ aggregation: 'sum', field: 'a.b' }), options: { disableDotNotation: true } }, [
      { 'a.b': 2, a: { b: 5 } },
    ]);
    assert.deepEqual(out, [{ sum_a_b: 2 }]);
  });
});
