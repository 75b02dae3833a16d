import 'reflect-metadata';
import assert from 'node:assert/strict';
import { Authorized, Ctx, Directive, Field, FieldResolver, ID, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { ANONYMOUS, type Principal } from './auth/principal';
import { createLogger } from './logger';
import { byKey, defineLoader, groupedByKey, load, loaderOf, type HasLoaders } from './loaders';
import { buildSubgraph, createExecutor, type RequestContext } from './subgraph';

const ADMIN: Principal = {
  kind: 'apiKey',
  keyId: 'k',
  name: 'k',
  service: 'links',
  environment: 'live',
  tier: 'free',
  permissions: ['*'],
};

test('byKey and groupedByKey answer one value per key, in the keys’ order, absent ones included', () => {
  const rows = [
    { k: 'b', v: 2 },
    { k: 'a', v: 1 },
    { k: 'a', v: 11 },
  ];
  assert.deepEqual(
    byKey(
      ['a', 'x', 'b'],
      rows.slice(0, 2),
      (r) => r.k,
      null,
      (r) => r.v,
    ),
    [1, null, 2],
  );
  assert.deepEqual(
    groupedByKey(
      ['x', 'a', 'b'],
      rows,
      (r) => r.k,
      (r) => r.v,
    ),
    [[], [1, 11], [2]],
  );
});

test('loads of one tick make one batch; a loader set is per carrier, created on first use', async () => {
  const batches: string[][] = [];
  const squares = defineLoader<string, number | null>('test.squares', async (keys) => {
    batches.push([...keys]);
    return keys.map((k) => (k === 'missing' ? null : Number(k) ** 2));
  });
  const ctx: HasLoaders = {};
  assert.equal(ctx.loaders, undefined, 'nothing is created before a load');
  assert.deepEqual(await Promise.all(['2', '3', 'missing', '2'].map((k) => load(ctx, squares, k))), [4, 9, null, 4]);
  assert.deepEqual(batches, [['2', '3', 'missing']], 'one batch, each key once');
  assert.equal(await load(ctx, squares, '3'), 9);
  assert.equal(batches.length, 1, 'cached for the rest of the execution');
  loaderOf(ctx, squares).prime('5', 25);
  assert.equal(await load(ctx, squares, '5'), 25);
  assert.equal(batches.length, 1, 'a primed value takes no batch');
  assert.equal(await load({}, squares, '3'), 9);
  assert.equal(batches.length, 2, 'another carrier, another loader');
});

// ---- through a subgraph: field resolvers and entity references --------------------------------

const detailBatches: string[][] = [];
const detailOf = defineLoader<string, string>('test.detailByItem', async (keys) => {
  detailBatches.push([...keys]);
  return keys.map((k) => `detail of ${k}`);
});
const itemBatches: string[][] = [];
const itemById = defineLoader<string, { id: string } | null>('test.itemById', async (keys) => {
  itemBatches.push([...keys]);
  return byKey(
    keys,
    ['a', 'b', 'c'].filter((id) => keys.includes(id)).map((id) => ({ id })),
    (r) => r.id,
    null,
  );
});

@ObjectType()
@Directive('@key(fields: "id")')
class LoaderItem {
  @Field(() => ID) id: string;
}

@Resolver(() => LoaderItem)
class LoaderItemResolver {
  @Authorized('thing:read')
  @Query(() => [LoaderItem])
  loaderItems(): LoaderItem[] {
    return ['a', 'b', 'c', 'd'].map((id) => ({ id }));
  }

  @FieldResolver(() => String)
  detail(@Root() item: LoaderItem, @Ctx() ctx: RequestContext): Promise<string> {
    return load(ctx, detailOf, item.id);
  }
}

async function itemsSubgraph() {
  const built = await buildSubgraph({
    name: 'links',
    surface: 'links',
    resolvers: [LoaderItemResolver],
    instances: [new LoaderItemResolver()],
    references: { LoaderItem: { key: 'id', permission: 'thing:read', loader: itemById, toEntity: (row) => row } },
  });
  return createExecutor(built.schema, createLogger('silent'));
}

test('a field resolver loads once for the whole list, and each execution has its own loaders', async () => {
  const execute = await itemsSubgraph();
  const ctx: RequestContext = { principal: ADMIN, requestId: 'r1' };
  const first = await execute('{ loaderItems { id detail } }', undefined, ctx);
  assert.equal(first.errors, undefined);
  assert.deepEqual(
    (first.data as { loaderItems: { detail: string }[] }).loaderItems.map((i) => i.detail),
    ['detail of a', 'detail of b', 'detail of c', 'detail of d'],
  );
  assert.deepEqual(detailBatches, [['a', 'b', 'c', 'd']]);
  // The same context object again (a subscription reruns its query with its connection's context):
  // loaded anew, never from the earlier execution's cache.
  await execute('{ loaderItems { id detail } }', undefined, ctx);
  assert.equal(detailBatches.length, 2);
  assert.equal(ctx.loaders, undefined, 'the caller’s context carries no loaders');
});

test('entity references resolve in one batch, missing ones as null, with the permission checked', async () => {
  const execute = await itemsSubgraph();
  const query = `query ($r: [_Any!]!) { _entities(representations: $r) { ... on LoaderItem { id detail } } }`;
  const representations = ['c', 'nope', 'a'].map((id) => ({ __typename: 'LoaderItem', id }));
  const result = await execute(query, { r: representations }, { principal: ADMIN, requestId: 'r2' });
  assert.equal(result.errors, undefined, JSON.stringify(result.errors));
  assert.deepEqual(JSON.parse(JSON.stringify(result.data))._entities, [{ id: 'c', detail: 'detail of c' }, null, { id: 'a', detail: 'detail of a' }]);
  assert.deepEqual(itemBatches, [['c', 'nope', 'a']]);

  const refused = await execute(query, { r: representations }, { principal: ANONYMOUS, requestId: 'r3' });
  assert.ok(refused.errors?.length, 'an anonymous caller gets no entity');
  assert.equal(itemBatches.length, 1, 'nothing is loaded for a refused caller');
});
