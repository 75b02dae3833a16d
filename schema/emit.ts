import 'reflect-metadata';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildSubgraph, subgraphSpec } from '../kernel/subgraph';
import { composeSupergraph } from '../gateway/compose';
import { services } from '../subgraphs';

/** The committed SDL lives in the source tree (schema/), next to this file's source. */
export const SCHEMA_DIR = path.join(__dirname, '..', '..', 'schema');

export async function emitSchema(): Promise<{ subgraphs: Record<string, string>; supergraph: string }> {
  const subgraphs: Record<string, string> = {};
  for (const service of services) {
    // The classes alone print the schema: no service is built, nothing needs a database.
    const built = await buildSubgraph(subgraphSpec(service));
    subgraphs[service.name] = built.sdl;
  }
  const supergraph = composeSupergraph(Object.entries(subgraphs).map(([name, sdl]) => ({ name, sdl })));
  return { subgraphs, supergraph };
}

export function readCommitted(): { subgraphs: Record<string, string>; supergraph: string } {
  const subgraphs: Record<string, string> = {};
  for (const service of services) {
    subgraphs[service.name] = readFileSync(path.join(SCHEMA_DIR, 'subgraphs', `${service.name}.graphql`), 'utf8');
  }
  return { subgraphs, supergraph: readFileSync(path.join(SCHEMA_DIR, 'supergraph.graphql'), 'utf8') };
}

if (require.main === module) {
  // A rejection is left unhandled on purpose: Node prints it and exits non-zero, as a failed script should.
  void emitSchema().then(({ subgraphs, supergraph }) => {
    mkdirSync(path.join(SCHEMA_DIR, 'subgraphs'), { recursive: true });
    for (const [name, sdl] of Object.entries(subgraphs)) {
      writeFileSync(path.join(SCHEMA_DIR, 'subgraphs', `${name}.graphql`), sdl);
    }
    writeFileSync(path.join(SCHEMA_DIR, 'supergraph.graphql'), supergraph);
    process.stdout.write(`emitted ${Object.keys(subgraphs).length} subgraph(s) and the supergraph to ${SCHEMA_DIR}\n`);
  });
}
