/**
 * The one place that reaches into type-graphql beyond its documented API, for speed: its
 * resolvers/convert-args.js module and its metadata storage, rewritten so root operations skip its
 * resolver pipeline. Written for type-graphql 2.0.0-rc.4, pinned exactly in package.json.
 *
 * When upgrading, run kernel/adapters/type-graphql.test.ts and check that convertArgToInstance /
 * convertArgsToInstance and the metadata fields read here still exist with the same shapes.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import type { GraphQLResolveInfo } from 'graphql';
import { ArgumentValidationError, getMetadataStorage } from 'type-graphql';
import { getMetadataStorage as validationMetadata, validateOrReject, type ValidationError, type ValidatorOptions } from 'class-validator';

/** The version this adapter was written for. */
export const TYPE_GRAPHQL_VERSION = '2.0.0-rc.4';

const CONVERT_ARGS = 'resolvers/convert-args.js';

type ResolverMetadata = ReturnType<typeof getMetadataStorage>['queries'][number];
type ParamMetadata = NonNullable<ResolverMetadata['params']>[number];
type ArgParamMetadata = Extract<ParamMetadata, { kind: 'arg' | 'args' }>;

interface ConvertArgs {
  convertArgToInstance(meta: ArgParamMetadata, args: Record<string, unknown>): unknown;
  convertArgsToInstance(meta: ArgParamMetadata, args: Record<string, unknown>): unknown;
}

/**
 * What of type-graphql's private shape this adapter finds: an error naming the library, the
 * version it was written for and what changed, or undefined when everything is in place.
 */
export function typeGraphQLShapeProblem(): string | undefined {
  const problem = (what: string) =>
    `type-graphql ${installedVersion()} (adapter written for ${TYPE_GRAPHQL_VERSION}): ${what} — see kernel/adapters/type-graphql.ts`;
  let module: Partial<ConvertArgs>;
  try {
    module = createRequire(require.resolve('type-graphql'))(`./${CONVERT_ARGS}`) as Partial<ConvertArgs>;
  } catch {
    return problem(`${CONVERT_ARGS} is gone`);
  }
  for (const name of ['convertArgToInstance', 'convertArgsToInstance'] as const) {
    if (typeof module[name] !== 'function') return problem(`${CONVERT_ARGS} no longer exports ${name}`);
  }
  const storage = getMetadataStorage() as unknown as Record<string, unknown>;
  for (const list of ['queries', 'mutations', 'subscriptions', 'params', 'objectTypes', 'fieldResolvers', 'authorizedFields']) {
    if (!Array.isArray(storage[list])) return problem(`its metadata storage has no list "${list}"`);
  }
  return undefined;
}

function installedVersion(): string {
  try {
    const file = path.join(path.dirname(require.resolve('type-graphql')), '..', '..', 'package.json');
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'of unknown version';
  }
}

const shapeProblem = typeGraphQLShapeProblem();
if (shapeProblem) throw new Error(shapeProblem);

/** type-graphql's own conversion of an argument into its class (an input type's instance, nested ones included, defaults from its initialisers). */
const { convertArgToInstance, convertArgsToInstance } = createRequire(require.resolve('type-graphql'))(`./${CONVERT_ARGS}`) as ConvertArgs;

/** How the subgraphs validate their object arguments (class-validator), as type-graphql's `validate` option. */
export const VALIDATION: ValidatorOptions = { forbidUnknownValues: false };

/**
 * Gives each validated argument its own `validateFn` running class-validator (imported once) with the
 * options type-graphql would merge, instead of type-graphql importing it again on every call. An
 * argument whose type holds no constraint is not validated, unless whitelisting or unknown-value
 * options could refuse it.
 */
export function validateArgumentsDirectly(): void {
  for (const param of getMetadataStorage().params) {
    if ((param.kind !== 'arg' && param.kind !== 'args') || param.validateFn || param.validateSettings === false) continue;
    const options: ValidatorOptions = { ...VALIDATION, ...(typeof param.validateSettings === 'object' ? param.validateSettings : {}) };
    if (options.skipMissingProperties !== false) options.skipMissingProperties = true;
    if (options.forbidUnknownValues !== true) options.forbidUnknownValues = false;
    if (!options.whitelist && !options.forbidUnknownValues && !holdsConstraints(param.getType())) {
      param.validateSettings = false;
      continue;
    }
    param.validateFn = async (value: unknown) => {
      const objects = (Array.isArray(value) ? value : [value]).filter((v): v is object => v !== null && typeof v === 'object');
      if (!objects.length) return;
      try {
        await Promise.all(objects.map((o) => validateOrReject(o, options)));
      } catch (err) {
        throw new ArgumentValidationError(err as ValidationError[]);
      }
    };
  }
}

/** Whether class-validator holds a constraint for an argument's declared type (its items', for a list): a class's own or inherited; never a scalar's. */
function holdsConstraints(type: unknown): boolean {
  return typeof type === 'function' && validationMetadata().getTargetValidationMetadatas(type, '', true, false).length > 0;
}

/**
 * type-graphql runs every root operation through its middleware chain (the @Authorized check is
 * the only middleware here), an async validation of every argument and a Promise.all: about ten
 * promises before the method starts. A query or mutation that takes its arguments, the context
 * and the resolve info is called directly instead, doing what that chain does in the same order:
 * the check of its @Authorized roles, each argument turned into its class by type-graphql's own
 * conversion, the arguments that have constraints validated (validateArgumentsDirectly), then the
 * method. Anything else (a middleware, @Root, a custom parameter) keeps type-graphql's resolver.
 */
export function runRootOperationsDirectly<C extends object>(
  resolvers: Record<string, Record<string, unknown>>,
  resolverClasses: readonly Function[],
  instances: Map<Function, object>,
  check: (context: C, roles: string[]) => void,
): void {
  const storage = getMetadataStorage();
  const targets = new Set<Function>(resolverClasses);
  for (const [typeName, operations] of [
    ['Query', storage.queries],
    ['Mutation', storage.mutations],
  ] as const) {
    for (const meta of operations) {
      const instance = instances.get(meta.target) as Record<string, (...args: unknown[]) => unknown> | undefined;
      const roles = meta.roles;
      if (!targets.has(meta.target) || !instance || !roles || meta.middlewares?.length || !resolvers[typeName]?.[meta.schemaName]) continue;
      const params = [...(meta.params ?? [])].sort((a, b) => a.index - b.index);
      const readers = params.map((p) => readerOf<C>(p));
      if (!readers.every((r) => r !== undefined)) continue;
      const validated = params.flatMap((p, i) =>
        (p.kind === 'arg' || p.kind === 'args') && p.validateFn ? [{ i, type: p.getType(), validate: p.validateFn }] : [],
      );
      const method = instance[meta.methodName]!;
      resolvers[typeName][meta.schemaName] = (root: unknown, args: Record<string, unknown>, context: C, info: GraphQLResolveInfo) => {
        check(context, roles);
        const values = readers.map((read) => read(args, context, info));
        if (!validated.length) return method.apply(instance, values);
        const resolverData = { root, args, context, info };
        return Promise.all(validated.map(({ i, type, validate }) => validate(values[i], type, resolverData))).then(() => method.apply(instance, values));
      };
    }
  }
}

type ParamReader<C> = (args: Record<string, unknown>, context: C, info: GraphQLResolveInfo) => unknown;

/**
 * How a parameter gets its value: an argument as type-graphql converts it (one with nothing to
 * validate, or whose validation is its own `validateFn`), the context (or one of its properties) or
 * the resolve info; undefined for anything else.
 */
function readerOf<C extends object>(p: ParamMetadata): ParamReader<C> | undefined {
  switch (p.kind) {
    case 'info':
      return (_args, _context, info) => info;
    case 'context': {
      const property = p.propertyName as keyof C | undefined;
      return property ? (_args, context) => context[property] : (_args, context) => context;
    }
    case 'arg':
    case 'args':
      if (p.validateSettings !== false && !p.validateFn) return undefined;
      return p.kind === 'arg' ? (args) => convertArgToInstance(p, args) : (args) => convertArgsToInstance(p, args);
    default:
      return undefined;
  }
}

/**
 * type-graphql gives every field of an object type a resolver that runs the field's middlewares
 * (its @Authorized check among them) and then reads the property. A field with none to run (and
 * buildSubgraph gives no global middleware) keeps GraphQL's default resolver instead, the same
 * property read, which graphql-jit compiles inline rather than calling a function with a resolve
 * info built for it, for every field of every object of an answer. A field keeps type-graphql's
 * resolver when any class of its type's name gives it @Authorized, a middleware, arguments, a
 * field resolver or a schema name of its own.
 */
export function dropPlainFieldResolvers(resolvers: Record<string, Record<string, unknown>>): void {
  const storage = getMetadataStorage();
  const resolvedBy = new Set(storage.fieldResolvers.map((r) => `${r.getObjectType?.().name}.${r.methodName}`));
  const plain = new Set<string>();
  const kept = new Set<string>();
  for (const type of storage.objectTypes) {
    for (const f of type.fields ?? []) {
      const key = `${type.name}.${f.schemaName}`;
      const isPlain =
        f.roles === undefined && !f.middlewares?.length && !f.params?.length && f.name === f.schemaName && !resolvedBy.has(`${type.target.name}.${f.name}`);
      (isPlain ? plain : kept).add(key);
    }
  }
  for (const [typeName, fields] of Object.entries(resolvers)) {
    for (const name of Object.keys(fields)) {
      const key = `${typeName}.${name}`;
      if (plain.has(key) && !kept.has(key)) delete fields[name];
    }
  }
}
