import { NodeError, type Item, type NodeDefinition } from '../../../nodes';
import { fixedOption } from '../item-lists/params';

/**
 * n8n's Customer Datastore (n8n training): a dummy source of five fixed people, used by n8n's
 * courses. For each input item, "Get One Person" gives the first of them; "Get All People" all of
 * them (`returnAll`) or the first `limit` (5 by default).
 */

export const TRAINING_PEOPLE = Object.freeze([
  { id: '23423532', name: 'Jay Gatsby', email: 'gatsby@west-egg.com', notes: 'Keeps asking about a green light??', country: 'US', created: '1925-04-10' },
  {
    id: '23423533',
    name: 'José Arcadio Buendía',
    email: 'jab@macondo.co',
    notes: 'Lots of people named after him. Very confusing',
    country: 'CO',
    created: '1967-05-05',
  },
  { id: '23423534', name: 'Max Sendak', email: 'info@in-and-out-of-weeks.org', notes: 'Keeps rolling his terrible eyes', country: 'US', created: '1963-04-09' },
  {
    id: '23423535',
    name: 'Zaphod Beeblebrox',
    email: 'captain@heartofgold.com',
    notes: 'Felt like I was talking to more than one person',
    country: null,
    created: '1979-10-12',
  },
  { id: '23423536', name: 'Edmund Pevensie', email: 'edmund@narnia.gov', notes: 'Passionate sailor', country: 'UK', created: '1950-10-16' },
]);

const OPERATIONS = ['getOnePerson', 'getAllPeople'];

export const n8nTrainingCustomerDatastore: NodeDefinition = {
  name: 'n8nTrainingCustomerDatastore',
  description: "n8n's Customer Datastore (n8n training): one or all of n8n's five fixed demo people, for each input item.",
  n8n: { versions: [1] },
  inProcess: true,
  invalid(p) {
    const operation = fixedOption(p.operation, 'getOnePerson');
    return OPERATIONS.includes(operation) ? undefined : { parameter: 'operation', message: `must be one of ${OPERATIONS.join(', ')}` };
  },
  async execute(ctx) {
    const operation = fixedOption(ctx.node.parameters?.operation, 'getOnePerson');
    const params = operation === 'getAllPeople' ? await ctx.parameters() : [];
    const out: Item[] = [];
    ctx.items.forEach((_, i) => {
      if (operation === 'getOnePerson') {
        out.push({ json: { ...TRAINING_PEOPLE[0]! }, pairedItem: { item: i } });
        return;
      }
      const p = params[i] ?? {};
      const limit = p.limit ?? 5;
      if (!p.returnAll && (typeof limit !== 'number' || !Number.isFinite(limit))) throw new NodeError("'Limit' must be a number", { itemIndex: i });
      const people = p.returnAll ? TRAINING_PEOPLE : TRAINING_PEOPLE.slice(0, Number(limit));
      for (const person of people) out.push({ json: { ...person }, pairedItem: { item: i } });
    });
    return { outputs: [out] };
  },
};
