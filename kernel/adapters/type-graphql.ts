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
    const passes = isPlainOptions(options) ? (value: unknown) => objectsIn(value).every(passesPlainConstraints) : undefined;
    const validateFn = async (value: unknown) => {
      const objects = objectsIn(value);
      if (!objects.length || passes?.(value)) return;
      try {
        await Promise.all(objects.map((o) => validateOrReject(o, options)));
      } catch (err) {
        throw new ArgumentValidationError(err as ValidationError[]);
      }
    };
    if (passes) plainPasses.set(validateFn, passes);
    param.validateFn = validateFn;
  }
}

/** The objects an argument's value holds (itself, or a list's items), which class-validator validates. */
function objectsIn(value: unknown): object[] {
  return (Array.isArray(value) ? value : [value]).filter((v): v is object => v !== null && typeof v === 'object');
}

/** Per `validateFn` made here under plain options: whether a value passes every constraint (see passesPlainConstraints), synchronously. */
const plainPasses = new WeakMap<Function, (value: unknown) => boolean>();

/** Options under which class-validator checks constraints and nothing else: no whitelist, groups, unknown values or per-kind skipping. */
function isPlainOptions(options: ValidatorOptions): boolean {
  return Object.entries(options).every(
    ([key, value]) => (key === 'forbidUnknownValues' && value === false) || (key === 'skipMissingProperties' && value === true),
  );
}

type PlainCheck = (object: object) => boolean;
const plainChecks = new Map<Function, PlainCheck | null>();

/**
 * Whether every constraint of the object's class holds, checked as class-validator's executor
 * checks them under plain options (a property whose condition — @IsOptional's — is false, or whose
 * value is missing, is skipped; each synchronous constraint's own `validate` is called with the
 * arguments the executor gives it), without the metadata lookups, error objects and promises it
 * makes for every call. False when one fails, and for a class with any other kind of constraint
 * (nested, per item, in groups, @IsDefined, asynchronous): class-validator then validates the
 * object and reports its errors as it always does. So a valid argument skips class-validator, and
 * an invalid one is refused exactly as before.
 */
function passesPlainConstraints(object: object): boolean {
  let check = plainChecks.get(object.constructor);
  if (check === undefined) {
    check = plainCheckOf(object.constructor) ?? null;
    plainChecks.set(object.constructor, check);
  }
  return check !== null && check(object);
}

function plainCheckOf(type: Function): PlainCheck | undefined {
  const storage = validationMetadata();
  const byProperty = new Map<string, { conditions: ((o: object, v: unknown) => boolean)[]; checks: ((o: object, v: unknown) => boolean)[] }>();
  for (const m of storage.getTargetValidationMetadatas(type, '', false, false)) {
    if (m.groups?.length || m.always || m.each) return undefined;
    let property = byProperty.get(m.propertyName);
    if (!property) byProperty.set(m.propertyName, (property = { conditions: [], checks: [] }));
    if (m.type === 'conditionalValidation') {
      const condition = (m.constraints as [(o: object, v: unknown) => boolean])[0];
      property.conditions.push(condition);
    } else if (m.type === 'customValidation' && m.constraintCls) {
      for (const constraint of storage.getTargetValidatorConstraints(m.constraintCls)) {
        if (constraint.async) return undefined;
        const { instance } = constraint;
        property.checks.push((o, value) => {
          const valid: unknown = instance.validate(value, { targetName: type.name, property: m.propertyName, object: o, value, constraints: m.constraints });
          return valid === true || (!!valid && typeof (valid as Promise<unknown>).then !== 'function');
        });
      }
    } else {
      return undefined;
    }
  }
  const properties = [...byProperty].map(([name, p]) => ({ name, ...p }));
  return (object) => {
    for (const p of properties) {
      const value = (object as Record<string, unknown>)[p.name];
      if (!p.conditions.every((c) => c(object, value)) || value === null || value === undefined) continue;
      if (!p.checks.every((c) => c(object, value))) return false;
    }
    return true;
  };
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
 * conversion, the arguments that have constraints validated (validateArgumentsDirectly; at once
 * when each passes them all, see passesPlainConstraints), then the method. Anything else (a middleware, @Root, a custom parameter) keeps type-graphql's resolver.
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
        (p.kind === 'arg' || p.kind === 'args') && p.validateFn
          ? [{ i, type: p.getType(), validate: p.validateFn, passes: plainPasses.get(p.validateFn) }]
          : [],
      );
      const method = instance[meta.methodName]!;
      resolvers[typeName][meta.schemaName] = (root: unknown, args: Record<string, unknown>, context: C, info: GraphQLResolveInfo) => {
        check(context, roles);
        const values = readers.map((read) => read(args, context, info));
        // Arguments that pass every constraint need no promise before the method runs.
        if (validated.every(({ i, passes }) => passes?.(values[i]))) return method.apply(instance, values);
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
