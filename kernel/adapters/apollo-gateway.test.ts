import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { operationFromDocument } from '@apollo/federation-internals';
import { ApolloGateway } from '@apollo/gateway';
import { parse } from 'graphql';
import { APOLLO_GATEWAY_VERSION, apolloGatewayShapeProblem, loadedPlanner } from './apollo-gateway';

const ROOT = path.join(__dirname, '..', '..', '..');

describe('@apollo/gateway adapter', () => {
  it("finds the loaded gateway's planner and plans with it", async () => {
    const gateway = new ApolloGateway({ supergraphSdl: readFileSync(path.join(ROOT, 'schema', 'supergraph.graphql'), 'utf8') });
    await gateway.load();
    try {
      assert.equal(apolloGatewayShapeProblem(gateway), undefined);
      const loaded = loadedPlanner(gateway)!;
      const plan = loaded.planner.buildQueryPlan(operationFromDocument(loaded.apiSchema, parse('{ agents { agentId name } }')));
      assert.equal(plan.node?.kind, 'Fetch');
    } finally {
      await gateway.stop();
    }
  });

  it('names what moved when the shape is not there', () => {
    const gateway = new ApolloGateway({ supergraphSdl: 'type Query { a: Int }' });
    assert.match(apolloGatewayShapeProblem(gateway) ?? '', /adapter written for 2\.14\.4\): a loaded gateway has .*kernel\/adapters\/apollo-gateway\.ts/);
  });

  it('is pinned to the exact versions it was written for', () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    for (const name of ['@apollo/gateway', '@apollo/query-planner', '@apollo/federation-internals']) {
      assert.equal(
        manifest.dependencies[name],
        APOLLO_GATEWAY_VERSION,
        `package.json pins ${name} ${manifest.dependencies[name]}, the adapter was written for ${APOLLO_GATEWAY_VERSION}: see kernel/adapters/apollo-gateway.ts`,
      );
    }
  });
});
