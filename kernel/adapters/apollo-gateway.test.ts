import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { promisify } from 'node:util';
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

  it('loads, plans and stops without its telemetry packages, which are never touched', async () => {
    // In a process of its own, as main.ts loads them: the replacement first, then the gateway.
    const child = `
      const { replacedTelemetry } = require(${JSON.stringify(path.join(__dirname, 'apollo-telemetry.js'))});
      const { newApolloGateway } = require(${JSON.stringify(path.join(__dirname, 'apollo-gateway.js'))});
      const gateway = newApolloGateway({ supergraphSdl: require('node:fs').readFileSync(${JSON.stringify(path.join(ROOT, 'schema', 'supergraph.graphql'))}, 'utf8') });
      gateway.load().then(() => gateway.stop()).then(() => process.stdout.write(JSON.stringify(Object.keys(replacedTelemetry))));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', child]);
    assert.deepEqual((JSON.parse(stdout) as string[]).sort(), [
      '@opentelemetry/exporter-metrics-otlp-http',
      '@opentelemetry/resource-detector-alibaba-cloud',
      '@opentelemetry/resource-detector-aws',
      '@opentelemetry/resource-detector-azure',
      '@opentelemetry/resource-detector-gcp',
      '@opentelemetry/sdk-metrics',
    ]);
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
