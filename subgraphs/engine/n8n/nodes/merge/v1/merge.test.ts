import assert from 'node:assert/strict';
import { disposeHarness, importRefusal } from '../../../../../../test/support/n8n-harness';
import { merged, mergeNode, same } from '../testing';

afterAll(disposeHarness);

const A = [{ key: 1, v: 'a1', blank: '' }, { key: 2, v: 'a2' }, { key: 9, v: 'a9' }, { v: 'no key' }, { key: { o: 1 }, v: 'object key' }];
const B = [
  { id: '1', v: 'b1', blank: 'filled', extra: 1 },
  { id: 2, v: 'b2', extra: 2 },
  { id: 0, v: 'zero' },
];
const byKey = (mode: string, extra: Record<string, unknown> = {}) => ({ mode, propertyName1: 'key', propertyName2: 'id', ...extra });

describe('n8n Merge 1', () => {
  test('without parameters it appends input 1, then input 2', async () => {
    same(await merged(1, {}, [A.slice(0, 1), B.slice(0, 1)]), [A[0], B[0]]);
  });

  test('merge by key, overwrite always (default): input 2 fields copied in, except its key; unmatched kept, keyless dropped', async () => {
    same(await merged(1, byKey('mergeByKey'), [A, B]), [
      { key: 1, v: 'b1', blank: 'filled', extra: 1 },
      { key: 2, v: 'b2', extra: 2 },
      { key: 9, v: 'a9' },
    ]);
  });

  test('merge by key, overwrite if blank / if missing', async () => {
    same(await merged(1, byKey('mergeByKey', { overwrite: 'blank' }), [A.slice(0, 2), B]), [
      { key: 1, v: 'a1', blank: 'filled', extra: 1 },
      { key: 2, v: 'a2', extra: 2 },
    ]);
    same(await merged(1, byKey('mergeByKey', { overwrite: 'undefined' }), [A.slice(0, 1), B]), [{ key: 1, v: 'a1', blank: '', extra: 1 }]);
  });

  test('keep key matches / remove key matches (keys compare as text: 1 matches "1")', async () => {
    same(await merged(1, byKey('keepKeyMatches'), [A, B]), [A[0], A[1]]);
    same(await merged(1, byKey('removeKeyMatches'), [A, B]), [A[2], A[3], A[4]]);
  });

  test('key names are paths; a missing key name keeps nothing or passes input 1 on', async () => {
    same(await merged(1, byKey('keepKeyMatches', { propertyName1: 'meta.id' }), [[{ meta: { id: 2 }, n: 1 }, { meta: {} }], B]), [{ meta: { id: 2 }, n: 1 }]);
    same(await merged(1, byKey('keepKeyMatches', { propertyName2: '' }), [A, B]), []);
    same(await merged(1, byKey('mergeByKey', { propertyName2: '' }), [A, B]), A);
  });

  test('merge by index: left join (default), inner, outer', async () => {
    const one = [{ a: 1, s: 'x' }, { a: 2 }, { a: 3 }];
    const two = [{ b: 1, s: 'y' }, { b: 2 }];
    same(await merged(1, { mode: 'mergeByIndex' }, [one, two]), [{ a: 1, s: 'y', b: 1 }, { a: 2, b: 2 }, { a: 3 }]);
    same(await merged(1, { mode: 'mergeByIndex', join: 'inner' }, [one, two]), [
      { a: 1, s: 'y', b: 1 },
      { a: 2, b: 2 },
    ]);
    same(await merged(1, { mode: 'mergeByIndex', join: 'outer' }, [two, one]), [{ b: 1, s: 'x', a: 1 }, { b: 2, a: 2 }, { a: 3 }]);
  });

  test('merge by index with an empty input', async () => {
    same(await merged(1, { mode: 'mergeByIndex', join: 'outer' }, [[], [{ b: 1 }]]), [{ b: 1 }]);
    same(await merged(1, { mode: 'mergeByIndex', join: 'left' }, [[], [{ b: 1 }]]), []);
    same(await merged(1, { mode: 'mergeByIndex', join: 'inner' }, [[{ a: 1 }], []]), []);
  });

  test('multiplex, pass-through, wait', async () => {
    same(await merged(1, { mode: 'multiplex' }, [[{ a: 1, s: 1 }, { a: 2 }], [{ s: 9 }]]), [
      { a: 1, s: 9 },
      { a: 2, s: 9 },
    ]);
    same(await merged(1, { mode: 'passThrough' }, [[{ a: 1 }], [{ b: 1 }]]), [{ a: 1 }]);
    same(await merged(1, { mode: 'passThrough', output: 'input2' }, [[{ a: 1 }], [{ b: 1 }]]), [{ b: 1 }]);
    same(await merged(1, { mode: 'wait' }, [[{ a: 1 }], [{ b: 1 }, { b: 2 }]]), [{}]);
  });

  test("an import refuses version 2's modes and unknown values, naming the option", () => {
    assert.equal(importRefusal(mergeNode(1, { mode: 'combine' }))?.option, 'mode');
    assert.equal(importRefusal(mergeNode(1, { mode: 'mergeByIndex', join: 'full' }))?.option, 'join');
    assert.equal(importRefusal(mergeNode(1, byKey('mergeByKey', { overwrite: 'never' })))?.option, 'overwrite');
    assert.equal(importRefusal(mergeNode(1, byKey('removeKeyMatches'))), undefined);
  });
});
