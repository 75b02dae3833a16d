export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RestRequest {
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  /** The JSON body, with keys already in GraphQL's camelCase on snake_case surfaces. */
  body: any;
}

/**
 * One REST path = one named GraphQL operation. `variables` turns the request into the
 * operation's variables (a variable that is the body itself reports field errors by the body's
 * field names); `pick` turns the operation's data into the surface's response data.
 */
export interface RouteDef {
  method: HttpMethod;
  /** Relative to the surface prefix; Fastify syntax (`/auth/api-keys/:key_id`). */
  path: string;
  operation: string;
  variables?: (req: RestRequest) => Record<string, unknown>;
  pick: (data: any, req: RestRequest) => unknown;
  /** Success status (default 200), or a function of the operation's data (202 while a sync call's work still runs). */
  status?: number | ((data: any, req: RestRequest) => number);
  /** Body keys under which client data is kept verbatim (no case conversion). */
  opaque?: string[];
  /** Largest accepted body in bytes (default: the surface's). */
  bodyLimit?: number;
}

export function defineRoute(def: RouteDef): RouteDef {
  return def;
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

export function floatParam(v: unknown): unknown {
  if (v === undefined || v === '') return undefined;
  return typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : v;
}
