import assert from 'node:assert/strict';
import { NodeFailed, runNode, type Json } from '../../../../../test/support/n8n-harness';

/** Test helpers for the Set node's tests (set*.test.ts). */

/** Output items compared with n8n's: values, types, item count and the order of keys at every level. */
export function assertItems(actual: Json[] | undefined, expected: Json[]): void {
  assert.deepEqual(actual, expected);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected), 'key order differs');
}

/** A Set node at `typeVersion` with n8n node settings (onError, …) besides its parameters. */
export function setNode(typeVersion: number, parameters: Json, settings: Json = {}) {
  return { type: 'n8n-nodes-base.set', typeVersion, parameters, ...settings };
}

/** The items of the single output of a Set node run on `items`. */
export async function runSet(typeVersion: number, parameters: Json, items: Json[], settings: Json = {}): Promise<Json[]> {
  const out = await runNode(setNode(typeVersion, parameters, settings), items);
  assert.equal(out.length, 1, 'the Set node has one output');
  return out[0]!;
}

/** The failure a run ends with (the harness throws NodeFailed), its message without the node prefix. */
export async function failureOf(run: Promise<unknown>): Promise<{ message: string; details: Json }> {
  try {
    await run;
  } catch (err) {
    assert.ok(err instanceof NodeFailed, `expected a node failure, got ${String(err)}`);
    return { message: err.info.message.replace(/^Node "Node" failed: /, ''), details: err.info.details };
  }
  assert.fail('the node did not fail');
}

/** The item of n8n's Set test workflows (its Code node's output). */
export const TYPED_INPUT: Json = {
  string: {
    test2: 'hello',
    test3: ' ',
    test4: '',
    test5: '3',
    test6: '3,14',
    test7: '3.14',
    test8: 'TRUE',
    test9: 'false',
    test10: '1',
    test11: '["apples", "oranges"]',
    test12: '"apples", "oranges"',
    test13: '[1, 2]',
    test14: '{"a": 1, "b": { "c": 10, "d": "test"}}',
    test15: '{"a": 1}',
    test16: 'null',
    test17: 'undefined',
    test18: '0',
  },
  number: { test1: 52472, test2: -1, test3: 0, test4: 1.334535, test5: null, test7: 1 },
  boolean: { test3: true, test4: false },
  array: { test13: [1, 2, 3, 4] },
  object: { obj: { objKey: 2, objArray: [1, 2, 3, 4], objBool: true } },
};

/** A field: its name, type, the input path its expression reads, and the value n8n outputs. */
export type FieldCase = [name: string, type: string, path: string, expected: unknown];

/** The strict conversions of n8n's Set test workflows (their pinData). */
export const STRICT_CASES: Record<string, FieldCase[]> = {
  'to string': [
    ['numberToString1', 'string', 'number.test1', '52472'],
    ['numberToString2', 'string', 'number.test2', '-1'],
    ['numberToString3', 'string', 'number.test4', '1.334535'],
    ['boolToString1', 'string', 'boolean.test3', 'true'],
    ['boolToString2', 'string', 'boolean.test4', 'false'],
    ['arrayToString1', 'string', 'array.test13', '[1,2,3,4]'],
    ['objectToString1', 'string', 'object.obj', '{"objKey":2,"objArray":[1,2,3,4],"objBool":true}'],
  ],
  'to number': [
    ['stringToNumber1', 'number', 'string.test5', 3],
    ['stringToNumber2', 'number', 'string.test7', 3.14],
    ['boolToNumber1', 'number', 'boolean.test3', 1],
    ['boolToNumber2', 'number', 'boolean.test4', 0],
  ],
  'to boolean': [
    ['stringToBoolean1', 'boolean', 'string.test8', true],
    ['stringToBoolean3', 'boolean', 'string.test9', false],
    ['stringToBoolean4', 'boolean', 'string.test10', true],
    ['stringToBoolean5', 'boolean', 'string.test18', false],
    ['numberToBoolean1', 'boolean', 'number.test3', false],
    ['numberToBoolean2', 'boolean', 'number.test7', true],
  ],
  'to array': [
    ['stringToArray1', 'array', 'string.test11', ['apples', 'oranges']],
    ['stringToArray2', 'array', 'string.test13', [1, 2]],
    ['arrayToArray1', 'array', 'array.test13', [1, 2, 3, 4]],
  ],
  'to object': [
    ['stringToObject1', 'object', 'string.test14', { a: 1, b: { c: 10, d: 'test' } }],
    ['stringToObject2', 'object', 'string.test15', { a: 1 }],
  ],
};

/** With "Ignore Type Conversion Errors": what does not convert is kept as it is. */
export const LOOSE_CASES: Record<string, FieldCase[]> = {
  'to number': [
    ['stringToNumber1', 'number', 'string.test2', 'hello'],
    ['stringToNumber2', 'number', 'string.test3', 0],
    ['stringToNumber3', 'number', 'string.test9', 'false'],
    ['arrayToNumber1', 'number', 'array.test13', [1, 2, 3, 4]],
  ],
  'to boolean': [
    ['stringToBoolean1', 'boolean', 'string.test5', '3'],
    ['stringToBoolean3', 'boolean', 'string.test7', '3.14'],
    ['stringToBoolean4', 'boolean', 'string.test11', '["apples", "oranges"]'],
    ['stringToBoolean5', 'boolean', 'string.test12', '"apples", "oranges"'],
    ['stringToBoolean6', 'boolean', 'string.test17', 'undefined'],
    ['numberToBoolean1', 'boolean', 'number.test1', 52472],
    ['numberToBoolean2', 'boolean', 'number.test4', 1.334535],
  ],
  'to array': [
    ['stringToArray1', 'array', 'string.test2', 'hello'],
    ['stringToArray2', 'array', 'string.test5', '3'],
  ],
  'to object': [
    ['stringToObject1', 'object', 'string.test14', { a: 1, b: { c: 10, d: 'test' } }],
    ['stringToObject2', 'object', 'string.test15', { a: 1 }],
  ],
};

/** The item n8n outputs for these fields (include none). */
export function expectedOf(cases: FieldCase[]): Json {
  return Object.fromEntries(cases.map(([name, , , value]) => [name, value]));
}

/** Set 3.0–3.2's `fields.values` for these fields, each an expression reading its path. */
export function listedFields(cases: FieldCase[]): Json {
  return { values: cases.map(([name, type, path]) => ({ name, type: `${type}Value`, [`${type}Value`]: `={{ $json.${path} }}` })) };
}

/** Set 3.3+'s `assignments` for these fields. */
export function assignments(cases: FieldCase[]): Json {
  return { assignments: cases.map(([name, type, path], i) => ({ id: String(i), name, value: `={{ $json.${path} }}`, type })) };
}
