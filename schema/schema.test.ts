import assert from 'node:assert/strict';
import { emitSchema, readCommitted } from './emit';

test('the committed subgraph SDL and supergraph are what the code emits (run `npm run schema:emit`)', async () => {
  const emitted = await emitSchema();
  const committed = readCommitted();
  for (const [name, sdl] of Object.entries(emitted.subgraphs)) {
    assert.equal(committed.subgraphs[name], sdl, `schema/subgraphs/${name}.graphql is stale`);
  }
  assert.equal(committed.supergraph, emitted.supergraph, 'schema/supergraph.graphql is stale');
});

test('composition reports no error and the supergraph carries every subgraph', async () => {
  const { supergraph, subgraphs } = await emitSchema();
  for (const name of Object.keys(subgraphs)) {
    assert.match(supergraph, new RegExp(`@join__graph\\(name: "${name}"`));
  }
});
