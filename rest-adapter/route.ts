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
 * answer is another shape. `D` is the operation's data, declared by hand next to the selection it
 * mirrors (no code generator): a route whose `pick` or `status` reads the data declares it.
 * A bare `RouteDef` is the erased form a surface lists: routes of every data type, each checked
 * where defineRoute declared it.
 */
export interface RouteDef<D = any> extends OutputOptions {
  method: HttpMethod;
  /** Relative to the surface prefix; Fastify syntax (`/auth/api-keys/:key_id`). */
  path: string;
  operation: string;
  variables?: (req: RestRequest) => Record<string, unknown>;
  /** The answer when it is not the root field's value (before the output options apply). */
  pick?: (data: D, req: RestRequest) => unknown;
  /** Success status (default 200), or a function of the operation's data (202 while a sync call's work still runs). */
  status?: number | ((data: D, req: RestRequest) => number);
  /** Body keys (and answer keys, with `snakeCase`) under which client data is kept verbatim (no case conversion). */
  opaque?: string[];
  /** Largest accepted body in bytes (default: the surface's). */
  bodyLimit?: number;
}

/** Declares a route; without `D` its data is a record of unknowns, so a `pick` that reads into the data must declare it. */
export function defineRoute<D = Record<string, unknown>>(def: RouteDef<D>): RouteDef {
  return def as RouteDef;
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
