import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Kind, parse, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { generate, readDocuments, ROOT, TARGETS } from '../codegen';
import { surfaces } from '../rest-adapter';

test('the committed typed documents are what `npm run codegen` generates from the .graphql files and the schema', async () => {
  for (const [file, text] of Object.entries(await generate())) {
    assert.equal(readFileSync(path.join(ROOT, file), 'utf8'), text, `${file} is stale: run \`npm run codegen\``);
  }
});

test("the REST documents are the route tables' operations: each route runs one, each operation has a route", () => {
  const rest = TARGETS.find((t) => t.output.startsWith('rest-adapter/'))!;
  const operations = (documents: DocumentNode[]) =>
    documents.flatMap((d) => d.definitions.filter((def): def is OperationDefinitionNode => def.kind === Kind.OPERATION_DEFINITION));
  const declared = new Set(operations(readDocuments(rest).map((d) => d.document)).map((op) => op.name!.value));
  const routed = new Set(operations(surfaces.flatMap((s) => s.routes.map((r) => parse(r.operation)))).map((op) => op.name!.value));
  assert.ok(declared.size > 100, `${declared.size} operations found under ${rest.documents}`);
  assert.deepEqual(
    [...routed].filter((name) => !declared.has(name)),
    [],
    'routes whose operation is not in a .graphql file',
  );
  assert.deepEqual(
    [...declared].filter((name) => !routed.has(name)),
    [],
    'operations no route runs',
  );
});
