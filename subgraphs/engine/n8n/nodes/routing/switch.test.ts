import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runNode, type Json, type NodeUnderTest } from '../../../../../test/support/n8n-harness';
import { connectionRefusal, failure } from './testing';

afterAll(disposeHarness);

/** n8n's Switch (switch.ts): which output each item leaves by, per version. */

const sw = (typeVersion: number, parameters: Json, settings: Json = {}): NodeUnderTest => ({
  type: 'n8n-nodes-base.switch',
  typeVersion,
  parameters,
  ...settings,
});
const CONTINUE = { onError: 'continueRegularOutput' };

describe('n8n Switch 1', () => {
  const items = [{ n: 1 }, { n: 5 }, { n: 12 }];
  const rules = {
    rules: [
      { operation: 'equal', value2: 1, output: 2 },
      { operation: 'larger', value2: 4, output: 1 },
      { operation: 'larger', value2: 2, output: 0 },
    ],
  };

  test('rules: the first matching rule sends the item to its output, of four', async () => {
    assert.deepEqual(await runNode(sw(1, { value1: '={{ $json.n }}', rules }), items), [[], [items[1], items[2]], [items[0]], []]);
  });

  test('rules: unmatched items go to the fallback output, or nowhere (-1, the default)', async () => {
    const one = { rules: [{ operation: 'equal', value2: 5 }] };
    assert.deepEqual(await runNode(sw(1, { value1: '={{ $json.n }}', rules: one, fallbackOutput: 3 }), items), [[items[1]], [], [], [items[0], items[2]]]);
    assert.deepEqual(await runNode(sw(1, { value1: '={{ $json.n }}', rules: one }), items), [[items[1]], [], [], []]);
  });

  test('rules on strings and dates (a date rule without value2 compares with 0)', async () => {
    const strings = {
      rules: [
        { operation: 'regex', value2: '/^k/i', output: 1 },
        { operation: 'notEqual', value2: 'x', output: 2 },
      ],
    };
    const words = [{ w: 'Kiwi' }, { w: 'apple' }, { w: 'x' }];
    assert.deepEqual(await runNode(sw(1, { dataType: 'string', value1: '={{ $json.w }}', rules: strings }), words), [[], [words[0]], [words[1]], []]);
    const dates = { rules: [{ operation: 'before', value2: '2000-01-01', output: 1 }, { output: 2 }] };
    const days = [{ d: '1999-12-31' }, { d: '2020-05-01' }];
    assert.deepEqual(await runNode(sw(1, { dataType: 'dateTime', value1: '={{ $json.d }}', rules: dates }), days), [[], [days[0]], [days[1]], []]);
  });

  test('expression: the output is the index the expression gives; out of 0 to 3 fails the node', async () => {
    const node = sw(1, { mode: 'expression', output: '={{ $json.o }}' });
    assert.deepEqual(await runNode(node, [{ o: 3 }, { o: 0 }, { o: '2' }]), [[{ o: 0 }], [], [{ o: '2' }], [{ o: 3 }]]);
    const info = await failure(node, [{ o: 4 }]);
    assert.equal(info.message, 'Node "Node" failed: The output 4 is not allowed. It has to be between 0 and 3!');
  });

  test('with onError continueRegularOutput, an item that fails becomes { error } on output 0', async () => {
    const node = sw(1, { mode: 'expression', output: '={{ $json.o }}' }, CONTINUE);
    assert.deepEqual(await runNode(node, [{ o: 9 }, { o: 1 }]), [
      [{ error: 'The output 9 is not allowed. It has to be between 0 and 3!' }],
      [{ o: 1 }],
      [],
      [],
    ]);
  });
});

describe('n8n Switch 2', () => {
  const items = [{ s: 'red' }, { s: 'green' }, { s: 'blue' }];
  const rules = {
    rules: [
      { value2: 'red', outputKey: 'R' },
      { operation: 'startsWith', value2: 'g' },
    ],
  };

  test('rules: one output per rule, the first matching rule wins', async () => {
    assert.deepEqual(await runNode(sw(2, { dataType: 'string', value1: '={{ $json.s }}', rules }), items), [[items[0]], [items[1]]]);
  });

  test("rules: the fallback output is one of the rules' outputs", async () => {
    assert.deepEqual(await runNode(sw(2, { dataType: 'string', value1: '={{ $json.s }}', rules, fallbackOutput: 0 }), items), [
      [items[0], items[2]],
      [items[1]],
    ]);
    const info = await failure(sw(2, { dataType: 'string', value1: '={{ $json.s }}', rules, fallbackOutput: 2 }), items);
    assert.match(info.message, /The output 2 is not allowed\. It has to be between 0 and 1!/);
  });

  test('rules: number comparisons with the default operation (smaller)', async () => {
    const node = sw(2, { value1: '={{ $json.n }}', rules: { rules: [{ value2: 0 }, { value2: 10 }] } });
    assert.deepEqual(await runNode(node, [{ n: -3 }, { n: 3 }, { n: 30 }]), [[{ n: -3 }], [{ n: 3 }]]);
  });

  test('expression: outputsAmount outputs (4 by default); the output index may be text', async () => {
    const node = sw(2, { mode: 'expression', outputsAmount: 2, output: '={{ $json.o }}' });
    assert.deepEqual(await runNode(node, [{ o: 1 }, { o: '0' }]), [[{ o: '0' }], [{ o: 1 }]]);
    assert.deepEqual((await runNode(sw(2, { mode: 'expression', output: '={{ $json.o }}' }), [{ o: 3 }])).length, 4);
  });

  test('expression: an output that is not an index fails the node', async () => {
    const info = await failure(sw(2, { mode: 'expression', outputsAmount: 2, output: '={{ $json.o }}' }), [{ o: 'left' }]);
    assert.match(info.message, /cannot be sent to output "left"/);
  });

  test('outputs are the rules: connections beyond them are refused', async () => {
    assert.equal(await connectionRefusal(sw(2, { rules }), 1), undefined);
    assert.equal((await connectionRefusal(sw(2, { rules }), 2))?.reason, 'invalid_output');
    assert.equal(await connectionRefusal(sw(2, { mode: 'expression', outputsAmount: 6 }), 5), undefined);
  });

  test('an outputsAmount given as an expression is refused, naming it', () => {
    const refusal = importRefusal(sw(2, { mode: 'expression', outputsAmount: '={{ 3 }}' }));
    assert.equal(refusal?.reason, 'unsupported_option');
    assert.equal(refusal?.option, 'outputsAmount');
    assert.match(refusal!.message, /outputsAmount is an expression.*fixed value/);
  });
});

const STRICT = { caseSensitive: true, leftValue: '', typeValidation: 'strict' };

/** A rule comparing `v` with rightValue; `options: null` stores no filter options (as written by hand). */
function rule(rightValue: unknown, operation = 'equals', extra: Json = {}, options: Json | null = STRICT): Json {
  const conditions = [{ leftValue: '={{ $json.v }}', rightValue, operator: { type: typeof rightValue === 'number' ? 'number' : 'string', operation } }];
  return { conditions: { ...(options ? { options } : {}), conditions, combinator: 'and' }, ...extra };
}

describe('n8n Switch 3, 3.1, 3.2', () => {
  const items = [{ v: 'a' }, { v: 'b' }, { v: 'c' }];

  test('rules: one output per rule, the first match wins; unmatched items are dropped', async () => {
    for (const version of [3, 3.1, 3.2]) {
      const node = sw(version, { rules: { values: [rule('a'), rule('b', 'equals', { renameOutput: true, outputKey: 'B' })] } });
      assert.deepEqual(await runNode(node, items), [[items[0]], [items[1]]], `version ${version}`);
    }
  });

  test('rules: allMatchingOutputs sends an item to every output whose rule matches', async () => {
    const values = [rule('a', 'notEquals'), rule('b', 'notEquals'), rule('c')];
    assert.deepEqual(await runNode(sw(3.2, { rules: { values } }), items), [[items[1], items[2]], [items[0]], []]);
    assert.deepEqual(await runNode(sw(3.2, { rules: { values }, options: { allMatchingOutputs: true } }), items), [
      [items[1], items[2]],
      [items[0], items[2]],
      [items[2]],
    ]);
  });

  test("fallbackOutput: extra adds a last output (renamed or not), an index reuses a rule's output", async () => {
    const values = [rule('a')];
    assert.deepEqual(await runNode(sw(3.2, { rules: { values }, options: { fallbackOutput: 'extra', renameFallbackOutput: 'Other' } }), items), [
      [items[0]],
      [items[1], items[2]],
    ]);
    assert.deepEqual(await runNode(sw(3.2, { rules: { values: [rule('a'), rule('b')] }, options: { fallbackOutput: 0 } }), items), [
      [items[0], items[2]],
      [items[1]],
    ]);
    assert.deepEqual(await runNode(sw(3.2, { rules: { values }, options: { fallbackOutput: 'none' } }), items), [[items[0]]]);
    assert.equal(await connectionRefusal(sw(3.2, { rules: { values }, options: { fallbackOutput: 'extra' } }), 1), undefined);
    assert.equal((await connectionRefusal(sw(3.2, { rules: { values } }), 1))?.reason, 'invalid_output');
  });

  test('fallbackOutput: an index past the rules fails the item', async () => {
    const info = await failure(sw(3.2, { rules: { values: [rule('a')] }, options: { fallbackOutput: 1 } }), items);
    assert.equal(info.message, 'Node "Node" failed: The output 1 is not allowed.');
    assert.match(String(info.details.description), /zero based/);
  });

  test("rules left at n8n's default (one rule, empty equals empty) send every item to output 0", async () => {
    assert.deepEqual(await runNode(sw(3, {}), items), [items]);
  });

  test('no rules: one empty output', async () => {
    assert.deepEqual(await runNode(sw(3, { rules: { values: [] } }), items), [[]]);
  });

  test("ignoreCase and looseTypeValidation apply through the rules' filters as n8n's editor sets them", async () => {
    const upper = [{ v: 'A' }];
    assert.deepEqual(await runNode(sw(3.2, { rules: { values: [rule('a', 'equals', {}, null)] }, options: { ignoreCase: true } }), upper), [upper]);
    assert.deepEqual(await runNode(sw(3.2, { rules: { values: [rule('a', 'equals', {}, null)] } }), upper), [[]]);
    const text = [{ v: '7' }];
    await failure(sw(3.1, { rules: { values: [rule(7, 'equals', {}, null)] }, options: { looseTypeValidation: true } }), text);
    assert.deepEqual(await runNode(sw(3.1, { rules: { values: [rule(7, 'equals', {}, null)] }, looseTypeValidation: true }), text), [text]);
    assert.deepEqual(await runNode(sw(3, { rules: { values: [rule(7, 'equals', {}, null)] }, options: { looseTypeValidation: true } }), text), [text]);
  });

  test('a rule that fails on a wrong type names condition and item; with onError continue it becomes { error } on output 0', async () => {
    const values = [rule(3, 'gt'), rule(10, 'lt')];
    const info = await failure(sw(3.2, { rules: { values } }), [{ v: 5 }, { v: 'x' }]);
    assert.equal(info.message, 'Node "Node" failed: Wrong type: \'x\' is a string but was expecting a number [condition 0, item 1]');
    const out = await runNode(sw(3.2, { rules: { values } }, CONTINUE), [{ v: 5 }, { v: 'x' }, { v: 1 }]);
    assert.deepEqual(out, [[{ v: 5 }, { error: "Wrong type: 'x' is a string but was expecting a number [condition 0, item 1]" }], [{ v: 1 }]]);
  });

  test('expression: numberOutputs outputs, the index read as a number', async () => {
    const node = sw(3.2, { mode: 'expression', numberOutputs: 3, output: '={{ $json.o }}' });
    assert.deepEqual(await runNode(node, [{ o: 2 }, { o: '0' }]), [[{ o: '0' }], [], [{ o: 2 }]]);
  });

  test("expression: an index that is no number, or the output after the last, fails with n8n's wording", async () => {
    const node = sw(3.2, { mode: 'expression', numberOutputs: 2, output: '={{ $json.o }}' });
    const invalid = await failure(node, [{ o: 'two' }]);
    assert.equal(invalid.message, 'Node "Node" failed: Invalid input for \'Output Index\' [item 0]');
    assert.equal(invalid.details.description, "'output' expects a number but we got 'two'");
    const past = await failure(node, [{ o: 2 }]);
    assert.equal(past.message, 'Node "Node" failed: The output 2 is not allowed.');
    assert.equal(past.details.description, 'Output indexes are zero based, if you want to use the extra output use 1');
  });

  test('numberOutputs must be known when saving: an expression is refused, a fraction is invalid', () => {
    const expression = importRefusal(sw(3.2, { mode: 'expression', numberOutputs: '={{ $json.n }}' }));
    assert.equal(expression?.option, 'numberOutputs');
    assert.equal(importRefusal(sw(3.2, { mode: 'expression', numberOutputs: 2.5 }))?.reason, 'invalid_parameter');
    assert.equal(importRefusal(sw(3.2, { rules: { values: [rule('a')] }, options: { fallbackOutput: '={{ "extra" }}' } }))?.option, 'options.fallbackOutput');
    assert.equal(importRefusal(sw(3.2, { mode: 'expression', numberOutputs: 2 })), undefined);
  });
});
