import type * as Composition from '@apollo/composition';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'graphql';

export interface SubgraphSdl {
  name: string;
  sdl: string;
  url?: string;
  /** What the SDL is printed from, where printing it costs more than hashing this (a built subgraph's source): the cache's key then. */
  source?: string;
}

/**
 * Composes subgraph SDL into the supergraph with @apollo/composition (never by introspection).
 * In-process subgraphs get a placeholder URL: the gateway routes them to a local data source.
 */
export function composeSupergraph(subgraphs: SubgraphSdl[]): string {
  const { composeServices } = require('@apollo/composition') as typeof Composition;
  const result = composeServices(subgraphs.map((s) => ({ name: s.name, typeDefs: parse(s.sdl), url: s.url ?? `local://${s.name}` })));
  if (result.errors?.length) {
    throw new Error(`Supergraph composition failed:\n${result.errors.map((e) => `  - ${e.message}`).join('\n')}`);
  }
  return result.supergraphSdl!;
}

const PREFIX = 'supergraph-';

/**
 * composeSupergraph, remembered in `dir` under a hash of its whole input (names, SDL, URLs and the
 * composition package's version; a built subgraph's source stands for its SDL, which is then
 * printed only to compose): composing takes a second or more of every start, and the input
 * changes only with the code or SUBGRAPH_URLS. Only the latest result is kept. An unreadable or
 * unwritable directory only means composing again.
 */
export function composeSupergraphCached(subgraphs: SubgraphSdl[], dir: string): string {
  const version = (require('@apollo/composition/package.json') as { version: string }).version;
  const key = createHash('sha256')
    .update(JSON.stringify([version, subgraphs.map((s) => [s.name, s.source ?? s.sdl, s.url ?? null])]))
    .digest('hex')
    .slice(0, 32);
  const file = path.join(dir, `${PREFIX}${key}.graphql`);
  try {
    return readFileSync(file, 'utf8');
  } catch {
    // not composed yet with this input
  }
  const supergraph = composeSupergraph(subgraphs);
  try {
    mkdirSync(dir, { recursive: true });
    // Written under a temporary name and renamed: a process starting beside this one reads a whole file or none.
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, supergraph);
    renameSync(temporary, file);
    for (const old of readdirSync(dir)) {
      if (old.startsWith(PREFIX) && old !== path.basename(file) && !old.endsWith('.tmp')) rmSync(path.join(dir, old), { force: true });
    }
  } catch {
    // a cache only
  }
  return supergraph;
}
