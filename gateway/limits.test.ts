import assert from 'node:assert/strict';
import { GraphQLError, buildSchema, getIntrospectionQuery, parse, specifiedRules, validate } from 'graphql';
import { DEFAULT_LIMITS, INTROSPECTION_COST, checkCost, costVaries, limitRules, parseWithLimits, type QueryLimits } from './limits';

const schema = buildSchema(`
  type Query {
    node(id: ID!): Node
    workflows(first: Int, after: String): [Workflow!]!
    agents(limit: Int): [Agent]
    me: User
  }
  interface Node { id: ID! }
  type User implements Node { id: ID! name: String manager: User tags: [String!]! }
  type Workflow implements Node {
    id: ID!
    name: String!
    steps(last: Int): [Step!]!
    owner: User
  }
  type Step { id: ID! name: String agent: Agent }
  type Agent { id: ID! name: String }
`);

function check(query: string, limits: Partial<QueryLimits> = {}) {
  return validate(schema, parse(query), [...specifiedRules, ...limitRules({ ...DEFAULT_LIMITS, ...limits })]);
}

function limitError(errors: readonly GraphQLError[], limit: string) {
  const found = errors.filter((e) => (e.extensions.details as { limit?: string } | undefined)?.limit === limit);
  assert.equal(found.length, 1, `expected one ${limit} error, got: ${errors.map((e) => e.message).join(' | ')}`);
  const [error] = found;
  assert.equal(error.extensions.code, 'query_too_complex');
  assert.deepEqual(error.extensions.http, { status: 400 });
  return error;
}

function details(error: GraphQLError) {
  return error.extensions.details as { limit: string; max: number; actual: number };
}

/** me { manager { manager { ... { id } } } } with `levels` fields on the deepest path. */
function nested(levels: number): string {
  let inner = 'id';
  for (let i = 1; i < levels - 1; i++) inner = `manager { ${inner} }`;
  return `{ me { ${inner} } }`;
}

test('depth: passes at the maximum and fails one level above with details', () => {
  assert.deepEqual(check(nested(4), { maxDepth: 4 }), []);
  const error = limitError(check(nested(5), { maxDepth: 4 }), 'depth');
  assert.deepEqual(error.extensions.details, { limit: 'depth', max: 4, actual: 5 });
  assert.match(error.message, /5 levels deep; the maximum is 4 \(1 over\)/);
  assert.ok(error.locations?.length);
});

test('depth: follows named and inline fragments, deepest operation wins', () => {
  const query = `
    query A { me { ...Managers } }
    query B { me { id } }
    fragment Managers on User { manager { ... on User { manager { ...Leaf } } } }
    fragment Leaf on User { manager { id } }
  `;
  // me > manager > manager > manager > id
  assert.deepEqual(check(query, { maxDepth: 5 }), []);
  const error = limitError(check(query, { maxDepth: 4 }), 'depth');
  assert.deepEqual(error.extensions.details, { limit: 'depth', max: 4, actual: 5 });
  assert.match(error.message, /Operation "A"/);
});

test('depth: fragment cycles are left to graphql and do not hang the rule', () => {
  const errors = check('{ me { ...A } } fragment A on User { manager { ...B } } fragment B on User { manager { ...A } }');
  assert.ok(errors.some((e) => /Cannot spread fragment "A" within itself/.test(e.message)));
  assert.ok(errors.every((e) => e.extensions.code !== 'query_too_complex'));
});

test('aliases: counts aliased fields in the document, fragments once', () => {
  const fields = (n: number) => Array.from({ length: n }, (_, i) => `a${i}: id`).join(' ');
  assert.deepEqual(check(`{ me { ${fields(3)} } }`, { maxAliases: 3 }), []);
  const error = limitError(check(`{ me { ${fields(4)} } }`, { maxAliases: 3 }), 'aliases');
  assert.deepEqual(error.extensions.details, { limit: 'aliases', max: 3, actual: 4 });
  assert.match(error.message, /4 aliases; the maximum is 3 \(1 over\)/);

  const withFragment = `{ x: me { ...F } y: me { ...F } } fragment F on User { n1: name n2: name }`;
  assert.deepEqual(check(withFragment, { maxAliases: 4 }), []);
  assert.deepEqual(limitError(check(withFragment, { maxAliases: 3 }), 'aliases').extensions.details, {
    limit: 'aliases',
    max: 3,
    actual: 4,
  });
});

test('cost: each field costs 1 and lists multiply by first/last/limit', () => {
  // me(1) + name(1) + tags(1): a list of scalars has no selection to multiply
  assert.deepEqual(check('{ me { name tags } }', { maxCost: 3 }), []);
  assert.equal(details(limitError(check('{ me { name tags } }', { maxCost: 2 }), 'cost')).actual, 3);

  // workflows(first: 10): 1 + 10 * (id 1 + steps(last: 5): 1 + 5 * (id 1 + agent(1 + name 1)))
  const query = '{ workflows(first: 10) { id steps(last: 5) { id agent { name } } } }';
  const expected = 1 + 10 * (1 + (1 + 5 * (1 + (1 + 1))));
  assert.deepEqual(check(query, { maxCost: expected }), []);
  const error = limitError(check(query, { maxCost: expected - 1 }), 'cost');
  assert.deepEqual(error.extensions.details, { limit: 'cost', max: expected - 1, actual: expected });
  assert.match(error.message, new RegExp(`estimated cost of ${expected}.*; the maximum is ${expected - 1} \\(1 over\\)`));
});

test('cost: a list without a size argument counts 20 items, through fragments', () => {
  const query = '{ agents { ...A } } fragment A on Agent { id name }';
  const errors = check(query, { maxCost: 40 });
  assert.equal(details(limitError(errors, 'cost')).actual, 1 + 20 * 2);
  assert.deepEqual(check('{ agents(limit: 2) { ...A } } fragment A on Agent { id name }', { maxCost: 5 }), []);
});

test('cost: a variable size uses its default in validation and its value in checkCost', () => {
  const query = 'query Q($n: Int = 3, $m: Int) { a: agents(limit: $n) { id } b: agents(limit: $m) { id } }';
  // a: 1 + 3 * 1 = 4; b: unknown size, 1 + 20 * 1 = 21
  assert.deepEqual(check(query, { maxCost: 25 }), []);
  assert.equal(details(limitError(check(query, { maxCost: 24 }), 'cost')).actual, 25);

  const limits = { ...DEFAULT_LIMITS, maxCost: 25 };
  assert.equal(checkCost(schema, parse(query), limits, 'Q', { m: 2 }), undefined);
  const error = checkCost(schema, parse(query), limits, 'Q', { n: 100, m: 2 });
  assert.ok(error);
  assert.deepEqual(error.extensions.details, { limit: 'cost', max: 25, actual: 1 + 100 + 1 + 2 });
});

test('cost: only a size given by a variable makes it vary with the variables (then each request is priced)', () => {
  assert.equal(costVaries(parse('query Q($n: Int) { agents(limit: $n) { id } }')), true);
  assert.equal(costVaries(parse('query Q($n: Int) { agents { ...A } } fragment A on Agent { id tasks(first: $n) { id } }')), true);
  assert.equal(costVaries(parse('query Q($id: ID!, $n: Int) { agent(id: $id) { id } agents(limit: 2) { id } }')), false);
  assert.equal(costVaries(parse('{ agents(limit: 5) { id } }')), false);
});

test('cost: absurd sizes stay finite', () => {
  const big = 2_000_000_000;
  const error = limitError(check(`{ workflows(first: ${big}) { steps(last: ${big}) { id } } }`), 'cost');
  assert.deepEqual(check(`{ workflows(first: ${big}) { steps(last: ${big}) { id } } }`).length, 1);
  assert.equal(details(error).actual, Number.MAX_SAFE_INTEGER);
});

test('the standard GraphiQL introspection query passes with the defaults, at the flat introspection cost', () => {
  for (const options of [
    {},
    { descriptions: true, schemaDescription: true, inputValueDeprecation: true, specifiedByUrl: true, directiveIsRepeatable: true, oneOf: true },
  ]) {
    const query = getIntrospectionQuery(options);
    assert.deepEqual(check(query), []);
    assert.equal(details(limitError(check(query, { maxCost: INTROSPECTION_COST - 1 }), 'cost')).actual, INTROSPECTION_COST);
  }
  // Aliased whole-schema introspections add up: five are over the default budget.
  const many = `{ ${Array.from({ length: 5 }, (_, i) => `s${i}: __schema { queryType { name } }`).join(' ')} }`;
  assert.equal(details(limitError(check(many), 'cost')).actual, 5 * INTROSPECTION_COST);
});

test('abusive introspection nesting is still limited by depth', () => {
  // __schema > types > (fields > type) x 6 > name
  const query = `{ __schema { types { ${'fields { type { '.repeat(6)}name ${'} } '.repeat(6)}} } }`;
  assert.equal(details(limitError(check(query), 'depth')).actual, 15);
  // (graphql's own MaxIntrospectionDepthRule objects to this too; only ours is checked here)
  assert.deepEqual(validate(schema, parse(query), limitRules({ ...DEFAULT_LIMITS, maxDepth: 15 })), []);
});

test('parseWithLimits: tokens below the limit parse, above become query_too_complex', () => {
  const query = '{ me { id name } }'; // 7 tokens
  assert.equal(parseWithLimits(query, { ...DEFAULT_LIMITS, maxTokens: 7 }).kind, 'Document');
  assert.throws(
    () => parseWithLimits(`# a comment is not a token\n${query}`, { ...DEFAULT_LIMITS, maxTokens: 6 }),
    (err: GraphQLError) => {
      assert.ok(err instanceof GraphQLError);
      assert.equal(err.extensions.code, 'query_too_complex');
      assert.deepEqual(err.extensions.http, { status: 400 });
      assert.deepEqual(err.extensions.details, { limit: 'tokens', max: 6, actual: 7 });
      assert.match(err.message, /7 tokens; the maximum is 6 \(1 over\)/);
      return true;
    },
  );
});

test('parseWithLimits: a syntax error stays a syntax error', () => {
  assert.throws(
    () => parseWithLimits('{ me { id ', { ...DEFAULT_LIMITS, maxTokens: 100 }),
    (err: GraphQLError) => err instanceof GraphQLError && err.extensions.code === undefined && /Syntax Error/.test(err.message),
  );
  // A syntax error early in an over-long document is still reported as what it is.
  assert.throws(
    () => parseWithLimits(`{ me { id } ) ${'{ a } '.repeat(50)}`, { ...DEFAULT_LIMITS, maxTokens: 20 }),
    (err: GraphQLError) => err.extensions.code === undefined && /Syntax Error/.test(err.message),
  );
});
