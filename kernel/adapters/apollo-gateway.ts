/**
 * The one place that reaches into @apollo/gateway beyond its documented API: the query planner and
 * API schema an ApolloGateway builds from its supergraph at load. Reusing them spares building a
 * second pair (about 0.5 s at a process's first operation, inside the start). Written for
 * @apollo/gateway 2.14.4 with @apollo/query-planner and @apollo/federation-internals of the same
 * version, pinned exactly in package.json.
 *
 * When upgrading, run kernel/adapters/apollo-gateway.test.ts: it fails naming what moved. Without
 * the fields, `loadedPlanner` answers undefined and the caller builds its own planner (slower start,
 * same answers).
 */
// First: @apollo/gateway's unused telemetry packages are not loaded.
import './apollo-telemetry';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Schema } from '@apollo/federation-internals';
import { ApolloGateway, type GatewayConfig } from '@apollo/gateway';
import { QueryPlanner } from '@apollo/query-planner';

/**
 * A gateway that never phones home. @apollo/gateway 2.14 builds, in its constructor, a metrics
 * exporter to Apollo's usage-reporting endpoint, and probes the cloud metadata addresses
 * (169.254.169.254 and the like) for its resource, unless APOLLO_TELEMETRY_DISABLED is set: a
 * self-hosted platform sends nothing to a third party. The variable is set for the constructor
 * only and put back as it was.
 */
export function newApolloGateway(config: GatewayConfig): ApolloGateway {
  const before = process.env.APOLLO_TELEMETRY_DISABLED;
  process.env.APOLLO_TELEMETRY_DISABLED = 'true';
  try {
    return new ApolloGateway(config);
  } finally {
    if (before === undefined) delete process.env.APOLLO_TELEMETRY_DISABLED;
    else process.env.APOLLO_TELEMETRY_DISABLED = before;
  }
}

/** The version this adapter was written for. */
export const APOLLO_GATEWAY_VERSION = '2.14.4';

export interface LoadedPlanner {
  apiSchema: Schema;
  planner: QueryPlanner;
}

/** The planner and API schema of a loaded gateway, or undefined where this version keeps them elsewhere. */
export function loadedPlanner(gateway: ApolloGateway): LoadedPlanner | undefined {
  const { apiSchema, queryPlanner } = gateway as unknown as { apiSchema?: unknown; queryPlanner?: unknown };
  return queryPlanner instanceof QueryPlanner && apiSchema instanceof Schema ? { apiSchema, planner: queryPlanner } : undefined;
}

/** What of the private shape a loaded gateway lacks: an error naming the versions, or undefined. */
export function apolloGatewayShapeProblem(gateway: ApolloGateway): string | undefined {
  if (loadedPlanner(gateway)) return undefined;
  const own = gateway as unknown as Record<string, unknown>;
  const what = !('queryPlanner' in own) ? 'no field queryPlanner' : !('apiSchema' in own) ? 'no field apiSchema' : 'queryPlanner or apiSchema of another class';
  return `@apollo/gateway ${installedVersion()} (adapter written for ${APOLLO_GATEWAY_VERSION}): a loaded gateway has ${what} — see kernel/adapters/apollo-gateway.ts`;
}

function installedVersion(): string {
  try {
    const file = path.join(path.dirname(require.resolve('@apollo/gateway')), '..', 'package.json');
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'of unknown version';
  }
}
