import assert from 'node:assert/strict';
import { importRefusal, runWorkflow } from '../../../../../test/support/n8n-harness';
import { assertItems, direct, disposeCodeTesting, each, failure, node, run } from './testing';

/**
 * n8n's Code node, its two modes and what n8n does with what the code returns: outputs compared
 * with what n8n produces for the same code (its task runner's behaviour, n8n's own tests and test
 * workflow for the node), errors with n8n's messages; and what is refused at import.
 */

afterAll(disposeCodeTesting);

describe('n8n Code: Run Once for All Items', () => {
  test('1 and 2: the default code adds a field to every item through $input.all()', async () => {
    const source =
      "// Loop over input items and add a new field\n// called 'myNewField' to the JSON of each one\nfor (const item of $input.all()) {\n  item.json.myNewField = 1;\n}\n\nreturn $input.all();";
    for (const version of [1, 2]) {
      assertItems(await run(source, [{ value: 1 }, { value: 2 }], { version }), [
        { value: 1, myNewField: 1 },
        { value: 2, myNewField: 1 },
      ]);
    }
  });

  test('the legacy `items` variable holds the input items (n8n test workflow: sum 3)', async () => {
    const source = 'let sum = 0;\nfor (const item of items) {\n  sum += item.json.value;\n}\n\nreturn [ {sum} ];';
    assertItems(await run(source, [{ value: 1 }, { value: 2 }], { version: 1 }), [{ sum: 3 }]);
  });

  test('plain objects are wrapped as items; {json} items are taken as they are', async () => {
    assertItems(await run('return [{ b: 1 }, { b: 2 }]'), [{ b: 1 }, { b: 2 }]);
    assertItems(await run('return [{ json: { b: 1 } }, { json: { c: 2 }, pairedItem: { item: 0 } }]'), [{ b: 1 }, { c: 2 }]);
  });

  test('a single object is one item, wrapped or not', async () => {
    assertItems(await run('return { b: 1 }', [{}, {}]), [{ b: 1 }]);
    assertItems(await run('return { json: { b: 1 } }'), [{ b: 1 }]);
    // A falsy json is not an item's json: the whole object is.
    assertItems(await run('return { json: 0, b: 1 }'), [{ json: 0, b: 1 }]);
  });

  test('null and an empty list give no items', async () => {
    assertItems(await run('return null', [{ a: 1 }]), []);
    assertItems(await run('return []', [{ a: 1 }]), []);
  });

  test("objects with only n8n's item keys are still json (n8n wraps them)", async () => {
    assertItems(await run('return [{ index: 1 }, { error: "x" }]'), [{ index: 1 }, { error: 'x' }]);
  });

  test('values become JSON: dates as ISO text, undefined dropped', async () => {
    assertItems(await run('return [{ d: new Date(0), u: undefined, n: null }]'), [{ d: '1970-01-01T00:00:00.000Z', n: null }]);
  });

  test('returning nothing, text, a number or a list of non-objects fails as n8n does', async () => {
    for (const body of ['const a = 1;', 'return "text"', 'return 5', 'return [1, 2]', 'return [{ a: 1 }, null]']) {
      assert.equal(await failure(body), "Code doesn't return items properly", body);
    }
  });

  test("an item's json must be an object", async () => {
    for (const json of ['"text"', '[1]', 'null', 'new Date()']) {
      assert.equal(await failure(`return [{ json: ${json} }]`), "A 'json' property isn't an object [item 0]", json);
    }
    assert.equal(await failure('return [{ json: {} }, { json: 1 }]'), "A 'json' property isn't an object [item 1]");
  });

  test('an item key next to plain fields, or a plain field next to items, is refused', async () => {
    assert.equal(await failure('return [{ json: { a: 1 }, extra: 1 }]'), 'Invalid output format [item 0]');
    assert.equal(await failure('return [{ json: { a: 1 } }, { b: 2 }]'), 'Unknown top-level item key: b [item 1]');
    assert.equal(await failure('return [{ json: { a: 1 } }, { pairedItem: 0 }]'), 'Inconsistent item format');
  });

  test("returned binary data passes on as the item's files; a 'binary' that is not an object fails", async () => {
    const out = await direct('return [{ json: { a: 1 }, binary: { data: { data: "aGk=", mimeType: "text/plain" } } }]', [{}]);
    assert.deepEqual(out.items, [{ a: 1 }]);
    assert.equal(out.binary[0]?.data?.data, 'aGk=');
    assert.equal(out.binary[0]?.data?.mimeType, 'text/plain');
    assert.deepEqual(out.logs, []);
    assert.equal(await failure('return [{ json: {}, binary: "x" }]'), "A 'binary' property isn't an object [item 0]");
  });

  test('`item` does not exist when running once for all items', async () => {
    assert.equal(await failure('const x = 1;\nreturn item;'), 'item is not defined [line 2]');
  });

  test('empty code fails', async () => {
    assert.equal(await failure(''), 'No code to execute');
  });
});

describe('n8n Code: Run Once for Each Item', () => {
  test('1 and 2: the default code adds a field to each item through $input.item (n8n test workflow)', async () => {
    const source =
      "// Add a new field called 'myNewField' to the\n// JSON of the item\n$input.item.json.myNewField = $input.item.json.value;\n\nreturn $input.item;";
    for (const version of [1, 2]) {
      assertItems(await each(source, [{ value: 1 }, { value: 2 }], { version }), [
        { value: 1, myNewField: 1 },
        { value: 2, myNewField: 2 },
      ]);
    }
  });

  test('the legacy `item`, $json and $itemIndex are the current item', async () => {
    assertItems(await each('item.json.n = item.json.value;\nreturn item;', [{ value: 1 }, { value: 2 }], { version: 1 }), [
      { value: 1, n: 1 },
      { value: 2, n: 2 },
    ]);
    assertItems(await each('return { ...$json, idx: $itemIndex }', [{ a: 1 }, { b: 2 }]), [
      { a: 1, idx: 0 },
      { b: 2, idx: 1 },
    ]);
  });

  test('a plain object is wrapped; an item is taken as it is', async () => {
    assertItems(await each('return { b: $json.a }', [{ a: 1 }]), [{ b: 1 }]);
    assertItems(await each('return { json: { b: $json.a }, extra: 1 }', [{ a: 1 }]), [{ b: 1 }]);
  });

  test('null, nothing or another falsy value passes no item on', async () => {
    assertItems(await each('return $json.a === 1 ? item : null', [{ a: 1 }, { a: 2 }, { a: 3 }]), [{ a: 1 }]);
    assertItems(await each('if ($json.a === 2) return $json;', [{ a: 1 }, { a: 2 }]), [{ a: 2 }]);
    assertItems(await each('return $json.a > 1 ? 0 : ""', [{ a: 1 }, { a: 2 }]), []);
  });

  test('a value that is not an object fails, counted among the items passed on', async () => {
    assert.equal(await failure('return "text"', [{}], { mode: 'runOnceForEachItem' }), "A 'json' property isn't an object [item 0]");
    assert.equal(await failure('return [$json]', [{}], { mode: 'runOnceForEachItem' }), "A 'json' property isn't an object [item 0]");
    assert.equal(
      await failure('return $itemIndex === 0 ? null : { json: 5 }', [{}, {}], { mode: 'runOnceForEachItem' }),
      "A 'json' property isn't an object [item 0]",
    );
    assert.equal(await failure('return { json: {}, binary: "x" }', [{}], { mode: 'runOnceForEachItem' }), "A 'binary' property isn't an object [item 0]");
  });

  test('methods that read every item are refused, naming the line', async () => {
    assert.equal(
      await failure('// all items\nconst all = $input.all();\nreturn all[0];', [{}], { mode: 'runOnceForEachItem' }),
      "Can't use .all() here [line 2, for item 0]",
    );
    assert.equal(await failure('return $input.first()', [{}], { mode: 'runOnceForEachItem' }), "Can't use .first() here [line 1, for item 0]");
  });

  test('`items` does not exist when running once per item', async () => {
    assert.equal(await failure('return items[0]', [{}], { mode: 'runOnceForEachItem' }), 'items is not defined [line 1]');
  });

  test('binary data on the returned item passes on; a file without data fails', async () => {
    const out = await direct('return { json: $json, binary: { file: { data: "aGk=", fileName: "a.txt" } } }', [{ a: 1 }], { mode: 'runOnceForEachItem' });
    assert.deepEqual(out.items, [{ a: 1 }]);
    assert.equal(out.binary[0]?.file?.mimeType, 'text/plain');
    assert.equal(out.binary[0]?.file?.bytes, 2);
    assert.equal(
      await failure('return { json: $json, binary: { file: { data: "" } } }', [{}], { mode: 'runOnceForEachItem' }),
      "Binary field 'file' has no data [item 0]",
    );
  });

  test('each item may wait on timers of its own', async () => {
    assertItems(await each('await new Promise((r) => setTimeout(r, 100 - $itemIndex * 10));\nreturn { i: $itemIndex }', [{}, {}, {}]), [
      { i: 0 },
      { i: 1 },
      { i: 2 },
    ]);
  });
});

describe('n8n Code: what is refused at import', () => {
  test('Python, in either of its languages, and an unknown language', () => {
    for (const language of ['python', 'pythonNative']) {
      const refusal = importRefusal(node('', { language }));
      assert.equal(refusal?.reason, 'unsupported_option');
      assert.equal(refusal?.option, `language: ${language}`);
      assert.match(refusal!.message, /Python runtime/);
    }
    assert.match(importRefusal(node('return []', { language: 'ruby' }))!.message, /"ruby" is not one of n8n's/);
  });

  test('version 1 has no language: its code is JavaScript whatever the parameter says', async () => {
    assert.equal(importRefusal(node('return []', { version: 1, language: 'python' })), undefined);
    assertItems(await run('return { js: true }', [{}], { version: 1, language: 'python' }), [{ js: true }]);
  });

  const gaps: [string, string][] = [
    ['await this.helpers.httpRequest({ url: "http://x" });', 'helpers.httpRequest'],
    ['return { v: $evaluateExpression("{{ 1 + 1 }}") }', '$evaluateExpression'],
    ['return { v: $fromAI("x") }', '$fromAI'],
    ['return { v: $jmespath($json, "a") }', '$jmespath'],
    ['return { v: $getPairedItem("A", null, 0) }', '$getPairedItem'],
    ['return $input.params', '$input.params'],
    ['return $("Input 1").params', '$(…).params'],
    ['return $node["Input 1"].parameter', '$node[…].parameter'],
    ['$execution.customData.set("k", "v");', '$execution.customData'],
    ['return { u: $execution.resumeFormUrl }', '$execution.resumeFormUrl'],
    ['return { b: Buffer.from("x").toString("base64") }', 'Buffer'],
    ['return { t: new TextEncoder().encode("x") }', 'TextEncoder'],
  ];
  for (const [source, uses] of gaps) {
    test(`code using ${uses}`, () => {
      const refusal = importRefusal(node(source));
      assert.equal(refusal?.reason, 'unsupported_option');
      assert.equal(refusal?.option, `jsCode: ${uses}`);
      assert.match(refusal!.message, /would need/);
    });
  }

  test('a mention in a comment is not a use', () => {
    assert.equal(importRefusal(node('// $getWorkflowStaticData would be nice\n/* Buffer */\nreturn []')), undefined);
  });

  test('an unknown mode and an unknown version', () => {
    assert.equal(
      importRefusal({ type: 'n8n-nodes-base.code', typeVersion: 2, parameters: { mode: 'sometimes', jsCode: 'return []' } })?.reason,
      'invalid_parameter',
    );
    assert.equal(importRefusal(node('return []', { version: 3 }))?.reason, 'unsupported_version');
  });
});

describe('n8n Code: a failed check of what the code returned, with the node set to go on', () => {
  const workflow = (onError: string, jsCode: string, mode = 'runOnceForAllItems') => ({
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 0], parameters: {} },
      { name: 'Code', type: 'n8n-nodes-base.code', typeVersion: 2, onError, position: [200, 0], parameters: { jsCode, mode } },
      { name: 'Next', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [400, 0], parameters: {} },
      { name: 'Failed', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [400, 200], parameters: {} },
    ],
    connections: {
      Start: { main: [[{ node: 'Code', type: 'main', index: 0 }]] },
      Code: {
        main: [[{ node: 'Next', type: 'main', index: 0 }], ...(onError === 'continueErrorOutput' ? [[{ node: 'Failed', type: 'main', index: 0 }]] : [])],
      },
    },
  });

  test('continueRegularOutput: the next node runs with the {error} item', async () => {
    const run = await runWorkflow(workflow('continueRegularOutput', 'return 5;'), { pinned: { Start: [[{ a: 1 }, { a: 2 }]] } });
    assert.equal(run.status, 'success');
    assert.deepEqual(run.nodes.get('Next'), [[{ error: "Code doesn't return items properly" }]]);
  });

  test('continueErrorOutput: the error output runs, the regular one has nothing', async () => {
    const run = await runWorkflow(workflow('continueErrorOutput', "return [{ json: 'text' }];"), { pinned: { Start: [[{ a: 1 }]] } });
    assert.equal(run.status, 'success');
    assert.match(String(run.nodes.get('Failed')?.[0]?.[0]?.error), /A 'json' property isn't an object/);
    assert.equal(run.nodes.get('Next'), undefined);
  });

  test('for each item: only the item whose result fails the check becomes an {error} item', async () => {
    const run = await runWorkflow(workflow('continueRegularOutput', 'return $json.a === 2 ? { json: 3 } : { json: { b: $json.a } };', 'runOnceForEachItem'), {
      pinned: { Start: [[{ a: 1 }, { a: 2 }]] },
    });
    assert.equal(run.status, 'success');
    const out = run.nodes.get('Next')?.[0];
    assert.deepEqual(out?.[0], { b: 1 });
    assert.match(String(out?.[1]?.error), /A 'json' property isn't an object/);
  });

  test('without going on, the execution fails with the check', async () => {
    const run = await runWorkflow(workflow('stopWorkflow', 'return 5;'), { pinned: { Start: [[{ a: 1 }]] } });
    assert.equal(run.status, 'error');
    assert.match(run.error!.message, /Code doesn't return items properly/);
  });
});
