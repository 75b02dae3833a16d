import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Supergraph } from '@apollo/federation-internals';
import { surfaces } from '../rest-adapter';
import { services } from '../subgraphs';
import { openApiDocument } from './docs';

/**
 * The OpenAPI document the platform serves, built without starting it: from the committed
 * supergraph's API schema (what the gateway serves) and the route tables. The resolvers' classes
 * are loaded because the permissions the document names are their decorators.
 */
export function emitOpenApi(): Record<string, unknown> {
  void services;
  const sdl = readFileSync(path.join(__dirname, '..', '..', 'schema', 'supergraph.graphql'), 'utf8');
  const schema = Supergraph.build(sdl).apiSchema().toGraphQLJSSchema();
  return openApiDocument(surfaces, schema);
}

if (require.main === module) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: node dist/server/openapi-emit.js <file.json>');
  writeFileSync(out, `${JSON.stringify(emitOpenApi(), null, 2)}\n`);
}
