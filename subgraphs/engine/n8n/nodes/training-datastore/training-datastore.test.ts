import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runOutput, runWorkflow } from '../../../../../test/support/n8n-harness';

afterAll(disposeHarness);

const names = (items: Record<string, unknown>[]) => items.map((i) => i.name);

describe("n8n's Customer Datastore (n8n training) 1", () => {
  test('getOnePerson (the default): Jay Gatsby, once per input item', async () => {
    const out = await runOutput('n8nTrainingCustomerDatastore', 1, {}, [{}, {}]);
    assert.deepEqual(out, [
      { id: '23423532', name: 'Jay Gatsby', email: 'gatsby@west-egg.com', notes: 'Keeps asking about a green light??', country: 'US', created: '1925-04-10' },
      { id: '23423532', name: 'Jay Gatsby', email: 'gatsby@west-egg.com', notes: 'Keeps asking about a green light??', country: 'US', created: '1925-04-10' },
    ]);
  });

  test('getAllPeople: the first `limit` (5 by default), or all with returnAll', async () => {
    const all = ['Jay Gatsby', 'José Arcadio Buendía', 'Max Sendak', 'Zaphod Beeblebrox', 'Edmund Pevensie'];
    assert.deepEqual(names(await runOutput('n8nTrainingCustomerDatastore', 1, { operation: 'getAllPeople' }, [{}])), all);
    assert.deepEqual(names(await runOutput('n8nTrainingCustomerDatastore', 1, { operation: 'getAllPeople', limit: 2 }, [{}])), all.slice(0, 2));
    assert.deepEqual(names(await runOutput('n8nTrainingCustomerDatastore', 1, { operation: 'getAllPeople', returnAll: true, limit: 1 }, [{}, {}])), [
      ...all,
      ...all,
    ]);
    const zaphod = (await runOutput('n8nTrainingCustomerDatastore', 1, { operation: 'getAllPeople', returnAll: true }, [{}]))[3];
    assert.equal(zaphod?.country, null);
  });

  test('imported and run: the people feed the next node', async () => {
    const run = await runWorkflow({
      nodes: [
        { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
        {
          name: 'Customers',
          type: 'n8n-nodes-base.n8nTrainingCustomerDatastore',
          typeVersion: 1,
          position: [200, 0],
          parameters: { operation: 'getAllPeople', returnAll: true },
        },
        {
          name: 'US',
          type: 'n8n-nodes-base.filter',
          typeVersion: 2,
          position: [400, 0],
          parameters: {
            conditions: {
              options: { caseSensitive: true, typeValidation: 'strict' },
              combinator: 'and',
              conditions: [{ id: '1', leftValue: '={{ $json.country }}', rightValue: 'US', operator: { type: 'string', operation: 'equals' } }],
            },
          },
        },
      ],
      connections: { Start: { main: [[{ node: 'Customers', type: 'main', index: 0 }]] }, Customers: { main: [[{ node: 'US', type: 'main', index: 0 }]] } },
    });
    assert.equal(run.status, 'success');
    assert.deepEqual(names(run.result), ['Jay Gatsby', 'Max Sendak']);
  });

  test('an operation it does not have is refused at import', () => {
    assert.equal(
      importRefusal({ type: 'n8n-nodes-base.n8nTrainingCustomerDatastore', typeVersion: 1, parameters: { operation: 'deletePerson' } })?.node,
      'Node',
    );
  });
});
