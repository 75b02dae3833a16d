import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, NodeFailed, runNode } from '../../../../../../test/support/n8n-harness';
import { merged, mergeFailure as failure, mergeNode, same } from '../testing';

afterAll(disposeHarness);

// The inputs of n8n's pinned Merge 2 test workflows (combine by fields / by position).
const A = [
  { id: 1, data: 'a', input: 1, text: 'foo' },
  { id: 2, data: 'b', input: 1, text: 'foo' },
];
const B = [
  { id: 1, data: 'c', input: 2, tag: 'second' },
  { id: 2, data: 'd', input: 2, tag: 'second' },
  { id: 3, data: 'e', input: 2, tag: 'second' },
];
const MATCHED = [
  { id: 1, data: 'c', input: 2, text: 'foo', tag: 'second' },
  { id: 2, data: 'd', input: 2, text: 'foo', tag: 'second' },
];
const V2 = [2, 2.1];
const byFields = (extra: Record<string, unknown> = {}) => ({
  mode: 'combine',
  mergeByFields: { values: [{ field1: 'id', field2: 'id' }] },
  options: {},
  ...extra,
});

describe('n8n Merge 2 and 2.1', () => {
  for (const v of V2) {
    test(`${v}: without parameters it appends input 1, then input 2`, async () => {
      same(await merged(v, {}, [A, B]), [...A, ...B]);
    });

    test(`${v}: merge by fields, keep matches (the default output type)`, async () => {
      same(await merged(v, byFields(), [A, B]), MATCHED);
    });

    test(`${v}: keep non-matches, keep everything, enrich input 1 and 2`, async () => {
      same(await merged(v, byFields({ joinMode: 'keepNonMatches' }), [A, B]), [{ ...B[2], _source: 'input2' }]);
      same(await merged(v, byFields({ joinMode: 'keepEverything' }), [A, B]), [...MATCHED, B[2]]);
      same(await merged(v, byFields({ joinMode: 'enrichInput1' }), [A, B]), MATCHED);
      same(await merged(v, byFields({ joinMode: 'enrichInput2' }), [A, B]), [
        { id: 1, data: 'a', input: 1, tag: 'second', text: 'foo' },
        { id: 2, data: 'b', input: 1, tag: 'second', text: 'foo' },
        B[2],
      ]);
    });

    test(`${v}: output data from input 1 or input 2; addSuffix`, async () => {
      same(await merged(v, byFields({ outputDataFrom: 'input1' }), [A, B]), A);
      same(await merged(v, byFields({ outputDataFrom: 'input2' }), [A, B]), B.slice(0, 2));
      same(await merged(v, byFields({ options: { clashHandling: { values: { resolveClash: 'addSuffix' } } } }), [A, B]), [
        { id_1: 1, data_1: 'a', input_1: 1, text_1: 'foo', id_2: 1, data_2: 'c', input_2: 2, tag_2: 'second' },
        { id_1: 2, data_1: 'b', input_1: 1, text_1: 'foo', id_2: 2, data_2: 'd', input_2: 2, tag_2: 'second' },
      ]);
    });

    test(`${v}: prefer input 2 (preferInput2) with shallow merge, and fuzzy compare`, async () => {
      const clash = { clashHandling: { values: { resolveClash: 'preferInput2', mergeMode: 'shallowMerge' } } };
      same(await merged(v, byFields({ options: clash }), [[{ id: 1, o: { a: 1 } }], [{ id: 1, o: { b: 2 } }]]), [{ id: 1, o: { b: 2 } }]);
      same(await merged(v, byFields({ options: { fuzzyCompare: true } }), [[{ id: '1', a: 1 }], [{ id: 1, b: 2 }]]), [{ id: 1, a: 1, b: 2 }]);
    });

    test(`${v}: "Fields to Match" left at its default fails as in n8n`, async () => {
      assert.match(await failure(v, { mode: 'combine' }, [A, B]), /You need to define at least one pair of fields in "Fields to Match"/);
    });
  }

  test('2: a field no item of an input has fails (Merge 2.1 no longer does)', async () => {
    const missing = byFields({ mergeByFields: { values: [{ field1: 'idd', field2: 'idd' }] } });
    assert.match(await failure(2, missing, [A, B]), /Field 'idd' is not present in any of items in 'Input 1'/);
    assert.match(await failure(2, byFields(), [A, []]), /Field 'id' is not present in any of items in 'Input 2'/);
    same(await merged(2.1, missing, [A, B]), []);
    same(await merged(2.1, { ...missing, joinMode: 'keepEverything' }, [A, B]), [...A, ...B]);
    same(await merged(2.1, byFields(), [A, []]), []);
  });

  test('2.1: an empty input 2 with keep non-matches passes input 1 on; from input 2 gives nothing', async () => {
    same(await merged(2.1, byFields({ joinMode: 'keepNonMatches' }), [A, []]), A);
    same(await merged(2.1, byFields({ joinMode: 'keepNonMatches', outputDataFrom: 'input2' }), [A, []]), []);
  });
});

describe('n8n Merge 2: merge by position and multiplex', () => {
  const P1 = [
    { id: 1, data: 'a', input: 1 },
    { id: 2, data: 'b', input: 1 },
  ];
  const P2 = [
    { id: 1, data: 'c', input: 2 },
    { id: 2, data: 'd', input: 2 },
    { id: 3, data: 'e', input: 2 },
  ];
  const byPosition = (options: Record<string, unknown> = {}) => ({ mode: 'combine', combinationMode: 'mergeByPosition', options });
  const resolve = (resolveClash: string) => ({ clashHandling: { values: { resolveClash } } });

  test('merges the i-th items, input 2 winning by default; addSuffix; prefer input 1', async () => {
    same(await merged(2, byPosition(), [P1, P2]), P2.slice(0, 2));
    same(await merged(2, byPosition(resolve('addSuffix')), [P1, P2]), [
      { id_1: 1, data_1: 'a', input_1: 1, id_2: 1, data_2: 'c', input_2: 2 },
      { id_1: 2, data_1: 'b', input_1: 1, id_2: 2, data_2: 'd', input_2: 2 },
    ]);
    same(await merged(2.1, byPosition(resolve('preferInput1')), [P1, P2]), P1);
  });

  test('includeUnpaired keeps the items with no partner', async () => {
    same(await merged(2, byPosition({ ...resolve('preferInput2'), includeUnpaired: true }), [P1, P2]), P2);
  });

  test('an empty input passes the other one on unchanged (unlike version 3)', async () => {
    same(await merged(2, byPosition(resolve('addSuffix')), [P1, []]), P1);
  });

  test('multiplex: every combination; prefer input 1 puts input 2 first', async () => {
    const multiplex = (options: Record<string, unknown> = {}) => ({ mode: 'combine', combinationMode: 'multiplex', options });
    same(await merged(2, multiplex(), [[{ a: 1 }, { a: 2 }], [{ b: 1 }]]), [
      { a: 1, b: 1 },
      { a: 2, b: 1 },
    ]);
    same(
      await merged(2.1, multiplex(resolve('preferInput1')), [
        [{ k: 'a', x: 1 }],
        [
          { k: 'b', y: 1 },
          { k: 'c', y: 2 },
        ],
      ]),
      [
        { k: 'a', y: 1, x: 1 },
        { k: 'a', y: 2, x: 1 },
      ],
    );
    same(await merged(2, multiplex(), [[{ a: 1 }], []]), []);
  });
});

describe('n8n Merge 2: choose branch', () => {
  test('input 1 by default, input 2, or a single empty item', async () => {
    same(await merged(2, { mode: 'chooseBranch' }, [A, B]), A);
    same(await merged(2.1, { mode: 'chooseBranch', output: 'input2' }, [A, B]), B);
    same(await merged(2, { mode: 'chooseBranch', chooseBranchMode: 'waitForBoth', output: 'empty' }, [A, B]), [{}]);
  });

  test('waits for both inputs: with one of them empty there is no output', async () => {
    same(await merged(2, { mode: 'chooseBranch', output: 'input2' }, [[], B]), []);
  });
});

describe('n8n Merge 2: what an import refuses', () => {
  test("version 3's names for its values", () => {
    const refusal = importRefusal(mergeNode(2.1, byFields({ options: { clashHandling: { values: { resolveClash: 'preferLast' } } } })));
    assert.equal(refusal?.reason, 'unsupported_option');
    assert.equal(refusal?.option, 'options.clashHandling.values.resolveClash');
    assert.match(refusal!.message, /preferInput2/);
    assert.equal(importRefusal(mergeNode(2, { mode: 'combine', combineBy: 'combineAll', combinationMode: 'combineAll' }))?.option, 'combinationMode');
  });

  test('accepted as exported by n8n', () => {
    assert.equal(importRefusal(mergeNode(2, byFields({ joinMode: 'enrichInput2', options: { multipleMatches: 'first' } }))), undefined);
    assert.equal(importRefusal(mergeNode(2.1, { mode: 'chooseBranch', output: 'empty' })), undefined);
  });
});
