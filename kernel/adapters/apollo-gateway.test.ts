import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { operationFromDocument } from '@apollo/federation-internals';
import { ApolloGateway } from '@apollo/gateway';
import { parse } from 'graphql';
import { APOLLO_GATEWAY_VERSION, apolloGatewayShapeProblem, loadedPlanner, newApolloGateway } from './apollo-gateway';

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

  it('never phones home: no request leaves the process while a gateway loads, plans and stops', async () => {
    const hosts: string[] = [];
    const spied = [http, https].map((m) => {
      const { request, get } = m;
      const record = (args: unknown[]) => {
        const [first] = args;
        hosts.push(
          first instanceof URL
            ? first.host
            : typeof first === 'string'
              ? new URL(first).host
              : String((first as http.RequestOptions).hostname ?? (first as http.RequestOptions).host),
        );
      };
      m.request = ((...args: unknown[]) => (record(args), (request as (...a: unknown[]) => http.ClientRequest)(...args))) as typeof m.request;
      m.get = ((...args: unknown[]) => (record(args), (get as (...a: unknown[]) => http.ClientRequest)(...args))) as typeof m.get;
      return () => Object.assign(m, { request, get });
    });
    try {
      const gateway = newApolloGateway({ supergraphSdl: readFileSync(path.join(ROOT, 'schema', 'supergraph.graphql'), 'utf8') });
      await gateway.load();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await gateway.stop(); // a metrics exporter would flush here
      assert.deepEqual(hosts, []);
      assert.equal(process.env.APOLLO_TELEMETRY_DISABLED, undefined, 'the variable is put back as it was');
    } finally {
      for (const restore of spied) restore();
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
