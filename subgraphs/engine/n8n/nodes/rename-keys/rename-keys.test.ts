import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, outputFailure, runOutput, runWorkflow } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

const key = (...key: { currentKey?: string; newKey?: string }[]) => ({ key });
const regex = (...replacements: Record<string, unknown>[]) => ({ regexReplacement: { replacements } });

describe('n8n Rename Keys 1', () => {
  test('a key is moved to its new name (n8n test workflow)', async () => {
    assert.deepEqual(await runOutput('renameKeys', 1, { keys: key({ currentKey: 'propertyName', newKey: 'test' }) }, [{ propertyName: 0 }]), [{ test: 0 }]);
  });

  test('dot notation on both sides: the old level stays, emptied (n8n test workflow)', async () => {
    const out = await runOutput('renameKeys', 1, { keys: key({ currentKey: 'propertyName.newPropertyName', newKey: 'test.dot' }) }, [
      { propertyName: { newPropertyName: 21 } },
    ]);
    assert.deepEqual(out, [{ propertyName: {}, test: { dot: 21 } }]);
  });

  test('an entry without a new key, or a key the item lacks, changes nothing', async () => {
    const item = { propertyName: { newPropertyName: 21 } };
    assert.deepEqual(await runOutput('renameKeys', 1, { keys: key({ currentKey: 'propertyName.newPropertyName' }) }, [item]), [item]);
    assert.deepEqual(await runOutput('renameKeys', 1, { keys: key({ currentKey: 'nope', newKey: 'x' }) }, [item]), [item]);
  });

  test('renames apply in order, per item, with expressions read per item', async () => {
    const out = await runOutput('renameKeys', 1, { keys: key({ currentKey: 'a', newKey: 'b' }, { currentKey: 'b', newKey: '={{ $json.to }}' }) }, [
      { a: 1, to: 'c' },
      { a: 2, to: 'd' },
    ]);
    assert.deepEqual(out, [
      { to: 'c', c: 1 },
      { to: 'd', d: 2 },
    ]);
  });

  test('regex: matching keys renamed at every depth, in place (n8n test workflow)', async () => {
    const out = await runOutput('renameKeys', 1, { additionalOptions: regex({ searchRegex: 'reg', replaceRegex: 'test', options: {} }) }, [
      { propertyName: { newPropertyName: 0, regular: 1 }, regex: 0 },
    ]);
    assert.deepEqual(out, [{ propertyName: { newPropertyName: 0, testular: 1 }, testex: 0 }]);
    assert.deepEqual(Object.keys(out[0]!), ['propertyName', 'testex']);
  });

  test('regex: depth 0 is the top level only; caseInsensitive; capture groups', async () => {
    const item = { Name_first: 'a', inner: { name_last: 'b' } };
    const top = await runOutput(
      'renameKeys',
      1,
      { additionalOptions: regex({ searchRegex: 'name_(\\w+)', replaceRegex: '$1', options: { depth: 0, caseInsensitive: true } }) },
      [item],
    );
    assert.deepEqual(top, [{ first: 'a', inner: { name_last: 'b' } }]);
    const all = await runOutput('renameKeys', 1, { additionalOptions: regex({ searchRegex: 'name_', replaceRegex: '' }) }, [item]);
    assert.deepEqual(all, [{ Name_first: 'a', inner: { last: 'b' } }]);
  });

  test('a key named __proto__ is renamed as a key, and nothing is polluted', async () => {
    const item = JSON.parse('{"__proto__": {"polluted": 1}, "a": 2}');
    const out = await runOutput('renameKeys', 1, { keys: key({ currentKey: 'a', newKey: '__proto__.polluted' }) }, [item]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(out[0]), Object.prototype);
  });

  test('an invalid regular expression fails the node', async () => {
    const info = await outputFailure('renameKeys', 1, { additionalOptions: regex({ searchRegex: '(', replaceRegex: 'x' }) }, [{ a: 1 }]);
    assert.match(info.message, /Invalid regular expression/);
  });

  test('imported and run inside a workflow after a Set node', async () => {
    const run = await runWorkflow({
      nodes: [
        { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
        {
          name: 'Set',
          type: 'n8n-nodes-base.set',
          typeVersion: 3.4,
          position: [200, 0],
          parameters: { assignments: { assignments: [{ id: '1', name: 'old', value: 5, type: 'number' }] } },
        },
        {
          name: 'Rename',
          type: 'n8n-nodes-base.renameKeys',
          typeVersion: 1,
          position: [400, 0],
          parameters: { keys: key({ currentKey: 'old', newKey: 'new' }) },
        },
      ],
      connections: { Start: { main: [[{ node: 'Set', type: 'main', index: 0 }]] }, Set: { main: [[{ node: 'Rename', type: 'main', index: 0 }]] } },
    });
    assert.equal(run.status, 'success');
    assert.deepEqual(run.result, [{ new: 5 }]);
    assert.equal(importRefusal({ type: 'n8n-nodes-base.renameKeys', typeVersion: 2 })?.reason, 'unsupported_version');
  });
});
