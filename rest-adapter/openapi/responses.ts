import {
  isAbstractType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  parse,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { routeOutput } from '../output';
import type { RestRequest, RouteDef } from '../route';

/**
 * The JSON Schema of a route's answer (before its surface's envelope), derived rather than written:
 * the operation's data is stood in for by traced values that know their GraphQL type and selection,
 * and the route's own output function (routeOutput: `pick`, renames, `omitNulls`, snake_case) runs
 * over them, so the schema follows whatever the answer is made of without a second copy of the rules.
 */

export type Schema = Record<string, unknown>;

/** The schema a traced value stands for. */
const SCHEMA = Symbol('schema');
/** Set on traced values that may be null: a key holding one may be dropped by omitNulls. */
const NULLABLE = Symbol('nullable');

interface Context {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  /** Values of the data given as themselves rather than traced (one of a route's `shapes`), by dotted path. */
  given?: Readonly<Record<string, string>>;
}

export function leafSchema(type: GraphQLNamedType): Schema {
  if (isEnumType(type)) return { type: 'string', enum: type.getValues().map((v) => v.name) };
  if (!isScalarType(type)) return {};
  switch (type.name) {
    case 'ID':
    case 'String':
      return { type: 'string' };
    case 'Int':
      return { type: 'integer' };
    case 'Float':
      return { type: 'number' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'DateTime':
    case 'DateTimeISO':
      return { type: 'string', format: 'date-time' };
    case 'JSONObject':
      return { type: 'object', additionalProperties: {} };
    default:
      return {};
  }
}

/** The schema that also admits null (OpenAPI 3.1: a type list). */
export function orNull(s: Schema): Schema {
  if (Object.keys(s).length === 0) return s;
  if (typeof s.type === 'string') return { ...s, type: [s.type, 'null'], ...(Array.isArray(s.enum) ? { enum: [...(s.enum as unknown[]), null] } : {}) };
  if (Array.isArray(s.type)) return s.type.includes('null') ? s : { ...s, type: [...(s.type as string[]), 'null'] };
  return { anyOf: [s, { type: 'null' }] };
}

const isNullable = (s: Schema) =>
  Object.keys(s).length === 0 ||
  (Array.isArray(s.type) && s.type.includes('null')) ||
  (Array.isArray(s.anyOf) && s.anyOf.some((x) => (x as Schema).type === 'null'));

/** The fields a selection set selects on one object type, by response key, in selection order. */
function collectFields(ctx: Context, type: GraphQLObjectType, sets: readonly SelectionSetNode[]) {
  const out = new Map<string, { name: string; sets: SelectionSetNode[] }>();
  const applies = (condition: string | undefined) => {
    if (!condition || condition === type.name) return true;
    const abstract = ctx.schema.getType(condition);
    return !!abstract && isAbstractType(abstract) && ctx.schema.isSubType(abstract, type);
  };
  const visit = (set: SelectionSetNode) => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const key = (s.alias ?? s.name).value;
        const entry = out.get(key) ?? { name: s.name.value, sets: [] };
        if (s.selectionSet) entry.sets.push(s.selectionSet);
        out.set(key, entry);
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        if (applies(s.typeCondition?.name.value)) visit(s.selectionSet);
      } else {
        const fragment = ctx.fragments.get(s.name.value);
        if (fragment && applies(fragment.typeCondition.name.value)) visit(fragment.selectionSet);
      }
    }
  };
  sets.forEach(visit);
  return out;
}

function fieldType(type: GraphQLObjectType, name: string): GraphQLOutputType {
  if (name === '__typename') return type.getFields()[name]?.type ?? (null as never);
  const field = type.getFields()[name];
  if (!field) throw new Error(`${type.name}.${name} is not in the schema`);
  return field.type;
}

/**
 * A stand-in for a value of `type` as selected: objects answer their selected keys with stand-ins,
 * lists `map` to a list of what the callback makes, leaves are functions (so key conversion and
 * omitNulls, which only walk plain objects and arrays, pass them through untouched).
 */
function traced(ctx: Context, type: GraphQLOutputType, sets: SelectionSetNode[], nullable = true, path = ''): unknown {
  if (isNonNullType(type)) return traced(ctx, type.ofType, sets, false, path);
  const wrap = (s: Schema) => (nullable ? orNull(s) : s);
  if (isListType(type)) return tracedList(traced(ctx, type.ofType, sets, true, path), nullable);
  if (isObjectType(type)) {
    const fields = collectFields(ctx, type, sets);
    const children = new Map<string, unknown>();
    const child = (key: string) => {
      if (!children.has(key)) {
        const f = fields.get(key)!;
        const at = path ? `${path}.${key}` : key;
        children.set(
          key,
          ctx.given && Object.hasOwn(ctx.given, at)
            ? ctx.given[at]
            : f.name === '__typename'
              ? leaf({ type: 'string' }, false)
              : traced(ctx, fieldType(type, f.name), f.sets, true, at),
        );
      }
      return children.get(key);
    };
    const schemaOf = () => wrap(objectSchema(new Map([...fields.keys()].map((k) => [k, child(k)])), true));
    return new Proxy({} as Record<string | symbol, unknown>, {
      get: (_t, k) => (k === SCHEMA ? schemaOf() : k === NULLABLE ? nullable : typeof k === 'string' && fields.has(k) ? child(k) : undefined),
      has: (_t, k) => typeof k === 'string' && fields.has(k),
      ownKeys: () => [...fields.keys()],
      getOwnPropertyDescriptor: (_t, k) =>
        typeof k === 'string' && fields.has(k) ? { value: child(k), enumerable: true, configurable: true, writable: true } : undefined,
    });
  }
  if (isAbstractType(type)) {
    const variants = ctx.schema.getPossibleTypes(type).map((t) => schemaOf(traced(ctx, t, sets, false)));
    return leaf({ anyOf: variants }, nullable);
  }
  return leaf(leafSchema(type), nullable);
}

function leaf(schema: Schema, nullable: boolean): unknown {
  const s = nullable ? orNull(schema) : schema;
  return new Proxy(function value() {}, {
    get: (_t, k) => (k === SCHEMA ? s : k === NULLABLE ? nullable : k === Symbol.toPrimitive ? (hint: string) => (hint === 'number' ? 0 : '') : undefined),
  });
}

function tracedList(item: unknown, nullable: boolean): unknown[] {
  const list = new Proxy([] as unknown[], {
    get: (target, k) => {
      if (k === SCHEMA) {
        const s = { type: 'array', items: schemaOf(item) };
        return nullable ? orNull(s) : s;
      }
      if (k === NULLABLE) return nullable;
      // What the output functions do with a list: map it, filter it, copy it.
      if (k === 'map') return (fn: (v: unknown, i: number) => unknown) => tracedList(fn(item, 0), nullable);
      if (k === 'filter' || k === 'slice') return () => list;
      return Reflect.get(target, k) as unknown;
    },
  });
  return list;
}

function isTraced(v: unknown): v is Record<symbol, unknown> {
  return (typeof v === 'object' || typeof v === 'function') && v !== null && (v as Record<symbol, unknown>)[SCHEMA] !== undefined;
}

/**
 * An object's schema. Keys the selection gives are all present; in an object the output code built,
 * a key holding a nullable value is optional, since omitNulls may have dropped it.
 */
function objectSchema(entries: Map<string, unknown>, selected: boolean): Schema {
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const [k, v] of entries) {
    if (v === undefined) continue;
    properties[k] = schemaOf(v);
    const mayBeDropped = !selected && ((isTraced(v) && v[NULLABLE] === true) || v === null);
    if (!mayBeDropped) required.push(k);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

export function schemaOf(v: unknown): Schema {
  if (isTraced(v)) return v[SCHEMA] as Schema;
  if (v === null) return { type: 'null' };
  if (v instanceof Date) return { type: 'string', format: 'date-time' };
  switch (typeof v) {
    case 'string':
      return { type: 'string' };
    case 'number':
      // Computed by the output code (a division, a default): not known to be whole.
      return { type: 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'undefined':
      return {};
  }
  if (Array.isArray(v)) {
    const items = dedupe(v.map(schemaOf));
    return { type: 'array', ...(items.length === 1 ? { items: items[0] } : items.length ? { items: { anyOf: items } } : {}) };
  }
  if (typeof v === 'object') return objectSchema(new Map(Object.entries(v as object)), false);
  return {};
}

function dedupe(schemas: Schema[]): Schema[] {
  const seen = new Map(schemas.map((s) => [JSON.stringify(s), s]));
  return [...seen.values()];
}

/** The answer a route gives (its `data`), as a JSON Schema. */
export function responseSchema(schema: GraphQLSchema, route: RouteDef): Schema {
  const doc = parse(route.operation);
  const op = doc.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const ctx: Context = {
    schema,
    fragments: new Map(doc.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f])),
  };
  const root = schema.getRootType(op.operation);
  if (!root) throw new Error(`the schema has no ${op.operation} type`);
  // Path parameters the output repeats are strings; the body and query are absent (the default case).
  const params = new Proxy({} as Record<string, string>, { get: (_t, k) => (typeof k === 'string' ? leaf({ type: 'string' }, false) : undefined) });
  const output = routeOutput(route);
  const answerWith = (given?: Context['given']) =>
    schemaOf(output(traced({ ...ctx, given }, root, [op.selectionSet], false) as Record<string, unknown>, { params, query: {}, body: bodyOf(given) }));
  // A route whose shape follows a value of the data is traced once per value, and the shapes merged.
  if (route.shapes?.length) return route.shapes.map(answerWith).reduce(mergeShapes);
  const answer = answerWith();
  // A `pick` that chooses its shape by the data (a run still going, a mode) was traced down one
  // branch only: its keys are documented, none is promised.
  return route.pick && branches(route.pick) ? withoutRequired(answer) : answer;
}

/** The request body a shape names (its `body.`-prefixed paths); none is the default case. */
function bodyOf(given: Context['given']): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(given ?? {})) {
    if (!path.startsWith('body.')) continue;
    const keys = path.split('.').slice(1);
    let at = body;
    for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
    at[keys.at(-1)!] = value;
  }
  return body;
}

/** Two shapes of one answer: every key of either, required where both require it, nested objects merged alike. */
export function mergeShapes(a: Schema, b: Schema): Schema {
  if (JSON.stringify(a) === JSON.stringify(b)) return a;
  const props = (s: Schema) => s.properties as Record<string, Schema> | undefined;
  const [pa, pb] = [props(a), props(b)];
  if (a.type === 'object' && b.type === 'object' && pa && pb) {
    const properties: Record<string, Schema> = { ...pa };
    for (const [k, v] of Object.entries(pb)) properties[k] = k in pa ? mergeShapes(pa[k]!, v) : v;
    const inB = new Set((b.required as string[] | undefined) ?? []);
    const required = ((a.required as string[] | undefined) ?? []).filter((k) => inB.has(k));
    return { type: 'object', properties, ...(required.length ? { required } : {}) };
  }
  return { anyOf: dedupe([...(Array.isArray(a.anyOf) ? (a.anyOf as Schema[]) : [a]), ...(Array.isArray(b.anyOf) ? (b.anyOf as Schema[]) : [b])]) };
}

/** A conditional in the function's source (`a ? b : c`, `if`), not counting `?.` and `??`. */
const branches = (fn: (...args: never[]) => unknown) => /\?(?![.?])|\bif\s*\(/.test(String(fn).replace(/\?\?=?|\?\./g, ''));

function withoutRequired(s: Schema): Schema {
  const { required: _required, ...rest } = s;
  return rest;
}
