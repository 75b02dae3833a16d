import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, outputFailure, runOutput, runWorkflow } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

const ADAM = { id: 1, firstName: 'Adam', secondName: 'Smith', fullName: 'Adam Smith' };
const ADAM_XML =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<data>\n  <id>1</id>\n  <firstName>Adam</firstName>\n  <secondName>Smith</secondName>\n  <fullName>Adam Smith</fullName>\n</data>';

describe('n8n XML 1', () => {
  test('jsonToxml: the item as XML in `data`, its single key the root (n8n test workflow)', async () => {
    assert.deepEqual(await runOutput('xml', 1, { mode: 'jsonToxml', options: {} }, [{ data: ADAM }]), [{ data: ADAM_XML }]);
  });

  test('jsonToxml headless: no declaration (n8n test workflow)', async () => {
    const out = await runOutput('xml', 1, { mode: 'jsonToxml', options: { headless: true } }, [{ data: ADAM }]);
    assert.deepEqual(out, [{ data: ADAM_XML.slice(ADAM_XML.indexOf('\n') + 1) }]);
  });

  test('xmlToJson (the default mode): attributes merged, single children not in arrays (n8n test workflow)', async () => {
    const xml =
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?> <data> <id>1</id> <firstName>Adam</firstName> <secondName>Smith</secondName> <fullName>Adam Smith</fullName> </data>';
    assert.deepEqual(await runOutput('xml', 1, { options: {} }, [{ data: xml }]), [
      { data: { id: '1', firstName: 'Adam', secondName: 'Smith', fullName: 'Adam Smith' } },
    ]);
  });

  test('xmlToJson options: explicitArray, explicitRoot, mergeAttrs off with attrkey/charkey, ignoreAttrs, trim, normalizeTags', async () => {
    const xml = '<Root><Item kind="a"> one </Item><Item kind="b">two</Item></Root>';
    const item = [{ body: xml }];
    assert.deepEqual(await runOutput('xml', 1, { dataPropertyName: 'body', options: { explicitRoot: false } }, item), [
      {
        Item: [
          { _: ' one ', kind: 'a' },
          { _: 'two', kind: 'b' },
        ],
      },
    ]);
    assert.deepEqual(await runOutput('xml', 1, { dataPropertyName: 'body', options: { mergeAttrs: false, attrkey: '@', charkey: '#', trim: true } }, item), [
      {
        Root: {
          Item: [
            { '#': 'one', '@': { kind: 'a' } },
            { '#': 'two', '@': { kind: 'b' } },
          ],
        },
      },
    ]);
    assert.deepEqual(await runOutput('xml', 1, { dataPropertyName: 'body', options: { ignoreAttrs: true, normalizeTags: true, explicitArray: true } }, item), [
      { root: { item: [' one ', 'two'] } },
    ]);
  });

  test('jsonToxml options: rootName, attrkey, charkey, cdata', async () => {
    const out = await runOutput('xml', 1, { mode: 'jsonToxml', dataPropertyName: 'xml', options: { rootName: 'order', headless: true, cdata: true } }, [
      { id: 7, note: 'a < b', tag: { $: { lang: 'en' }, _: 'hi' } },
    ]);
    assert.deepEqual(out, [{ xml: '<order>\n  <id>7</id>\n  <note><![CDATA[a < b]]></note>\n  <tag lang="en">hi</tag>\n</order>' }]);
  });

  test('a round trip through both modes, then Set (n8n test workflow)', async () => {
    const run = await runWorkflow(
      {
        nodes: [
          { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
          { name: 'XML', type: 'n8n-nodes-base.xml', typeVersion: 1, position: [200, 0], parameters: { mode: 'jsonToxml', options: {} } },
          { name: 'XML1', type: 'n8n-nodes-base.xml', typeVersion: 1, position: [400, 0], parameters: { options: {} } },
          {
            name: 'Set',
            type: 'n8n-nodes-base.set',
            typeVersion: 2,
            position: [600, 0],
            parameters: { values: { string: [{ name: 'new', value: '={{ $json.a }}' }] }, options: {} },
          },
        ],
        connections: {
          Start: { main: [[{ node: 'XML', type: 'main', index: 0 }]] },
          XML: { main: [[{ node: 'XML1', type: 'main', index: 0 }]] },
          XML1: { main: [[{ node: 'Set', type: 'main', index: 0 }]] },
        },
        settings: { executionOrder: 'v1' },
      },
      { input: [{ a: { b: { c: 1 } } }] },
    );
    assert.equal(run.status, 'success');
    assert.deepEqual(run.result, [{ a: { b: { c: '1' } }, new: { b: { c: '1' } } }]);
  });

  test('a missing property or invalid XML fails the node with its message; with onError continue the item is left out, as in n8n', async () => {
    const missing = await outputFailure('xml', 1, {}, [{ other: 1 }]);
    assert.equal(missing.message, 'Node "Node" failed: No json property "data" does not exists on item!');
    const bad = await outputFailure('xml', 1, {}, [{ data: 'not xml' }]);
    assert.match(bad.message, /Non-whitespace before first tag/);
    const run = await runWorkflow(
      {
        nodes: [
          { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
          { name: 'XML', type: 'n8n-nodes-base.xml', typeVersion: 1, position: [200, 0], parameters: {}, onError: 'continueRegularOutput' },
        ],
        connections: { Start: { main: [[{ node: 'XML', type: 'main', index: 0 }]] } },
      },
      { input: [{ data: 'not xml' }, { data: '<a>1</a>' }] },
    );
    assert.equal(run.status, 'success');
    assert.deepEqual(run.result, [{ a: '1' }]);
  });

  test('an element named __proto__ stays a key of the output', async () => {
    const [out] = await runOutput('xml', 1, {}, [{ data: '<r><__proto__><x>1</x></__proto__></r>' }]);
    assert.equal(({} as Record<string, unknown>).x, undefined);
    assert.equal(Object.getPrototypeOf(out!.r), Object.prototype);
  });

  test('inside an Execute Workflow given its workflow as JSON', async () => {
    const inner = {
      nodes: [
        { name: 'Trigger', type: 'n8n-nodes-base.executeWorkflowTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
        {
          name: 'XML',
          type: 'n8n-nodes-base.xml',
          typeVersion: 1,
          position: [200, 0],
          parameters: { mode: 'jsonToxml', options: { headless: true, rootName: 'p' } },
        },
      ],
      connections: { Trigger: { main: [[{ node: 'XML', type: 'main', index: 0 }]] } },
    };
    const run = await runWorkflow(
      {
        nodes: [
          { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
          {
            name: 'Run',
            type: 'n8n-nodes-base.executeWorkflow',
            typeVersion: 1,
            position: [200, 0],
            parameters: { source: 'parameter', workflowJson: JSON.stringify(inner) },
          },
        ],
        connections: { Start: { main: [[{ node: 'Run', type: 'main', index: 0 }]] } },
      },
      { input: [{ a: 1, b: 2 }] },
    );
    assert.equal(run.status, 'success', JSON.stringify(run.error));
    assert.deepEqual(run.result, [{ data: '<p>\n  <a>1</a>\n  <b>2</b>\n</p>' }]);
  });

  test('an unknown mode is refused at import; version 2 does not exist', () => {
    assert.equal(importRefusal({ type: 'n8n-nodes-base.xml', typeVersion: 1, parameters: { mode: 'yaml' } })?.field ?? 'refused', 'refused');
    assert.equal(importRefusal({ type: 'n8n-nodes-base.xml', typeVersion: 2 })?.reason, 'unsupported_version');
  });
});
