import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { TYPE_GRAPHQL_VERSION, typeGraphQLShapeProblem } from './type-graphql';

describe('type-graphql adapter', () => {
  it("finds type-graphql's private shape it relies on", () => {
    assert.equal(typeGraphQLShapeProblem(), undefined);
  });

  it('is pinned to the exact version it was written for', () => {
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    assert.equal(
      manifest.dependencies['type-graphql'],
      TYPE_GRAPHQL_VERSION,
      `package.json pins type-graphql ${manifest.dependencies['type-graphql']}, the adapter was written for ${TYPE_GRAPHQL_VERSION}: see kernel/adapters/type-graphql.ts`,
    );
  });
});
