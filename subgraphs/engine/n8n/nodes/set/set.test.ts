import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runWorkflow } from '../../../../../test/support/n8n-harness';
import { assertItems, runSet, setNode } from './testing';

afterAll(disposeHarness);

/** n8n's Set test workflow's input item (its Code node). */
const INPUT = { nested: { foo: 'bar' }, list: ['foo'] };
const VALUES = {
  string: [{ name: 'string', value: 'foo' }],
  number: [{ name: 'number', value: 1 }],
  boolean: [{ name: 'boolean', value: true }],
};

describe('n8n Set 1 and 2', () => {
  for (const version of [1, 2]) {
    test(`version ${version}: values go after the item's fields, booleans first, then numbers, then strings`, async () => {
      const out = await runSet(version, { values: VALUES, options: {} }, [INPUT]);
      assertItems(out, [{ nested: { foo: 'bar' }, list: ['foo'], boolean: true, number: 1, string: 'foo' }]);
    });

    test(`version ${version}: keepOnlySet drops the item's other fields`, async () => {
      const out = await runSet(version, { keepOnlySet: true, values: VALUES, options: {} }, [INPUT]);
      assertItems(out, [{ boolean: true, number: 1, string: 'foo' }]);
    });
  }

  test('dot notation (the default) writes nested fields and array elements', async () => {
    const nested = {
      string: [{ name: 'nested.string', value: 'foo' }],
      boolean: [{ name: 'nested.boolean', value: true }],
      number: [{ name: 'nested.number', value: 1 }],
    };
    assertItems(await runSet(1, { values: nested, options: {} }, [INPUT]), [
      { nested: { foo: 'bar', boolean: true, number: 1, string: 'foo' }, list: ['foo'] },
    ]);
    const listed = { string: [{ name: 'list[1]', value: 'bar' }], boolean: [{ name: 'list[2]', value: true }], number: [{ name: 'list[3]', value: 1 }] };
    assertItems(await runSet(1, { values: listed, options: {} }, [INPUT]), [{ nested: { foo: 'bar' }, list: ['foo', 'bar', true, 1] }]);
  });

  test('dotNotation false writes names as they are', async () => {
    const nested = {
      string: [{ name: 'nested.string', value: 'foo' }],
      boolean: [{ name: 'nested.boolean', value: true }],
      number: [{ name: 'nested.number', value: 1 }],
    };
    const out = await runSet(2, { values: nested, options: { dotNotation: false } }, [INPUT]);
    assertItems(out, [{ nested: { foo: 'bar' }, list: ['foo'], 'nested.boolean': true, 'nested.number': 1, 'nested.string': 'foo' }]);
  });

  test('version 1 keeps a number field given as text as text; version 2 makes it a number when it reads as one', async () => {
    const values = {
      number: [
        { name: 'n', value: '123456' },
        { name: 'word', value: 'abc' },
        { name: 'empty', value: '' },
      ],
    };
    assertItems(await runSet(1, { keepOnlySet: true, values }, [{}]), [{ n: '123456', word: 'abc', empty: '' }]);
    assertItems(await runSet(2, { keepOnlySet: true, values }, [{}]), [{ n: 123456, word: 'abc', empty: 0 }]);
  });

  test('a boolean field is the truthiness of its value; unstored names and values take n8n defaults', async () => {
    const values = {
      boolean: [{ name: 'text', value: '={{ $json.flag }}' }, { name: 'zero', value: 0 }, { name: 'unset' }],
      number: [{ name: 'count' }],
      string: [{ value: 'x' }, { name: 'blank' }],
    };
    const out = await runSet(1, { keepOnlySet: true, values }, [{ flag: 'false' }]);
    assertItems(out, [{ text: true, zero: false, unset: false, count: 0, propertyName: 'x', blank: '' }]);
  });

  test('expressions are resolved for each item', async () => {
    const values = { number: [{ name: 'double', value: '={{ $json.a * 2 }}' }], string: [{ name: 'label', value: '=item {{ $json.a }}' }] };
    const out = await runSet(2, { values }, [{ a: 1 }, { a: 5 }]);
    assertItems(out, [
      { a: 1, double: 2, label: 'item 1' },
      { a: 5, double: 10, label: 'item 5' },
    ]);
  });

  test('a field the item has keeps its place; a dotted key the item has is written as that key', async () => {
    const values = {
      string: [
        { name: 'a', value: 'new' },
        { name: 'x.y', value: 'literal' },
      ],
    };
    const out = await runSet(1, { values }, [{ a: 'old', 'x.y': 'before', z: 1 }]);
    assertItems(out, [{ a: 'new', 'x.y': 'literal', z: 1 }]);
  });

  test('a path through a non-object replaces it; writing past an array end fills the gap with null', async () => {
    const values = {
      string: [
        { name: 'a.b', value: 'v' },
        { name: 'list[3]', value: 'w' },
        { name: 'fresh[1].k', value: 'z' },
      ],
    };
    const out = await runSet(1, { keepOnlySet: false, values }, [{ a: 'text', list: ['x'] }]);
    assertItems(out, [{ a: { b: 'v' }, list: ['x', null, null, 'w'], fresh: [null, { k: 'z' }] }]);
  });

  test('a path through __proto__, constructor or prototype writes nothing', async () => {
    const values = {
      string: [
        { name: '__proto__.polluted', value: 'yes' },
        { name: 'a.constructor.b', value: 'no' },
      ],
    };
    const out = await runSet(1, { keepOnlySet: true, values }, [{}]);
    assertItems(out, [{ a: {} }]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('n8n Set: input items are never modified', () => {
  const input = { a: { b: 1, keep: { deep: true } }, list: [1, 2] };
  const cases: [string, number, Record<string, unknown>][] = [
    [
      'version 1',
      1,
      {
        values: {
          number: [
            { name: 'a.b', value: 2 },
            { name: 'list[0]', value: 9 },
          ],
        },
      },
    ],
    [
      'version 3.4, all input fields',
      3.4,
      {
        assignments: {
          assignments: [
            { id: '1', name: 'a.b', value: 2, type: 'number' },
            { id: '2', name: 'list[0]', value: 9, type: 'number' },
          ],
        },
        includeOtherFields: true,
      },
    ],
    ['version 3.2, all except', 3.2, { include: 'except', excludeFields: 'a.keep.deep, list[1]' }],
  ];
  for (const [label, version, parameters] of cases) {
    test(label, async () => {
      const workflow = {
        nodes: [
          { name: 'Input', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 0], parameters: {} },
          { name: 'Pass', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [200, 0], parameters: {} },
          { name: 'Set', position: [400, 0], ...setNode(version, parameters) },
        ],
        connections: { Input: { main: [[{ node: 'Pass', type: 'main', index: 0 }]] }, Pass: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
      };
      const run = await runWorkflow(workflow, { pinned: { Input: [[structuredClone(input)]] } });
      assert.equal(run.status, 'success');
      assertItems(run.nodes.get('Pass')![0], [input]);
      assert.notDeepEqual(run.nodes.get('Set')![0], [input]);
    });
  }
});

describe('n8n Set: what an import accepts', () => {
  test('versions 1, 2 and 3 to 3.4 are accepted, others refused naming them', () => {
    for (const typeVersion of [1, 2, 3, 3.1, 3.2, 3.3, 3.4]) assert.equal(importRefusal(setNode(typeVersion, {})), undefined, `version ${typeVersion}`);
    const refusal = importRefusal(setNode(3.5, {}));
    assert.equal(refusal?.reason, 'unsupported_version');
    assert.deepEqual(refusal?.supportedVersions, [1, 2, 3, 3.1, 3.2, 3.3, 3.4]);
  });

  test('a mode other than manual or raw is refused', () => {
    const refusal = importRefusal(setNode(3.4, { mode: 'json' }));
    assert.equal(refusal?.reason, 'invalid_parameter');
    assert.equal(refusal?.parameter, 'mode');
    assert.match(refusal!.message, /"json".*"manual".*"raw"/);
  });
});
