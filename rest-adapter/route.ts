import { Kind, type OperationDefinitionNode } from 'graphql';
import { getMetadataStorage } from 'type-graphql';
import type { ErrorCode } from '../kernel/errors';
import type { TypedDocumentString } from './surfaces/generated';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RestRequest {
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  /** The JSON body, with keys already in GraphQL's camelCase on snake_case surfaces: any JSON, checked by the operation's variable types. */
  body: unknown;
}

/** One field of the body (undefined when the body is not an object): its value is checked as the variable it feeds. */
export function bodyField(body: unknown, key: string): unknown {
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>)[key] : undefined;
}

/** The route options that shape an answer (after `pick`, if any); output.ts applies them. */
export interface OutputOptions {
  /** Drop null fields of the answer (of each item when it is a list); nested objects are kept as they are. */
  omitNulls?: boolean;
  /** snake_case every key of the answer, deeply, except inside the route's `opaque` keys. */
  snakeCase?: boolean;
  /** Keys whose contents are client data, kept verbatim by the case conversion. */
  opaque?: string[];
}

/**
 * One REST path = one named GraphQL operation. `variables` turns the request into the
 * operation's variables (a variable that is the body itself reports field errors by the body's
 * field names). The answer is the operation's root field as selected (aliases rename, see
 * output.ts), shaped by `omitNulls` / `snakeCase`; `pick` replaces the root field only where the
 * answer is another shape. A bare `RouteDef` is the erased form a surface lists: `operation` is
 * the document's text, and routes of every data type stand together, each checked where
 * defineRoute declared it.
 */
export interface RouteDef<D = unknown> extends OutputOptions {
  method: HttpMethod;
  /** Relative to the surface prefix; Fastify syntax (`/auth/api-keys/:key_id`). */
  path: string;
  operation: string;
  variables?: (req: RestRequest) => Record<string, unknown>;
  /** The answer when it is not the root field's value (before the output options apply). */
  // pick and statusOf are methods: their parameters are checked bivariantly, so routes of every
  // data type stand together as RouteDef (each was checked against its own D by defineRoute).
  pick?(data: D, req: RestRequest): unknown;
  /** Success status (default 200), or a function of the operation's data (202 while a sync call's work still runs). */
  status?: number | StatusOf<D>;
  /** Body keys (and answer keys, with `snakeCase`) under which client data is kept verbatim (no case conversion). */
  opaque?: string[];
  /** Largest accepted body in bytes (default: the surface's). */
  bodyLimit?: number;
  /** The refusals its operation's service gives beyond those every route may (credential, input, rate limit, an unknown id in the path). */
  refusals?: readonly RouteRefusal[];
  /**
   * Where `pick` chooses the answer's shape by values of the data (a task's `status`) or of the
   * request body (`body.execution.mode`): each shape's values by their dotted path, so the API
   * description is derived from every shape.
   */
  shapes?: readonly Readonly<Record<string, string>>[];
}

/** A function of the operation's data, typed through a method so that its parameter is bivariant as pick's is. */
type StatusOf<D> = { status(data: D, req: RestRequest): number }['status'];

/**
 * A refusal a route can answer: a declared error code (its status is the code's) and when the
 * service gives it. The OpenAPI document lists it under that status with an example body.
 */
export interface RouteRefusal {
  code: ErrorCode;
  when: string;
}

/**
 * The variables a route gives its operation: every one the operation declares, named (undefined
 * where the request has none, so a misspelt name does not compile), with values still unchecked —
 * the edge checks them against the operation's variable types before anything runs (surface.ts).
 */
export type RouteVariables<V> = { [K in keyof V]-?: unknown };

/**
 * A route as declared: `operation` is a generated document (surfaces/generated.ts, from the
 * surfaces' .graphql files), so the data `pick` and `status` read and the variables' names are
 * the document's own; an operation with required variables needs `variables`.
 */
export type RouteSpec<D, V> = Omit<RouteDef<D>, 'operation' | 'variables'> & { operation: TypedDocumentString<D, V> } & ({} extends V
    ? { variables?: (req: RestRequest) => RouteVariables<V> }
    : { variables: (req: RestRequest) => RouteVariables<V> });

/** Declares a route; its operation's text is what the gateway prepares. */
export function defineRoute<D, V>(spec: RouteSpec<D, V>): RouteDef {
  return { ...spec, operation: spec.operation.toString() } as RouteDef;
}

/** A text query parameter: absent when missing or empty (as intParam and boolParam). */
export function strParam(v: unknown): unknown {
  return v === undefined || v === '' ? undefined : v;
}

/** A query-string integer: a number when it is one, else the raw string so validation names it. */
export function intParam(v: unknown): unknown {
  if (v === undefined || v === '') return undefined;
  return typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
}

export function boolParam(v: unknown): unknown {
  if (v === undefined || v === '') return undefined;
  return v === 'true' ? true : v === 'false' ? false : v;
}

/**
 * The roles the operation's root field declares with @Authorized in its subgraph (permissions,
 * PUBLIC, surface markers), or undefined when it declares none. Read from TypeGraphQL's metadata,
 * so every subgraph's resolvers must be loaded (they are, wherever routes are served or described).
 */
export function declaredRoles(op: OperationDefinitionNode | undefined): string[] | undefined {
  const root = op?.selectionSet.selections.find((s) => s.kind === Kind.FIELD);
  if (!root || root.kind !== Kind.FIELD) return undefined;
  const declared = getMetadataStorage().authorizedFields.filter((a) => a.fieldName === root.name.value);
  // type-graphql types the roles `any[]`; this schema's are strings.
  return declared.length ? declared.flatMap((a): unknown[] => a.roles).filter((r): r is string => typeof r === 'string') : undefined;
}
