import 'reflect-metadata';
import assert from 'node:assert/strict';
import { IsIn, Length, validate } from 'class-validator';
import type { GraphQLObjectType } from 'graphql';
import {
  Arg,
  Authorized,
  Ctx,
  Directive,
  Field,
  FieldResolver,
  ID,
  InputType,
  Int,
  Mutation,
  ObjectType,
  Query,
  Resolver,
  Root,
  UseMiddleware,
  registerEnumType,
} from 'type-graphql';
import { ANONYMOUS, type Principal } from './auth/principal';
import { errors } from './errors';
import { defineLoader } from './loaders';
import { createLogger } from './logger';
import { buildSubgraph, createExecutor, SUBGRAPH_EXECUTION, type RequestContext } from './subgraph';

/**
 * A subgraph executor interprets a document the first time and runs it as a compiled function
 * (graphql-jit) after that: every kind of answer must be the same either way.
 */

const ADMIN: Principal = { kind: 'apiKey', keyId: 'k', name: 'k', service: 'links', environment: 'live', tier: 'free', permissions: ['*'] };

@ObjectType()
@Directive('@key(fields: "id")')
class Gadget {
  @Field(() => ID) id: string;
  @Field() name: string;
  @Field(() => [String]) tags: string[];
  @Field(() => Date) madeAt: Date;
  @Field(() => Int, { nullable: true }) weight?: number | null;
  /** A field with a permission of its own. */
  @Authorized('gadget:secret')
  @Field(() => String, { nullable: true })
  secret?: string;
}

@InputType()
class GadgetInput {
  @Field() @Length(1, 10) name: string;
  @Field() @IsIn(['small', 'large']) size: string;
}

/** Its constraints are all inherited. */
@InputType()
class LabelledGadgetInput extends GadgetInput {
  @Field() label: string;
}

/** No constraint at all: its rules would live in a service. */
@InputType()
class NoteInput {
  @Field() text: string;
  @Field(() => [String], { nullable: true }) tags?: string[];
}

/** Runs of the middleware of makeGadgetThroughChain. */
let chainRuns = 0;

enum Finish {
  MATTE = 'matte',
  GLOSS = 'gloss',
}
registerEnumType(Finish, { name: 'Finish' });

const GADGETS: Gadget[] = [
  { id: 'g1', name: 'lamp', tags: ['light', 'desk'], madeAt: new Date('2026-01-02T03:04:05.000Z'), weight: 3, secret: 'hidden' },
  { id: 'g2', name: 'fan', tags: [], madeAt: new Date('2026-02-03T04:05:06.000Z'), weight: null },
];

@Resolver(() => Gadget)
class GadgetResolver {
  @Authorized('gadget:read')
  @Query(() => [Gadget])
  gadgets(@Arg('first', () => Int, { nullable: true }) first?: number): Gadget[] {
    return GADGETS.slice(0, first ?? GADGETS.length);
  }

  @Authorized('gadget:read')
  @Query(() => Gadget)
  gadget(@Arg('id', () => ID) id: string): Gadget {
    const found = GADGETS.find((g) => g.id === id);
    if (!found) throw errors.notFound('gadget', id);
    return found;
  }

  /** Arguments GraphQL hands over as they are (an enum, a list of scalars) and a property of the context. */
  @Authorized('gadget:read')
  @Query(() => String)
  describe(
    @Arg('finish', () => Finish) finish: Finish,
    @Arg('tags', () => [String]) tags: string[],
    @Arg('count', () => Int, { nullable: true }) count: number | undefined,
    @Ctx('requestId') requestId: string,
  ): string {
    return `${finish} ${tags.join(',')} ${count ?? 'none'} for ${requestId}`;
  }

  @Authorized('gadget:write')
  @Mutation(() => Gadget)
  makeGadget(@Arg('input', () => GadgetInput) input: GadgetInput): Gadget {
    const kind = input instanceof GadgetInput ? 'GadgetInput' : 'a plain object';
    return { id: 'g3', name: input.name, tags: [input.size, kind], madeAt: new Date('2026-03-04T05:06:07.000Z') };
  }

  /** The same mutation kept on type-graphql's own resolver chain (its middleware keeps it there), to compare with. */
  @Authorized('gadget:write')
  @UseMiddleware((_action, next) => {
    chainRuns++;
    return next();
  })
  @Mutation(() => Gadget)
  makeGadgetThroughChain(@Arg('input', () => GadgetInput) input: GadgetInput): Gadget {
    return this.makeGadget(input);
  }

  @Authorized('gadget:write')
  @Mutation(() => Gadget)
  makeLabelledGadget(@Arg('input', () => LabelledGadgetInput) input: LabelledGadgetInput): Gadget {
    return { id: 'g4', name: `${input.name} (${input.label})`, tags: [input.size], madeAt: new Date('2026-03-04T05:06:07.000Z') };
  }

  @Authorized('gadget:write')
  @Mutation(() => [String])
  note(@Arg('input', () => NoteInput) input: NoteInput, @Arg('more', () => [NoteInput], { nullable: true }) more?: NoteInput[]): string[] {
    return [input, ...(more ?? [])].map((n) => `${n.text}${n.tags?.length ? ` #${n.tags.join(' #')}` : ''}`);
  }

  @FieldResolver(() => String)
  label(@Root() g: Gadget, @Ctx() ctx: RequestContext): string {
    return `${g.name} for ${ctx.requestId}`;
  }

  @FieldResolver(() => String)
  broken(): string {
    throw new Error('an unexpected failure with a secret inside');
  }
}

const gadgetById = defineLoader<string, Gadget | null>('test.gadgetById', async (ids) => ids.map((id) => GADGETS.find((g) => g.id === id) ?? null));

async function gadgets() {
  const built = await buildSubgraph({
    name: 'links',
    surface: 'links',
    resolvers: [GadgetResolver],
    instances: [new GadgetResolver()],
    references: {
      Gadget: {
        key: 'id',
        permission: 'gadget:read',
        loader: gadgetById,
        toEntity: (row: Gadget) => row,
      },
    },
  });
  return createExecutor(built.schema, createLogger('silent'));
}

const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

test('a document answers the same interpreted (its first run) and compiled (every later run)', async () => {
  const execute = await gadgets();
  const cases: [name: string, query: string, variables: Record<string, unknown> | undefined, principal: Principal][] = [
    ['a list with scalars, lists, dates, nulls and a field resolver', '{ gadgets { id name tags madeAt weight label } }', undefined, ADMIN],
    ['arguments from variables', 'query ($n: Int) { gadgets(first: $n) { id } }', { n: 1 }, ADMIN],
    ['an application error (404) beside data', 'query ($id: ID!) { gadget(id: $id) { id } gadgets { id } }', { id: 'nope' }, ADMIN],
    ['a permission refused', '{ gadgets { id } }', undefined, ANONYMOUS],
    ['an unexpected error, hidden', '{ gadgets { id broken } }', undefined, ADMIN],
    [
      'an input validated (class-validator)',
      'mutation ($i: GadgetInput!) { makeGadget(input: $i) { id name tags } }',
      { i: { name: 'far too long a name', size: 'huge' } },
      ADMIN,
    ],
    ['a valid input', 'mutation ($i: GadgetInput!) { makeGadget(input: $i) { id name tags madeAt } }', { i: { name: 'cup', size: 'small' } }, ADMIN],
    ['a variable of the wrong type', 'query ($n: Int) { gadgets(first: $n) { id } }', { n: 'three' }, ADMIN],
    [
      'entity references',
      'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Gadget { id name } } }',
      {
        r: [
          { __typename: 'Gadget', id: 'g2' },
          { __typename: 'Gadget', id: 'x' },
        ],
      },
      ADMIN,
    ],
  ];
  for (const [name, query, variables, principal] of cases) {
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(plain(await execute(query, variables, { principal, requestId: 'r1' })));
    assert.deepEqual(runs[1], runs[0], `${name}: compiled != interpreted`);
    assert.deepEqual(runs[2], runs[0], `${name}: a later compiled run`);
  }
  // What the answers are (so that "the same" is not "the same nothing").
  const list = plain(await execute('{ gadgets { id name tags madeAt weight label } }', undefined, { principal: ADMIN, requestId: 'r9' }));
  assert.deepEqual(list.data.gadgets[0], {
    id: 'g1',
    name: 'lamp',
    tags: ['light', 'desk'],
    madeAt: '2026-01-02T03:04:05.000Z',
    weight: 3,
    label: 'lamp for r9',
  });
  const invalid = plain(
    await execute(
      'mutation ($i: GadgetInput!) { makeGadget(input: $i) { id } }',
      { i: { name: 'far too long a name', size: 'huge' } },
      { principal: ADMIN, requestId: 'r9' },
    ),
  );
  assert.equal(invalid.errors[0].extensions.code, 'validation_error');
  assert.deepEqual(invalid.errors[0].extensions.details.errors.map((f: { field: string }) => f.field).sort(), ['name', 'size']);
  const hidden = plain(await execute('{ gadgets { id broken } }', undefined, { principal: ADMIN, requestId: 'r9' }));
  assert.equal(hidden.errors[0].extensions.code, 'internal_server_error');
  assert.doesNotMatch(JSON.stringify(hidden), /secret/);
});

test('every execution, interpreted or compiled, is traced with its context', async () => {
  const execute = await gadgets();
  const seen: string[] = [];
  const onStart = ({ context }: { context: RequestContext }) => void seen.push(context.requestId);
  SUBGRAPH_EXECUTION.start.subscribe(onStart as (message: unknown) => void);
  try {
    for (const requestId of ['a', 'b', 'c']) await execute('{ gadgets { id } }', undefined, { principal: ADMIN, requestId });
  } finally {
    SUBGRAPH_EXECUTION.start.unsubscribe(onStart as (message: unknown) => void);
  }
  assert.deepEqual(seen, ['a', 'b', 'c']);
});

test('an argument is checked by every constraint its class holds or inherits, and one whose class holds none passes as given', async () => {
  const execute = await gadgets();
  for (let run = 0; run < 3; run++) {
    // Interpreted (the first run) and compiled (the later ones) alike.
    const refused = plain(
      await execute(
        'mutation ($i: LabelledGadgetInput!) { makeLabelledGadget(input: $i) { id } }',
        { i: { name: 'far too long a name', size: 'small', label: 'x' } },
        { principal: ADMIN, requestId: 'r1' },
      ),
    );
    assert.equal(refused.errors?.[0].extensions.code, 'validation_error', JSON.stringify(refused));
    assert.deepEqual(
      refused.errors[0].extensions.details.errors.map((f: { field: string }) => f.field),
      ['name'],
    );
    const made = plain(
      await execute(
        'mutation ($i: LabelledGadgetInput!) { makeLabelledGadget(input: $i) { name } }',
        { i: { name: 'cup', size: 'large', label: 'blue' } },
        { principal: ADMIN, requestId: 'r1' },
      ),
    );
    assert.deepEqual(made, { data: { makeLabelledGadget: { name: 'cup (blue)' } } });
    const noted = plain(
      await execute(
        'mutation ($i: NoteInput!, $m: [NoteInput!]) { note(input: $i, more: $m) }',
        { i: { text: '' }, m: [{ text: 'a'.repeat(5000), tags: ['x', 'y'] }] },
        { principal: ADMIN, requestId: 'r1' },
      ),
    );
    assert.deepEqual(noted, { data: { note: ['', `${'a'.repeat(5000)} #x #y`] } });
  }
});

test("a plain field is read as the property it is, and a field's own @Authorized is still checked on every run", async () => {
  const execute = await gadgets();
  const fields = (execute.schema.getType('Gadget') as GraphQLObjectType).getFields();
  assert.equal(fields.name!.resolve, undefined, 'no resolver of its own: read inline');
  assert.equal(typeof fields.secret!.resolve, 'function');
  const reader: Principal = { ...ADMIN, permissions: ['gadget:read'] };
  for (let i = 0; i < 3; i++) {
    const refused = plain(await execute('{ gadgets(first: 1) { id name secret } }', undefined, { principal: reader, requestId: 'r1' }));
    assert.deepEqual(refused.data, { gadgets: [{ id: 'g1', name: 'lamp', secret: null }] }, `run ${i}`);
    assert.equal(refused.errors[0].extensions.code, 'insufficient_permissions');
    assert.deepEqual(refused.errors[0].path, ['gadgets', 0, 'secret']);
    const allowed = plain(await execute('{ gadgets(first: 1) { id secret } }', undefined, { principal: ADMIN, requestId: 'r2' }));
    assert.deepEqual(allowed, { data: { gadgets: [{ id: 'g1', secret: 'hidden' }] } }, `run ${i}`);
  }
});

test("a root operation called directly answers, validates and refuses as one run through type-graphql's resolver chain", async () => {
  const execute = await gadgets();
  const reader: Principal = { ...ADMIN, permissions: ['gadget:read'] };
  const writer: Principal = { ...ADMIN, permissions: ['gadget:write'] };
  for (let run = 0; run < 3; run++) {
    // Arguments GraphQL hands over as they are, and a property of the context.
    const answered = plain(
      await execute(
        'query ($f: Finish!, $t: [String!]!, $n: Int) { describe(finish: $f, tags: $t, count: $n) }',
        { f: 'GLOSS', t: ['a', 'b'] },
        { principal: reader, requestId: `r${run}` },
      ),
    );
    assert.deepEqual(answered, { data: { describe: `gloss a,b none for r${run}` } });
    // An input class: converted into its class and validated by its constraints, after the permission check.
    const inputs = [
      { name: 'cup', size: 'small' },
      { name: 'far too long a name', size: 'huge' },
    ];
    const principals: Principal[] = [writer, reader, ANONYMOUS];
    for (const principal of principals) {
      for (const input of inputs) {
        const answer = async (field: string): Promise<string> =>
          JSON.stringify(
            plain(await execute(`mutation ($i: GadgetInput!) { ${field}(input: $i) { id name tags } }`, { i: input }, { principal, requestId: 'r' })),
          );
        const direct = await answer('makeGadget');
        const before = chainRuns;
        assert.equal(direct, (await answer('makeGadgetThroughChain')).replaceAll('makeGadgetThroughChain', 'makeGadget'));
        assert.equal(chainRuns, before + (principal === writer ? 1 : 0), 'an operation with a middleware still runs it, after the permission check');
        const expected: string | null =
          principal === ANONYMOUS
            ? 'missing_authorization'
            : principal === reader
              ? 'insufficient_permissions'
              : input.size === 'huge'
                ? 'validation_error'
                : null;
        if (expected === null) {
          assert.deepEqual(JSON.parse(direct), { data: { makeGadget: { id: 'g3', name: 'cup', tags: ['small', 'GadgetInput'] } } });
        } else {
          assert.equal(JSON.parse(direct).errors[0].extensions.code, expected);
        }
      }
    }
  }
});

test("an argument is refused exactly when class-validator refuses it, with class-validator's own report; one that keeps every constraint is answered", async () => {
  const execute = await gadgets();
  const inputs = [
    { name: 'cup', size: 'small' },
    { name: '', size: 'large' },
    { name: 'cup', size: 'huge' },
    { name: 'far too long a name', size: 'huge' },
    { name: 'x'.repeat(10), size: 'large' },
  ];
  for (let run = 0; run < 3; run++) {
    for (const input of inputs) {
      // What class-validator itself reports for the same object, under the options the subgraphs validate with.
      const report = await validate(Object.assign(new GadgetInput(), input), { forbidUnknownValues: false, skipMissingProperties: true });
      const expected = report.flatMap((e) => Object.values(e.constraints ?? {}).map((message) => ({ field: e.property, message })));
      for (const field of ['makeGadget', 'makeGadgetThroughChain']) {
        const answer = plain(
          await execute(`mutation ($i: GadgetInput!) { ${field}(input: $i) { name } }`, { i: input }, { principal: ADMIN, requestId: 'r' }),
        ) as {
          data?: Record<string, { name: string }> | null;
          errors?: { extensions: { code: string; details: { errors: unknown } } }[];
        };
        if (!expected.length) {
          assert.deepEqual(answer.data, { [field]: { name: input.name } }, `${field} ${JSON.stringify(input)}`);
        } else {
          assert.equal(answer.errors?.[0]?.extensions.code, 'validation_error', `${field} ${JSON.stringify(input)}`);
          assert.deepEqual(answer.errors![0]!.extensions.details.errors, expected, `${field} ${JSON.stringify(input)}`);
        }
      }
    }
  }
});
