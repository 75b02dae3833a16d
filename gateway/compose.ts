import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';

export interface SubgraphSdl {
  name: string;
  sdl: string;
  url?: string;
}

/**
 * Composes subgraph SDL into the supergraph with @apollo/composition (never by introspection).
 * In-process subgraphs get a placeholder URL: the gateway routes them to a local data source.
 */
export function composeSupergraph(subgraphs: SubgraphSdl[]): string {
  const result = composeServices(subgraphs.map((s) => ({ name: s.name, typeDefs: parse(s.sdl), url: s.url ?? `local://${s.name}` })));
  if (result.errors?.length) {
    throw new Error(`Supergraph composition failed:\n${result.errors.map((e) => `  - ${e.message}`).join('\n')}`);
  }
  return result.supergraphSdl!;
}
