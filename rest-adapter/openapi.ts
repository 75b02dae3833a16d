import {
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  parse,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { getMetadataStorage } from 'type-graphql';
import { ERROR_STATUS } from '../kernel/errors';
import { toSnake } from './case';
import type { RestRequest, RouteDef } from './route';
import type { Surface } from './surface';

/**
 * The OpenAPI 3.1 document of every REST surface, generated from the route tables: each route's
 * GraphQL operation gives the parameters' and the body's types (the route's `variables` function
 * is run once over recording stand-ins, so the document shows which path, query and body fields
 * feed which variable), the permission its root field names (@Authorized), the surface's
 * envelopes and error codes, and an example request with the answer it gets — which the tests
 * replay against the running platform. Routes a service serves itself (redirects, streams, the
 * Prometheus text) are listed in SERVICE_ROUTES.
 */

type Schema = Record<string, unknown>;

export interface DocumentedExample {
  method: string;
  path: string;
  body?: unknown;
  status: number;
  /** The error code the example answers with, if it is an error. */
  code?: string;
}

const MARK = '\u0000';
const mark = (where: string, name: string) => `${MARK}${where}:${name}`;

/** Runs `variables` over stand-ins that record what each variable is made of. */
function trace(route: RouteDef) {
  const params = new Set<string>();
  const query = new Set<string>();
  const body = new Set<string>();
  const proxy = (where: 'params' | 'query' | 'body', seen: Set<string>) =>
    new Proxy({} as Record<string, unknown>, {
      get: (_t, k) => {
        if (typeof k !== 'string' || k === 'then' || k === 'toJSON') return undefined;
        seen.add(k);
        return mark(where, k);
      },
      has: () => true,
      ownKeys: () => [],
    });
  const bodyProxy = proxy('body', body);
  const req: RestRequest = { params: proxy('params', params) as Record<string, string>, query: proxy('query', query) as RestRequest['query'], body: bodyProxy };
  let vars: Record<string, unknown> = {};
  try {
    vars = route.variables?.(req) ?? {};
  } catch {
    // A function that needs real values: its variables are documented without their sources.
  }
  const source = new Map<string, { where: string; name?: string }>();
  for (const [v, value] of Object.entries(vars)) {
    if (value === bodyProxy) source.set(v, { where: 'wholeBody' });
    else if (typeof value === 'string' && value.startsWith(MARK)) {
      const [where, name] = value.slice(1).split(':');
      source.set(v, { where: where!, name });
    }
  }
  // A route that refuses an empty body itself (before any lookup) requires one.
  let refusesEmptyBody = false;
  try {
    route.variables?.({ params: Object.fromEntries([...params].map((p) => [p, 'x'])), query: {}, body: {} });
  } catch {
    refusesEmptyBody = true;
  }
  return { params, query, body, source, refusesEmptyBody };
}

function jsonSchema(type: GraphQLInputType, snake: boolean, depth = 0): Schema {
  if (isNonNullType(type)) return jsonSchema(type.ofType, snake, depth);
  if (isListType(type)) return { type: 'array', items: jsonSchema(type.ofType, snake, depth) };
  if (isEnumType(type)) return { type: 'string', enum: type.getValues().map((v) => v.name) };
  if (isScalarType(type)) {
    switch (type.name) {
      case 'String':
      case 'ID':
        return { type: 'string' };
      case 'Int':
        return { type: 'integer' };
      case 'Float':
        return { type: 'number' };
      case 'Boolean':
        return { type: 'boolean' };
      case 'DateTimeISO':
        return { type: 'string', format: 'date-time' };
      case 'JSONObject':
        return { type: 'object' };
      default:
        return {};
    }
  }
  if (isInputObjectType(type)) {
    if (depth > 6) return { type: 'object' };
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const f of Object.values(type.getFields())) {
      const name = snake ? toSnake(f.name) : f.name;
      properties[name] = { ...jsonSchema(f.type, snake, depth + 1), ...(f.description ? { description: f.description } : {}) };
      if (isNonNullType(f.type) && f.defaultValue === undefined) required.push(name);
    }
    return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
  }
  return {};
}

/** The permission the operation's root field names (@Authorized), or null for a public one. */
function permissionOf(op: OperationDefinitionNode): string | null {
  const root = op.selectionSet.selections.find((s) => s.kind === Kind.FIELD);
  if (!root || root.kind !== Kind.FIELD) return null;
  const entry = getMetadataStorage().authorizedFields.find((a) => a.fieldName === root.name.value);
  // type-graphql types the roles `any[]`; this schema's are strings.
  const roles = (entry?.roles ?? []).filter((r): r is string => typeof r === 'string' && !r.startsWith('surface:'));
  if (roles.includes('@public')) return null;
  return roles[0] ?? ANY_CALLER_LABEL;
}

const ANY_CALLER_LABEL = 'any caller of the surface';

const ERROR_CODES: Record<number, string[]> = {
  400: ['validation_error', 'invalid_json'],
  401: ['missing_authorization', 'invalid_api_key', 'expired_api_key', 'unauthorized'],
  403: ['insufficient_permissions'],
  404: ['resource_not_found'],
  429: ['RATE_LIMIT_EXCEEDED'],
  500: ['internal_server_error'],
};

/** Spec 3's codes on the infrastructure surface (the platform's own in details.reason). */
const INFRA_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'authentication_failed',
  403: 'insufficient_permissions',
  404: 'not_found',
  429: 'rate_limit_exceeded',
  500: 'server_error',
};

function envelopeSchemas(surface: Surface): { success: Schema; error: Schema } {
  const details = { type: 'object', description: 'For validation errors: errors[] {field, message}.' };
  const errorObject = { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' }, details } };
  const data = { description: 'The resource (see the GraphQL operation for its fields).' };
  const name = surface.name;
  if (name === 'v1') {
    const meta = { type: 'object', properties: { requestId: { type: 'string' }, timestamp: { type: 'string', format: 'date-time' } } };
    return {
      success: { type: 'object', required: ['success', 'data', 'meta'], properties: { success: { const: true }, data, meta } },
      error: { type: 'object', required: ['success', 'error'], properties: { success: { const: false }, error: errorObject, meta } },
    };
  }
  if (name === 'links') {
    return {
      success: { type: 'object', required: ['success', 'data'], properties: { success: { const: true }, data } },
      error: { type: 'object', required: ['success', 'error'], properties: { success: { const: false }, error: errorObject } },
    };
  }
  if (name === 'feedback') {
    return {
      success: { type: 'object', required: ['success', 'message', 'data'], properties: { success: { const: true }, message: { type: 'string' }, data } },
      error: {
        type: 'object',
        required: ['success', 'message', 'error'],
        properties: { success: { const: false }, message: { type: 'string' }, error: { type: 'string', description: 'The error code.' }, details },
      },
    };
  }
  if (name === 'infra') {
    return {
      success: { description: 'The resource itself, or {data, pagination: {page, limit, total, totalPages}} for a list.' },
      error: {
        type: 'object',
        required: ['error', 'message', 'details', 'requestId'],
        properties: {
          error: { type: 'string', enum: [...new Set(Object.values(INFRA_CODES)), 'conflict', 'service_unavailable'] },
          message: { type: 'string' },
          details,
          requestId: { type: 'string' },
          retryAfter: { type: 'integer' },
        },
      },
    };
  }
  const metadata = { type: 'object', properties: { timestamp: { type: 'string', format: 'date-time' }, request_id: { type: 'string' } } };
  return {
    success: { type: 'object', required: ['success', 'data', 'metadata'], properties: { success: { const: true }, data, metadata } },
    error: { type: 'object', required: ['success', 'error'], properties: { success: { const: false }, error: errorObject, metadata } },
  };
}

/**
 * What a route's example does: a list answers 200 (400 validation_error when it needs a query
 * parameter); an id nobody has, 404 (the code is the resource's own: not stated); a body that is
 * not an object, 400.
 */
function exampleOf(
  surface: Surface,
  route: RouteDef,
  params: Set<string>,
  needsQuery: boolean,
  hasBody: boolean,
  bodyRequired: boolean,
  permission: string | null,
): DocumentedExample | null {
  // Operations for a signed-in person (no permission named) have no example run with a key.
  if (permission === ANY_CALLER_LABEL) return null;
  const path =
    surface.prefix + route.path.replace(/:(\w+)/g, (_m, p: string) => (/id$|Id$/i.test(p) ? '00000000-0000-4000-8000-000000000000' : 'no-such-thing'));
  const invalid = surface.name === 'infra' ? INFRA_CODES[400] : 'validation_error';
  // The feature-request surface is for signed-in people: an API key gets 401 there.
  if (surface.name === 'feedback' && permission !== null)
    return { method: route.method, path, ...(hasBody ? { body: {} } : {}), status: 401, code: 'unauthorized' };
  if (route.method === 'GET' && params.size === 0)
    return needsQuery ? { method: 'GET', path, status: 400, code: invalid } : { method: 'GET', path, status: 200 };
  if ((route.method === 'GET' || route.method === 'DELETE') && params.size > 0) return { method: route.method, path, status: 404 };
  if (hasBody && params.size > 0 && !bodyRequired) return { method: route.method, path, body: {}, status: 404 };
  if (hasBody) return { method: route.method, path, body: [], status: 400 };
  return null;
}

/** Routes services serve themselves, beside the route tables (not GraphQL answers). */
const SERVICE_ROUTES: { path: string; method: 'get' | 'post'; summary: string; permission: string | null; tag: string }[] = [
  { path: '/health', method: 'get', summary: 'Liveness: {status: ok}, 503 while starting or draining.', permission: null, tag: 'platform' },
  {
    path: '/metrics',
    method: 'get',
    summary: 'Prometheus text format (tasks, executions, queue, requests, process).',
    permission: 'metrics:read',
    tag: 'platform',
  },
  {
    path: '/links/{slug}',
    method: 'get',
    summary: 'The public short link: 302 to the destination, or the gate page of a protected link (200 HTML); 404 unknown, 410 expired or inactive.',
    permission: null,
    tag: 'links',
  },
  { path: '/links/{slug}', method: 'post', summary: 'The gate page form (password or PIN) of a protected link.', permission: null, tag: 'links' },
  {
    path: '/feedback/api/v1/auth/{provider}',
    method: 'get',
    summary: 'Starts GitHub or Google sign-in (302 to the provider).',
    permission: null,
    tag: 'feedback',
  },
  {
    path: '/feedback/api/v1/auth/{provider}/callback',
    method: 'get',
    summary:
      'The provider sends the browser back here; 302 to FEEDBACK_FRONTEND_URL with the token (400 invalid_state unless the state is the cookie, issued here and unused).',
    permission: null,
    tag: 'feedback',
  },
  {
    path: '/infra/api/v1/services/{id}/logs',
    method: 'get',
    summary: "The service's log lines as {logs}; with follow=true an NDJSON stream of them.",
    permission: 'service:logs',
    tag: 'infra',
  },
  {
    path: '/webhook/{path}',
    method: 'post',
    summary: 'Inbound workflow webhooks (any method the trigger registers), authenticated as the trigger says.',
    permission: null,
    tag: 'webhook',
  },
];

export function buildOpenApi(surfaces: Surface[], schema: GraphQLSchema, version: string): { document: Schema; examples: DocumentedExample[] } {
  const paths: Record<string, Record<string, Schema>> = {};
  const examples: DocumentedExample[] = [];
  const envelopes: Record<string, Schema> = {};
  for (const surface of surfaces) {
    const env = envelopeSchemas(surface);
    envelopes[`${surface.name}.success`] = env.success;
    envelopes[`${surface.name}.error`] = env.error;
    for (const route of surface.routes) {
      const doc = parse(route.operation);
      const op = doc.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
      const varTypes = new Map(
        (op.variableDefinitions ?? []).map((d) => [
          d.variable.name.value,
          { type: typeFromAST(schema, d.type) as GraphQLInputType, required: d.type.kind === Kind.NON_NULL_TYPE && !d.defaultValue },
        ]),
      );
      const t = trace(route);
      const snake = !!surface.snakeCase;
      const parameters: Schema[] = [];
      for (const p of t.params) parameters.push({ name: p, in: 'path', required: true, schema: { type: 'string' } });
      const queryTypes = new Map<string, Schema>();
      let bodySchema: Schema | null = null;
      let wholeBodyRequired = false;
      let needsQuery = false;
      const bodyProps: Record<string, Schema> = {};
      const bodyRequired: string[] = [];
      for (const [v, src] of t.source) {
        const vt = varTypes.get(v);
        if (!vt?.type) continue;
        if (src.where === 'query') {
          queryTypes.set(src.name!, jsonSchema(vt.type, false));
          needsQuery ||= vt.required;
        }
        if (src.where === 'wholeBody') {
          bodySchema = jsonSchema(vt.type, snake);
          wholeBodyRequired = vt.required;
        }
        if (src.where === 'body') {
          const name = snake ? toSnake(src.name!) : src.name!;
          bodyProps[name] = jsonSchema(vt.type, snake);
          if (vt.required) bodyRequired.push(name);
        }
      }
      for (const q of t.query) parameters.push({ name: q, in: 'query', required: false, schema: queryTypes.get(q) ?? { type: 'string' } });
      // A body filtered or reshaped before it becomes a variable: the input-object variable it feeds.
      if (!bodySchema && !t.body.size && /\bbody\b/.test(String(route.variables))) {
        const fed = [...varTypes].find(([v, vt]) => !t.source.has(v) && vt.type && isInputObjectType(isNonNullType(vt.type) ? vt.type.ofType : vt.type));
        if (fed) bodySchema = jsonSchema(fed[1].type, snake);
      }
      // Body fields read through a transformation are still listed, without a type.
      for (const k of t.body) {
        const name = snake ? toSnake(k) : k;
        if (!bodySchema && !(name in bodyProps)) bodyProps[name] = {};
      }
      if (!bodySchema && Object.keys(bodyProps).length) {
        bodySchema = { type: 'object', properties: bodyProps, ...(bodyRequired.length ? { required: bodyRequired } : {}) };
        wholeBodyRequired = bodyRequired.length > 0;
      }
      const hasBody = route.method !== 'GET' && route.method !== 'DELETE' && bodySchema !== null;
      const permission = permissionOf(op);
      const example = exampleOf(surface, route, t.params, needsQuery, hasBody, wholeBodyRequired || t.refusesEmptyBody, permission);
      if (example) examples.push(example);
      const status = typeof route.status === 'number' ? route.status : 200;
      const errorResponses = Object.fromEntries(
        Object.entries(ERROR_CODES)
          .filter(([code]) => permission !== null || !['401', '403'].includes(code))
          .map(([code, codes]) => [
            code,
            {
              description:
                surface.name === 'infra'
                  ? INFRA_CODES[Number(code)]!
                  : codes.filter((c) => (ERROR_STATUS as Record<string, number>)[c] === Number(code)).join(', '),
              content: { 'application/json': { schema: { $ref: `#/components/schemas/${surface.name}.error` } } },
            },
          ]),
      );
      const path = (surface.prefix + route.path).replace(/:(\w+)/g, '{$1}');
      (paths[path] ??= {})[route.method.toLowerCase()] = {
        operationId: `${surface.name}.${op.name?.value ?? `${route.method} ${route.path}`}`,
        tags: [surface.name],
        summary: `${route.method} ${path}`,
        description: [
          `GraphQL operation \`${op.name?.value}\` through the gateway.`,
          permission ? `Needs the permission \`${permission}\`.` : 'Public: no credential needed.',
          typeof route.status === 'function' ? 'Answers 200, or 202 while the work still runs.' : '',
        ]
          .filter(Boolean)
          .join(' '),
        'x-permission': permission,
        'x-graphql-operation': op.name?.value,
        ...(parameters.length ? { parameters } : {}),
        ...(hasBody ? { requestBody: { required: wholeBodyRequired, content: { 'application/json': { schema: bodySchema } } } } : {}),
        responses: {
          [String(status)]: { description: 'Success', content: { 'application/json': { schema: { $ref: `#/components/schemas/${surface.name}.success` } } } },
          ...errorResponses,
        },
        ...(permission ? {} : { security: [] }),
        ...(example
          ? {
              'x-example': {
                request: { method: example.method, path: example.path, ...(example.body !== undefined ? { body: example.body } : {}) },
                response: { status: example.status, ...(example.code ? { code: example.code } : {}) },
              },
            }
          : {}),
      };
    }
  }
  for (const r of SERVICE_ROUTES) {
    const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    (paths[r.path] ??= {})[r.method] = {
      operationId: `${r.tag}.${r.method}${r.path.replace(/[^A-Za-z0-9]+/g, '_')}`,
      tags: [r.tag],
      summary: r.summary,
      description: `${r.summary} Served by the service itself (not a GraphQL answer).${r.permission ? ` Needs the permission \`${r.permission}\`.` : ''}`,
      'x-permission': r.permission,
      ...(params.length ? { parameters: params } : {}),
      responses: { '200': { description: 'Success' }, default: { description: "An error in the surface's envelope" } },
      ...(r.permission ? {} : { security: [] }),
    };
  }
  return {
    examples,
    document: {
      openapi: '3.1.0',
      info: {
        title: 'Automation platform REST surfaces',
        version,
        description:
          'Every REST path of the platform (CONTRACT.md sections 2 and 6). Each runs one GraphQL operation through the gateway at /graphql; the same credentials work on both. Permissions are `resource:action` strings named per operation (x-permission).',
      },
      servers: [{ url: '/' }],
      tags: surfaces.map((s) => ({ name: s.name, description: `Prefix ${s.prefix || '/'}` })),
      security: [{ bearer: [] }, { apiKey: [] }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key (cp_live_sk_…, ver_…, eng_…, lnk_…, inf_…) or, on /feedback and /infra, a session token.',
          },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: "The infrastructure surface's header." },
          engineKey: { type: 'apiKey', in: 'header', name: 'X-ENGINE-API-KEY', description: "The engine native surface's header." },
        },
        schemas: envelopes,
      },
      paths,
    },
  };
}
