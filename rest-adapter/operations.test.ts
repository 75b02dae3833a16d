import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Supergraph } from '@apollo/federation-internals';
import { getOperationAST, parse, validate } from 'graphql';
import { surfaces } from '.';

const ROOT = path.join(__dirname, '..', '..');

// A route's operation is compiled at its first request, not at start: here every one is, at once.
test("every REST route's operation is one valid query or mutation of the composed schema", () => {
  const schema = Supergraph.build(readFileSync(path.join(ROOT, 'schema', 'supergraph.graphql'), 'utf8'))
    .apiSchema()
    .toGraphQLJSSchema();
  let checked = 0;
  for (const surface of surfaces)
    for (const route of surface.routes) {
      const where = `${surface.name} ${route.method} ${route.path}`;
      const document = parse(route.operation);
      assert.deepEqual(
        validate(schema, document).map((e) => e.message),
        [],
        where,
      );
      const operation = getOperationAST(document);
      assert.ok(operation && operation.operation !== 'subscription', `${where}: one query or mutation`);
      checked++;
    }
  assert.ok(checked > 100, `${checked} routes`);
});
