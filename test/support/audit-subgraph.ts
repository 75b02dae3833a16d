import { parse } from 'graphql';
import { buildSubgraphSchema, printSubgraphSchema } from '@apollo/subgraph';
import type { BuiltSubgraph } from '../../kernel/subgraph';

/**
 * A second subgraph contributing a field to the control plane's ApiKey entity, so that a
 * selection (a query's, a subscription's) can span two subgraphs: `auditLabel` is
 * `audited:<first 8 characters of the key's id>`. `auditedKey(id)` answers a bare reference to a
 * key, so the gateway resolves the rest through the control plane's ApiKey reference resolver.
 */
export function auditSubgraph(): BuiltSubgraph {
  const schema = buildSubgraphSchema({
    typeDefs: parse(`
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type ApiKey @key(fields: "id") {
        id: ID!
        auditLabel: String!
      }
      type Query {
        auditedKey(id: ID!): ApiKey
      }
    `),
    resolvers: {
      Query: { auditedKey: (_: unknown, { id }: { id: string }) => ({ id }) },
      ApiKey: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, auditLabel: `audited:${ref.id.slice(0, 8)}` }) },
    },
  });
  return { name: 'audit', schema, sdl: printSubgraphSchema(schema) };
}
