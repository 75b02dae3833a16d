import assert from 'node:assert/strict';
import { buildSchema, graphql } from 'graphql';
import { surfaces } from './index';
import { omitNulls, rootKey, routeOutput, shapeOutput } from './output';
import type { RestRequest, RouteDef } from './route';

const req: RestRequest = { params: {}, query: {}, body: undefined };

/** A tiny schema, so that aliases are checked the way the gateway runs them. */
const schema = buildSchema(`
  type Pause { orchestrationId: ID! status: String! pausedAt: String pauseReason: String currentStage: String }
  type Query { pause: Pause! pauses: [Pause!]! }
`);
const rootValue = {
  pause: { orchestrationId: 'o1', status: 'paused', pausedAt: '2026-01-01T00:00:00.000Z', pauseReason: null, currentStage: 'build' },
  pauses: () => [rootValue.pause, { ...rootValue.pause, orchestrationId: 'o2', pauseReason: 'why' }],
};
/** A route of the tiny schema in the form a surface lists (defineRoute takes the API schema's generated documents). */
const defineRoute = <D = Record<string, unknown>>(def: RouteDef<D>): RouteDef => def;
async function answer(route: RouteDef) {
  const result = await graphql({ schema, source: route.operation, rootValue });
  assert.equal(result.errors, undefined);
  // As the client gets it: serialized (graphql-js objects have no prototype).
  return JSON.parse(JSON.stringify(routeOutput(route)(result.data, req))) as unknown;
}

test('output: without pick the answer is the root field, renamed by aliases, in selection order', async () => {
  const route = defineRoute({
    method: 'POST',
    path: '/pause',
    operation: `query P { pause { orchestrationId status pausedAt reason: pauseReason currentStage } }`,
  });
  const out = await answer(route);
  assert.deepEqual(out, { orchestrationId: 'o1', status: 'paused', pausedAt: '2026-01-01T00:00:00.000Z', reason: null, currentStage: 'build' });
  assert.deepEqual(Object.keys(out as object), ['orchestrationId', 'status', 'pausedAt', 'reason', 'currentStage']);
});

test('output: an aliased root field is found by its alias', async () => {
  assert.equal(rootKey(`query P { paused: pause { status } }`), 'paused');
  const out = await answer(defineRoute({ method: 'GET', path: '/p', operation: `query P { paused: pause { task_id: orchestrationId } }` }));
  assert.deepEqual(out, { task_id: 'o1' });
});

test('output: omitNulls drops null fields of the answer (of each item of a list), not nested ones', async () => {
  const one = await answer(
    defineRoute({ method: 'GET', path: '/p', omitNulls: true, operation: `query P { pause { orchestrationId reason: pauseReason currentStage } }` }),
  );
  assert.deepEqual(one, { orchestrationId: 'o1', currentStage: 'build' });
  const list = await answer(defineRoute({ method: 'GET', path: '/p', omitNulls: true, operation: `query P { pauses { orchestrationId pauseReason } }` }));
  assert.deepEqual(list, [{ orchestrationId: 'o1' }, { orchestrationId: 'o2', pauseReason: 'why' }]);
  assert.deepEqual(shapeOutput({ a: null, b: { c: null }, d: undefined, e: 0, f: '' }, { omitNulls: true }), { b: { c: null }, e: 0, f: '' });
  assert.deepEqual(omitNulls({ a: null, b: false }), { b: false });
});

test('output: snakeCase converts keys deeply, keeps opaque contents and values verbatim', async () => {
  const out = await answer(
    defineRoute({ method: 'GET', path: '/p', snakeCase: true, operation: `query P { pause { orchestrationId pausedAt currentStage } }` }),
  );
  assert.deepEqual(out, { orchestration_id: 'o1', paused_at: '2026-01-01T00:00:00.000Z', current_stage: 'build' });
  assert.deepEqual(
    shapeOutput(
      { userId: 'u', nestedList: [{ createdAt: 1 }], clientData: { keepMe: { deepKey: 1 } }, textValue: 'camelCase' },
      { snakeCase: true, opaque: ['clientData'] },
    ),
    { user_id: 'u', nested_list: [{ created_at: 1 }], client_data: { keepMe: { deepKey: 1 } }, text_value: 'camelCase' },
  );
});

test('output: both options together drop nulls first, then snake_case; they also shape a pick', async () => {
  const route = defineRoute<{ pause: { orchestrationId: string; pauseReason: string | null } }>({
    method: 'GET',
    path: '/p',
    operation: `query P { pause { orchestrationId pauseReason } }`,
    pick: ({ pause }) => ({ workflowId: pause.orchestrationId, pauseReason: pause.pauseReason, nested: { someKey: null } }),
    omitNulls: true,
    snakeCase: true,
  });
  assert.deepEqual(await answer(route), { workflow_id: 'o1', nested: { some_key: null } });
});

test('output: a route without pick must select exactly one root field (refused when declared)', () => {
  const route = defineRoute({ method: 'GET', path: '/two', operation: `query T { pause { status } pauses { status } }` });
  assert.throws(() => routeOutput(route), /GET \/two: an operation without `pick` must select exactly one root field/);
  const picked = defineRoute({ method: 'GET', path: '/two', operation: `query T { pause { status } pauses { status } }`, pick: (d: unknown) => d });
  assert.doesNotThrow(() => routeOutput(picked));
});

test('output: every declared route builds its answer (a route without pick selects one root field)', () => {
  for (const surface of surfaces)
    for (const route of surface.routes) assert.doesNotThrow(() => routeOutput(route), `${surface.name} ${route.method} ${route.path}`);
});
