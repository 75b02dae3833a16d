import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, NodeFailed, runNode } from '../../../../../test/support/n8n-harness';
import { merged, mergeFailure as failure, mergeNode, same } from './testing';

afterAll(disposeHarness);

// The inputs of n8n's own Merge v3 tests.
const A = [
  { id: 1, data: 'a', name: 'Sam' },
  { id: 2, data: 'b', name: 'Dan' },
  { id: 3, data: 'c', name: 'Jon' },
  { id: 6, data: 'e', name: 'Ron' },
  { id: 7, data: 'f', name: 'Joe' },
];
const B = [
  { id: 1, data: 'aa', country: 'PL' },
  { id: 2, data: 'bb', country: 'FR' },
  { id: 3, data: 'cc', country: 'UA' },
  { id: 4, data: 'ee', country: 'US' },
  { id: 5, data: 'ff', country: 'ES' },
];
const MATCHED = [
  { id: 1, data: 'aa', name: 'Sam', country: 'PL' },
  { id: 2, data: 'bb', name: 'Dan', country: 'FR' },
  { id: 3, data: 'cc', name: 'Jon', country: 'UA' },
];
const V3 = [3, 3.1, 3.2];
const byFields = (extra: Record<string, unknown> = {}) => ({ mode: 'combine', combineBy: 'combineByFields', fieldsToMatchString: 'id', ...extra });

describe('n8n Merge 3, 3.1, 3.2: append', () => {
  for (const v of V3) {
    test(`${v}: without parameters it appends input 1's items, then input 2's`, async () => {
      same(await merged(v, {}, [A.slice(0, 2), B.slice(0, 1)]), [A[0], A[1], B[0]]);
    });
  }

  test('numberInputs 4: four inputs, in input order (an empty one adds nothing)', async () => {
    same(await merged(3.2, { mode: 'append', numberInputs: 4 }, [[{ a: 1 }], [{ b: 2 }], [], [{ d: 4 }]]), [{ a: 1 }, { b: 2 }, { d: 4 }]);
  });
});

describe('n8n Merge 3: combine by matching fields', () => {
  for (const v of V3) {
    test(`${v}: keep matches (default) merges each match, input 2 winning clashes, input 1's keys first`, async () => {
      same(await merged(v, byFields(), [A, B]), MATCHED);
    });
  }

  test('output data from input 1 / input 2: the matching items unchanged', async () => {
    same(await merged(3.2, byFields({ outputDataFrom: 'input1' }), [A, B]), A.slice(0, 3));
    same(await merged(3.2, byFields({ outputDataFrom: 'input2' }), [A, B]), B.slice(0, 3));
  });

  test('multiple matches: all (default) outputs one item per match, first keeps the first only', async () => {
    const B2 = [...B, { id: 1, data: 'a2', country: 'DE' }];
    const all = await merged(3.2, byFields(), [A.slice(0, 1), B2]);
    same(all, [MATCHED[0], { id: 1, data: 'a2', name: 'Sam', country: 'DE' }]);
    same(await merged(3.2, byFields({ options: { multipleMatches: 'first' } }), [A.slice(0, 1), B2]), [MATCHED[0]]);
  });

  test('multiple matches is ignored where n8n hides it (output data from one input)', async () => {
    const B2 = [...B, { id: 1, data: 'a2', country: 'DE' }];
    same(await merged(3.2, byFields({ outputDataFrom: 'input2', options: { multipleMatches: 'first' } }), [A, B2]), [B2[0], B2[1], B2[2], B2[5]]);
  });

  test('keep non-matches: both inputs with a _source field, or one input', async () => {
    same(await merged(3.2, byFields({ joinMode: 'keepNonMatches' }), [A, B]), [
      { ...A[3], _source: 'input1' },
      { ...A[4], _source: 'input1' },
      { ...B[3], _source: 'input2' },
      { ...B[4], _source: 'input2' },
    ]);
    same(await merged(3.2, byFields({ joinMode: 'keepNonMatches', outputDataFrom: 'input1' }), [A, B]), A.slice(3));
    same(await merged(3.2, byFields({ joinMode: 'keepNonMatches', outputDataFrom: 'input2' }), [A, B]), B.slice(3));
  });

  test('keep everything: the merged matches, then the unmatched of input 1, then of input 2', async () => {
    same(await merged(3.2, byFields({ joinMode: 'keepEverything' }), [A, B]), [...MATCHED, A[3], A[4], B[3], B[4]]);
  });

  test('keep everything with addSuffix: every key suffixed with its input number, unmatched items too', async () => {
    const out = await merged(3.2, byFields({ joinMode: 'keepEverything', options: { clashHandling: { values: { resolveClash: 'addSuffix' } } } }), [
      A.slice(3, 4),
      B.slice(2, 4),
    ]);
    same(out, [
      { id_1: 6, data_1: 'e', name_1: 'Ron' },
      { id_2: 3, data_2: 'cc', country_2: 'UA' },
      { id_2: 4, data_2: 'ee', country_2: 'US' },
    ]);
    same(await merged(3.2, byFields({ options: { clashHandling: { values: { resolveClash: 'addSuffix' } } } }), [A.slice(0, 1), B]), [
      { id_1: 1, data_1: 'a', name_1: 'Sam', id_2: 1, data_2: 'aa', country_2: 'PL' },
    ]);
  });

  test('enrich input 1: all of input 1, matches merged in; enrich input 2 prefers input 1 by default', async () => {
    same(await merged(3.2, byFields({ joinMode: 'enrichInput1' }), [A, B]), [...MATCHED, A[3], A[4]]);
    same(await merged(3.2, byFields({ joinMode: 'enrichInput2' }), [A, B]), [
      { id: 1, data: 'a', country: 'PL', name: 'Sam' },
      { id: 2, data: 'b', country: 'FR', name: 'Dan' },
      { id: 3, data: 'c', country: 'UA', name: 'Jon' },
      B[3],
      B[4],
    ]);
  });

  test('clash handling: prefer input 1 keeps input 1 values (input 2 keys first); preferLast as default', async () => {
    const first = { options: { clashHandling: { values: { resolveClash: 'preferInput1' } } } };
    same(await merged(3.2, byFields(first), [A.slice(0, 1), B]), [{ id: 1, data: 'a', country: 'PL', name: 'Sam' }]);
    const last = { options: { clashHandling: { values: { resolveClash: 'preferLast', mergeMode: 'deepMerge', overrideEmpty: false } } } };
    same(await merged(3.2, byFields(last), [A, B]), MATCHED);
  });

  test('fields with different names (advanced) match input 1 field to input 2 field', async () => {
    const params = { mode: 'combine', advanced: true, mergeByFields: { values: [{ field1: 'id', field2: 'userId' }] } };
    same(
      await merged(3, params, [
        [{ id: 7, a: 1 }],
        [
          { userId: 7, b: 2 },
          { userId: 8, b: 3 },
        ],
      ]),
      [{ id: 7, a: 1, userId: 7, b: 2 }],
    );
  });

  test('several fields must all match; field names are trimmed', async () => {
    const out = await merged(3.1, byFields({ fieldsToMatchString: 'id , kind' }), [
      [
        { id: 1, kind: 'x', a: 1 },
        { id: 1, kind: 'y', a: 2 },
      ],
      [{ id: 1, kind: 'y', b: 1 }],
    ]);
    same(out, [{ id: 1, kind: 'y', a: 2, b: 1 }]);
  });

  test('dot notation reads nested fields unless disabled; disabled, the dotted name is a key', async () => {
    const nested = [[{ user: { id: 1 }, n: 'x' }], [{ user: { id: 1 }, m: 'y' }]];
    same(await merged(3.2, byFields({ fieldsToMatchString: 'user.id' }), nested), [{ user: { id: 1 }, n: 'x', m: 'y' }]);
    same(await merged(3.2, byFields({ fieldsToMatchString: 'user.id', options: { disableDotNotation: true } }), nested), []);
    same(
      await merged(3.2, byFields({ fieldsToMatchString: 'user.id', options: { disableDotNotation: true } }), [[{ 'user.id': 1, n: 'x' }], [{ 'user.id': 1 }]]),
      [{ 'user.id': 1, n: 'x' }],
    );
  });

  test('values match when deeply equal; fuzzy compare also matches "1" with 1 and "true" with true', async () => {
    const inputs = [
      [
        { id: '1', a: 1 },
        { id: { k: [1, 2] }, a: 2 },
        { id: 'TRUE', a: 3 },
      ],
      [
        { id: 1, b: 1 },
        { id: { k: [1, 2] }, b: 2 },
        { id: true, b: 3 },
      ],
    ];
    same(await merged(3.2, byFields(), inputs), [{ id: { k: [1, 2] }, a: 2, b: 2 }]);
    // n8n's loose rules also equate "1" and true, so the first item matches twice.
    same(await merged(3.2, byFields({ options: { fuzzyCompare: true } }), inputs), [
      { id: 1, a: 1, b: 1 },
      { id: true, a: 1, b: 3 },
      { id: { k: [1, 2] }, a: 2, b: 2 },
      { id: true, a: 3, b: 3 },
    ]);
  });

  test('an item without the field matches nothing', async () => {
    same(await merged(3.2, byFields({ joinMode: 'keepNonMatches', outputDataFrom: 'input1' }), [[{ x: 1 }, { id: 1 }], [{ id: 1 }]]), [{ x: 1 }]);
  });

  test('no fields to match fails as in n8n, naming what is missing', async () => {
    assert.match(await failure(3.2, { mode: 'combine' }, [A, B]), /You need to define at least one pair of fields in "Fields to Match"/);
    assert.match(await failure(3.2, byFields({ fieldsToMatchString: 'id,' }), [A, B]), /define both fields in "Fields to Match" for pair 2/);
  });

  test('an empty input: nothing to match, so nothing, or the other input unchanged', async () => {
    same(await merged(3.2, byFields(), [A, []]), []);
    same(await merged(3.2, byFields({ joinMode: 'keepEverything' }), [A.slice(0, 2), []]), A.slice(0, 2));
    same(await merged(3.2, byFields({ joinMode: 'enrichInput1' }), [A.slice(0, 2), []]), A.slice(0, 2));
    same(await merged(3.2, byFields({ joinMode: 'enrichInput2' }), [A.slice(0, 2), []]), []);
    same(await merged(3.2, byFields({ joinMode: 'keepNonMatches' }), [[], B.slice(0, 2)]), B.slice(0, 2));
    same(await merged(3.2, byFields({ joinMode: 'keepNonMatches', outputDataFrom: 'input1' }), [[], B.slice(0, 2)]), []);
  });

  test('parameters may be expressions, resolved once at item 0', async () => {
    same(await merged(3.2, byFields({ fieldsToMatchString: '={{ "i" + "d" }}', joinMode: '={{ "enrichInput1" }}' }), [A, B]), [...MATCHED, A[3], A[4]]);
    assert.match(await failure(3.2, byFields({ joinMode: '={{ "nope" }}' }), [A, B]), /joinMode "nope" is not one of n8n's values/);
  });
});

describe('n8n Merge 3: clash handling of nested fields', () => {
  const X = [{ id: 1, a: { x: 1, list: [1, 2, 3] }, keep: 'x' }];
  const Y = [{ id: 1, a: { list: [9] }, keep: '' }];
  const clash = (values: Record<string, unknown>) => byFields({ options: { clashHandling: { values: { resolveClash: 'preferLast', ...values } } } });

  test('deep merge (default) merges nested objects and arrays index by index', async () => {
    same(await merged(3.2, byFields(), [X, Y]), [{ id: 1, a: { x: 1, list: [9, 2, 3] }, keep: '' }]);
  });

  test('shallow merge takes each top-level field whole from the preferred input', async () => {
    same(await merged(3.2, clash({ mergeMode: 'shallowMerge' }), [X, Y]), [{ id: 1, a: { list: [9] }, keep: '' }]);
  });

  test('minimize empty fields: an empty value never replaces the other version', async () => {
    same(await merged(3.2, clash({ overrideEmpty: true }), [X, Y]), [{ id: 1, a: { x: 1, list: [9, 2, 3] }, keep: 'x' }]);
    same(await merged(3.2, clash({ mergeMode: 'shallowMerge', overrideEmpty: true }), [X, [{ ...Y[0], extra: null }]]), [
      { id: 1, a: { list: [9] }, keep: 'x', extra: null },
    ]);
  });

  test('minimize empty fields with deep merge: nested objects of an item merged twice share both merges, as in n8n; inputs stay unchanged', async () => {
    const input1 = [{ a: { x: 1 } }];
    const all = (values: Record<string, unknown>) => ({ mode: 'combine', combineBy: 'combineAll', options: { clashHandling: { values } } });
    const input2 = [{ a: { y: 2 } }, { a: { z: 3 } }];
    same(await merged(3.2, all({ resolveClash: 'preferLast', overrideEmpty: true }), [input1, input2]), [
      { a: { x: 1, y: 2, z: 3 } },
      { a: { x: 1, y: 2, z: 3 } },
    ]);
    same(input1, [{ a: { x: 1 } }]);
    same(await merged(3.2, all({ resolveClash: 'preferLast' }), [input1, input2]), [{ a: { x: 1, y: 2 } }, { a: { x: 1, z: 3 } }]);
  });
});

describe('n8n Merge 3: combine by position', () => {
  const byPosition = (extra: Record<string, unknown> = {}) => ({ mode: 'combine', combineBy: 'combineByPosition', ...extra });

  test('merges the i-th items, the last input winning clashes', async () => {
    same(await merged(3, byPosition(), [A, B]), [
      { id: 1, data: 'aa', name: 'Sam', country: 'PL' },
      { id: 2, data: 'bb', name: 'Dan', country: 'FR' },
      { id: 3, data: 'cc', name: 'Jon', country: 'UA' },
      { id: 4, data: 'ee', name: 'Ron', country: 'US' },
      { id: 5, data: 'ff', name: 'Joe', country: 'ES' },
    ]);
  });

  test('unpaired items are dropped unless includeUnpaired', async () => {
    same(await merged(3.2, byPosition(), [A.slice(0, 3), B.slice(0, 1)]), [MATCHED[0]]);
    same(await merged(3.2, byPosition({ options: { includeUnpaired: true } }), [A.slice(0, 3), B.slice(0, 1)]), [MATCHED[0], A[1], A[2]]);
  });

  test('an empty input gives nothing (unlike version 2)', async () => {
    same(await merged(3.2, byPosition(), [A, []]), []);
  });

  test('numberInputs 3: the i-th items of all three inputs', async () => {
    same(await merged(3.2, byPosition({ numberInputs: 3 }), [A.slice(0, 2), B.slice(0, 2), [{ extra: true }, { extra: false }]]), [
      { ...MATCHED[0], extra: true },
      { ...MATCHED[1], extra: false },
    ]);
  });

  test('prefer input 1: its values win, keys in input order', async () => {
    const out = await merged(3.2, byPosition({ options: { clashHandling: { values: { resolveClash: 'preferInput1' } } } }), [A.slice(0, 1), B.slice(0, 1)]);
    same(out, [{ id: 1, data: 'a', name: 'Sam', country: 'PL' }]);
  });

  test("addSuffix: suffixed keys, then the last input's fields unsuffixed (n8n merges it once more)", async () => {
    const out = await merged(3.2, byPosition({ options: { clashHandling: { values: { resolveClash: 'addSuffix' } } } }), [A.slice(0, 1), B.slice(0, 1)]);
    same(out, [{ id_1: 1, data_1: 'a', name_1: 'Sam', id_2: 1, data_2: 'aa', country_2: 'PL', id: 1, data: 'aa', country: 'PL' }]);
  });
});

describe('n8n Merge 3: all possible combinations', () => {
  const all = (values?: Record<string, unknown>) => ({
    mode: 'combine',
    combineBy: 'combineAll',
    ...(values ? { options: { clashHandling: { values } } } : {}),
  });

  test('every item of input 1 with every item of input 2, in that order', async () => {
    same(
      await merged(3.1, all(), [
        [{ a: 1 }, { a: 2 }],
        [{ b: 1 }, { b: 2 }],
      ]),
      [
        { a: 1, b: 1 },
        { a: 1, b: 2 },
        { a: 2, b: 1 },
        { a: 2, b: 2 },
      ],
    );
    assert.equal((await merged(3, all(), [A, B])).length, 25);
  });

  test('prefer input 1: input 1 merged last, so input 2 leads the order and the keys', async () => {
    const out = await merged(3.2, all({ resolveClash: 'preferInput1' }), [
      [
        { k: 'a1', x: 1 },
        { k: 'a2', x: 2 },
      ],
      [
        { k: 'b1', y: 1 },
        { k: 'b2', y: 2 },
      ],
    ]);
    same(out, [
      { k: 'a1', y: 1, x: 1 },
      { k: 'a2', y: 1, x: 2 },
      { k: 'a1', y: 2, x: 1 },
      { k: 'a2', y: 2, x: 2 },
    ]);
  });

  test('addSuffix', async () => {
    same(await merged(3.2, all({ resolveClash: 'addSuffix' }), [[{ k: 1 }], [{ k: 2 }]]), [{ k_1: 1, k_2: 2 }]);
  });
});

describe('n8n Merge 3: choose branch', () => {
  const choose = (extra: Record<string, unknown> = {}) => ({ mode: 'chooseBranch', ...extra });

  test('outputs input 1 by default, or the input useDataOfInput names', async () => {
    same(await merged(3.2, choose(), [A, B]), A);
    same(await merged(3, choose({ useDataOfInput: 2 }), [A, B]), B);
    same(await merged(3.2, choose({ numberInputs: 3, useDataOfInput: 3 }), [A, B, [{ c: 3 }]]), [{ c: 3 }]);
  });

  test('a single empty item', async () => {
    same(await merged(3.2, choose({ output: 'empty' }), [A, B]), [{}]);
  });

  test('needs data on inputs 1 and 2 (n8n does not run it otherwise); input 3 may be empty', async () => {
    same(await merged(3.2, choose({ output: 'empty' }), [A, []]), []);
    same(await merged(3.2, choose({ numberInputs: 3 }), [A, B, []]), A);
  });

  test('an input beyond numberInputs fails as in n8n', async () => {
    assert.equal(await failure(3.2, choose({ useDataOfInput: 3 }), [A, B]), `Node "Node" failed: Input 3 doesn't exist`);
  });
});

describe('n8n Merge 3: what an import refuses', () => {
  for (const v of V3) {
    test(`${v}: SQL Query mode, naming the mode and what it would need`, () => {
      const refusal = importRefusal(mergeNode(v, { mode: 'combineBySql', query: 'SELECT * FROM input1' }));
      assert.equal(refusal?.reason, 'unsupported_option');
      assert.equal(refusal?.option, 'mode');
      assert.match(refusal!.message, /combineBySql.*SQL engine/);
    });
  }

  test('a typeVersion n8n does not have', () => {
    const refusal = importRefusal(mergeNode(4));
    assert.equal(refusal?.reason, 'unsupported_version');
    assert.deepEqual(refusal?.supportedVersions, [1, 2, 2.1, 3, 3.1, 3.2]);
  });

  test('values n8n does not offer', () => {
    assert.equal(importRefusal(mergeNode(3.2, { mode: 'append', numberInputs: 11 }))?.option, 'numberInputs');
    assert.equal(importRefusal(mergeNode(3.2, byFields({ joinMode: 'outer' })))?.option, 'joinMode');
    const v2Value = importRefusal(mergeNode(3.2, byFields({ options: { clashHandling: { values: { resolveClash: 'preferInput2' } } } })));
    assert.equal(v2Value?.option, 'options.clashHandling.values.resolveClash');
    assert.match(v2Value!.message, /preferLast/);
    assert.equal(
      importRefusal(mergeNode(3.2, byFields({ options: { clashHandling: { values: { mergeMode: 'deepMerge' } } } })))?.option,
      'options.clashHandling',
    );
  });

  test('accepted: every mode with its options, and expressions in option values', () => {
    assert.equal(
      importRefusal(mergeNode(3.2, byFields({ joinMode: '={{ $json.mode }}', options: { fuzzyCompare: true, multipleMatches: 'first' } }))),
      undefined,
    );
    assert.equal(importRefusal(mergeNode(3.1, { mode: 'combine', combineBy: 'combineByPosition', numberInputs: 5 })), undefined);
    assert.equal(importRefusal(mergeNode(3, { mode: 'chooseBranch', output: 'empty' })), undefined);
  });
});

describe("n8n Merge in n8n's v1 order: expressions read the first input that has items", () => {
  const node = { type: 'n8n-nodes-base.merge', typeVersion: 1, parameters: { mode: 'passThrough', output: '={{ $json.out }}' } };

  test("input 1 empty, input 2 with items: $json is input 2's first item", async () => {
    const out = await runNode(node, [[], [{ out: 'input2', n: 1 }]], { settings: { executionOrder: 'v1' } });
    assert.deepEqual(out, [[{ out: 'input2', n: 1 }]]);
  });

  test("with items on input 1, $json stays input 1's first item", async () => {
    const out = await runNode(node, [[{ out: 'input1', n: 0 }], [{ out: 'input2', n: 1 }]], { settings: { executionOrder: 'v1' } });
    assert.deepEqual(out, [[{ out: 'input1', n: 0 }]]);
  });
});
