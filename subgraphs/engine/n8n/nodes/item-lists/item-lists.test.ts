import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runWorkflow, type Json } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

const VERSIONS: Record<string, number[]> = {
  itemLists: [1, 2, 2.1, 2.2, 3, 3.1],
  aggregate: [1],
  limit: [1],
  removeDuplicates: [1, 1.1, 2],
  sort: [1],
  splitOut: [1],
  summarize: [1, 1.1],
};

describe('n8n item-list nodes: types and versions', () => {
  test('each node imports at the versions n8n still runs, and no other', () => {
    for (const [name, versions] of Object.entries(VERSIONS)) {
      for (const typeVersion of versions) assert.equal(importRefusal({ type: `n8n-nodes-base.${name}`, typeVersion }), undefined, `${name} ${typeVersion}`);
      const refusal = importRefusal({ type: `n8n-nodes-base.${name}`, typeVersion: 9 });
      assert.equal(refusal?.reason, 'unsupported_version', name);
      assert.deepEqual(refusal?.supportedVersions, versions, name);
    }
  });

  test('Item Lists 1-2 concatenate with "aggregateItems", 3 with "concatenateItems"; the other name is refused', () => {
    assert.equal(importRefusal({ type: 'n8n-nodes-base.itemLists', typeVersion: 2.2, parameters: { operation: 'aggregateItems' } }), undefined);
    assert.equal(importRefusal({ type: 'n8n-nodes-base.itemLists', typeVersion: 3.1, parameters: { operation: 'concatenateItems' } }), undefined);
    const old = importRefusal({ type: 'n8n-nodes-base.itemLists', typeVersion: 3, parameters: { operation: 'aggregateItems' } });
    assert.equal(old?.reason, 'invalid_parameter');
    assert.match(old!.message, /"aggregateItems" is not an operation of Item Lists 3 \(it has concatenateItems, limit/);
    assert.match(
      importRefusal({ type: 'n8n-nodes-base.itemLists', typeVersion: 1, parameters: { operation: 'concatenateItems' } })!.message,
      /not an operation of Item Lists 1/,
    );
  });
});

describe('n8n Item Lists 3 in a workflow (n8n test case)', () => {
  const customers = [
    { id: '23423532', name: 'Jay Gatsby', email: 'gatsby@west-egg.com', notes: 'Keeps asking about a green light??', country: 'US', created: '1925-04-10' },
    {
      id: '23423533',
      name: 'José Arcadio Buendía',
      email: 'jab@macondo.co',
      notes: 'Lots of people named after him. Very confusing',
      country: 'CO',
      created: '1967-05-05',
    },
    {
      id: '23423534',
      name: 'Max Sendak',
      email: 'info@in-and-out-of-weeks.org',
      notes: 'Keeps rolling his terrible eyes',
      country: 'US',
      created: '1963-04-09',
    },
    {
      id: '23423535',
      name: 'Zaphod Beeblebrox',
      email: 'captain@heartofgold.com',
      notes: 'Felt like I was talking to more than one person',
      country: null,
      created: '1979-10-12',
    },
    { id: '23423536', name: 'Edmund Pevensie', email: 'edmund@narnia.gov', notes: 'Passionate sailor', country: 'UK', created: '1950-10-16' },
  ];
  const node = (name: string, x: number, parameters: Json) => ({ name, type: 'n8n-nodes-base.itemLists', typeVersion: 3, position: [x, 0], parameters });
  const link = (...to: string[]) => ({ main: [to.map((n) => ({ node: n, type: 'main', index: 0 }))] });
  const workflow = {
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
      node('Concatenate', 200, {
        operation: 'concatenateItems',
        fieldsToAggregate: { fieldToAggregate: [{ fieldToAggregate: 'email' }, { fieldToAggregate: 'notes' }] },
        options: {},
      }),
      node('Sort', 200, { operation: 'sort', sortFieldsUi: { sortField: [{ fieldName: 'country' }] }, options: {} }),
      node('First 4', 400, { operation: 'limit', maxItems: 4 }),
      node('One per country', 600, { operation: 'removeDuplicates', compare: 'selectedFields', fieldsToCompare: 'country', options: {} }),
      node('Some fields', 200, {
        operation: 'concatenateItems',
        aggregate: 'aggregateAllItemData',
        include: 'specifiedFields',
        fieldsToInclude: 'country, notes, name, created',
      }),
      node('Split', 400, { fieldToSplitOut: 'data', include: 'allOtherFields', options: { destinationFieldName: 'newData' } }),
      node('Summary', 600, {
        operation: 'summarize',
        fieldsToSummarize: {
          values: [
            { aggregation: 'append', field: 'newData.notes' },
            { aggregation: 'max', field: 'newData.created' },
            { aggregation: 'min', field: 'newData.created' },
          ],
        },
        options: {},
      }),
    ],
    connections: {
      Start: link('Concatenate', 'Sort', 'Some fields'),
      Sort: link('First 4'),
      'First 4': link('One per country'),
      'Some fields': link('Split'),
      Split: link('Summary'),
    },
  };

  test("concatenate, sort, limit, remove duplicates, split out and summarize give n8n's items", async () => {
    const run = await runWorkflow(workflow, { input: customers });
    assert.equal(run.status, 'success', JSON.stringify(run.error));
    assert.deepEqual(run.nodes.get('Concatenate')?.[0], [{ email: customers.map((c) => c.email), notes: customers.map((c) => c.notes) }]);
    assert.deepEqual(
      run.nodes.get('One per country')?.[0]?.map((c) => c.name),
      ['José Arcadio Buendía', 'Edmund Pevensie', 'Jay Gatsby'],
    );
    const split = run.nodes.get('Split')?.[0] ?? [];
    assert.deepEqual(split[3], {
      newData: { name: 'Zaphod Beeblebrox', notes: 'Felt like I was talking to more than one person', country: null, created: '1979-10-12' },
    });
    assert.deepEqual(run.nodes.get('Summary')?.[0], [
      { appended_newData_notes: customers.map((c) => c.notes), max_newData_created: '1979-10-12', min_newData_created: '1925-04-10' },
    ]);
  });
});
