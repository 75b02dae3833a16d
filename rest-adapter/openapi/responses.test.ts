import assert from 'node:assert/strict';
import { buildSchema } from 'graphql';
import { omitNulls } from '../output';
import type { RouteDef } from '../route';
import { responseSchema } from './responses';

/** A tiny schema: the answer schemas follow aliases, fragments, lists, nulls and the output options. */
const schema = buildSchema(`
  enum State { open closed }
  type Item { itemId: ID! count: Int! ratio: Float note: String state: State! tags: [String!]! }
  type Query { item: Item! items: [Item!]! }
`);
const route = (def: Partial<RouteDef> & { operation: string }): RouteDef => ({ method: 'GET', path: '/x', ...def }) as RouteDef;

test('the selection as answered: aliases rename, fragments add, scalars and enums typed, nullable fields admit null', () => {
  const s = responseSchema(schema, route({ operation: 'query Q { item { id: itemId ...F note } } fragment F on Item { count ratio state tags }' }));
  assert.deepEqual(s, {
    type: 'object',
    properties: {
      id: { type: 'string' },
      count: { type: 'integer' },
      ratio: { type: ['number', 'null'] },
      state: { type: 'string', enum: ['open', 'closed'] },
      tags: { type: 'array', items: { type: 'string' } },
      note: { type: ['string', 'null'] },
    },
    required: ['id', 'count', 'ratio', 'state', 'tags', 'note'],
  });
});

test('snake_case and omitNulls apply to the schema as to the answer: a dropped null is an optional key', () => {
  const s = responseSchema(schema, route({ operation: 'query Q { items { itemId note } }', snakeCase: true, omitNulls: true }));
  assert.deepEqual(s, {
    type: 'array',
    items: { type: 'object', properties: { item_id: { type: 'string' }, note: { type: ['string', 'null'] } }, required: ['item_id'] },
  });
});

test("a pick's own shape: mapped lists, computed numbers, constants", () => {
  const s = responseSchema(
    schema,
    route({
      operation: 'query Q { items { itemId count note } }',
      pick: ({ items }: { items: { itemId: string; count: number; note: string | null }[] }) => ({
        list: items.map((i) => omitNulls({ id: i.itemId, note: i.note, share: i.count / 100 })),
        complete: true,
      }),
    }),
  );
  assert.deepEqual(s, {
    type: 'object',
    properties: {
      list: {
        type: 'array',
        items: {
          type: 'object',
          properties: { id: { type: 'string' }, note: { type: ['string', 'null'] }, share: { type: 'number' } },
          required: ['id', 'share'],
        },
      },
      complete: { type: 'boolean' },
    },
    required: ['list', 'complete'],
  });
});

test('a pick whose shape follows a value of the data or of the body is traced once per declared shape, and the shapes merged', () => {
  type Data = { item: { itemId: string; state: string; count: number; note: string | null } };
  const s = responseSchema(
    schema,
    route({
      operation: 'query Q { item { itemId state count note } }',
      pick: ({ item }: Data, req) => {
        if ((req.body as { brief?: string }).brief === 'yes') return { id: item.itemId };
        return item.state === 'open' ? { id: item.itemId, count: item.count } : { id: item.itemId, note: item.note };
      },
      shapes: [{ 'body.brief': 'yes' }, { 'item.state': 'open' }, { 'item.state': 'closed' }],
    }),
  );
  assert.deepEqual(s, {
    type: 'object',
    properties: { id: { type: 'string' }, count: { type: 'integer' }, note: { type: ['string', 'null'] } },
    required: ['id'],
  });
});
