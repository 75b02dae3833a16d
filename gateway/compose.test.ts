import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { composeSupergraphCached, type SubgraphSdl } from './compose';

const FED = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])';
const books: SubgraphSdl = { name: 'books', sdl: `${FED}\ntype Query { book(id: ID!): Book }\ntype Book @key(fields: "id") { id: ID! title: String }` };
const authors: SubgraphSdl = {
  name: 'authors',
  sdl: `${FED}\ntype Query { author(id: ID!): Author }\ntype Author @key(fields: "id") { id: ID! name: String }`,
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'compose-cache-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const cached = () => readdirSync(dir).filter((f) => f.startsWith('supergraph-'));

test('the supergraph composed once is read back while the subgraphs are unchanged', () => {
  const first = composeSupergraphCached([books, authors], dir);
  assert.match(first, /type Book/);
  assert.match(first, /type Author/);
  const [file] = cached();
  assert.ok(file);
  assert.equal(readFileSync(path.join(dir, file), 'utf8'), first);
  // What the next start gets is the file's text, not a new composition.
  writeFileSync(path.join(dir, file), `${first}\n# from the cache`);
  assert.equal(composeSupergraphCached([books, authors], dir), `${first}\n# from the cache`);
});

test('a changed subgraph is composed again and replaces the old entry', () => {
  composeSupergraphCached([books, authors], dir);
  const [before] = cached();
  const changed = { ...authors, sdl: authors.sdl.replace('name: String', 'name: String born: Int') };
  const second = composeSupergraphCached([books, changed], dir);
  assert.match(second, /born: Int/);
  assert.deepEqual(cached().length, 1);
  assert.notEqual(cached()[0], before);
  // Another URL for a subgraph is another input too.
  const remote = composeSupergraphCached([books, { ...changed, url: 'http://10.0.0.1:4001/graphql' }], dir);
  assert.match(remote, /http:\/\/10\.0\.0\.1:4001\/graphql/);
});

test('a composition error is thrown and nothing is cached', () => {
  const broken = { name: 'broken', sdl: `${FED}\ntype Query { book(id: ID!): Int }` };
  assert.throws(() => composeSupergraphCached([books, broken], dir), /Supergraph composition failed/);
  assert.deepEqual(cached(), []);
});

test('an unwritable cache directory only means composing every time', () => {
  const file = path.join(dir, 'not-a-directory');
  writeFileSync(file, '');
  assert.match(composeSupergraphCached([books], path.join(file, 'cache')), /type Book/);
});
