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
import { PUBLIC } from '../kernel/auth/principal';
import { envelopeOf, type Meta } from '../kernel/envelopes';
import { AppError, ERROR_STATUS, isKnownErrorCode } from '../kernel/errors';
import { toSnake } from './case';
import { declaredRoles, type RestRequest, type RouteDef, type RouteRefusal } from './route';
import { leafSchema, responseSchema } from './openapi/responses';
import { tagOf, tagSection } from './openapi/tags';
import type { Surface } from './surface';

/**
 * The OpenAPI 3.1 document of every REST surface, generated from the route tables: each route's
 * GraphQL operation gives its types (its `variables` function runs once over recording stand-ins to
 * map path, query and body fields to variables), its answer schema, permission, errors, tag and an
 * example the tests replay. Routes a service serves itself are described in SERVICE_ROUTES.
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
  if (isEnumType(type) || isScalarType(type)) return leafSchema(type);
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
  const roles = (declaredRoles(op) ?? []).filter((r) => !r.startsWith('surface:'));
  if (roles.includes(PUBLIC)) return null;
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

const DETAILS = { type: 'object', description: 'For validation errors: errors[] {field, message, reason}. When the request is traced: traceId, its trace.' };
const ERROR_OBJECT = {
  type: 'object',
  required: ['code', 'message'],
  properties: { code: { type: 'string' }, message: { type: 'string' }, details: DETAILS },
};

/** The name of a surface's error envelope among the components. */
const errorComponent = (surface: string) => `${surface.replace(/(^|-)(\w)/g, (_m, _d, c: string) => c.toUpperCase())}Error`;

/** Each surface's error envelope, as its `error` function in kernel/envelopes.ts builds it. */
function errorEnvelope(surface: string): Schema {
  switch (surface) {
    case 'v1':
      return {
        type: 'object',
        required: ['success', 'error', 'meta'],
        properties: { success: { const: false }, error: ERROR_OBJECT, meta: META },
      };
    case 'links':
    case 'webhook':
      return { type: 'object', required: ['success', 'error'], properties: { success: { const: false }, error: ERROR_OBJECT } };
    case 'feedback':
      return {
        type: 'object',
        required: ['success', 'message', 'error', 'details'],
        properties: { success: { const: false }, message: { type: 'string' }, error: { type: 'string', description: 'The error code.' }, details: DETAILS },
      };
    case 'infra':
      return {
        type: 'object',
        required: ['error', 'message', 'details', 'requestId'],
        properties: {
          error: {
            type: 'string',
            description: `One code per status: ${Object.values(infraCodes()).join(', ')}; the platform's own code is in details.reason.`,
          },
          message: { type: 'string' },
          details: DETAILS,
          requestId: { type: 'string' },
          retryAfter: { type: 'integer' },
        },
      };
    default:
      return {
        type: 'object',
        required: ['success', 'error', 'metadata'],
        properties: { success: { const: false }, error: ERROR_OBJECT, metadata: METADATA },
      };
  }
}

const META = {
  type: 'object',
  required: ['requestId', 'timestamp'],
  properties: { requestId: { type: 'string' }, timestamp: { type: 'string', format: 'date-time' } },
};
const METADATA = {
  type: 'object',
  required: ['timestamp', 'request_id'],
  properties: { timestamp: { type: 'string', format: 'date-time' }, request_id: { type: 'string' } },
};

/** A surface's success envelope around one answer, as its `success` function builds it. */
function successEnvelope(surface: string, data: Schema): Schema {
  switch (surface) {
    case 'v1':
      return { type: 'object', required: ['success', 'data', 'meta'], properties: { success: { const: true }, data, meta: META } };
    case 'links':
      return { type: 'object', required: ['success', 'data'], properties: { success: { const: true }, data } };
    case 'feedback':
      return {
        type: 'object',
        required: ['success', 'message', 'data'],
        properties: { success: { const: true }, message: { type: 'string' }, data },
      };
    case 'infra':
    case 'webhook':
      return data;
    default:
      return { type: 'object', required: ['success', 'data', 'metadata'], properties: { success: { const: true }, data, metadata: METADATA } };
  }
}

/** The request id and time the example error bodies carry (fixed, so the document is the same every time it is built). */
const EXAMPLE_META: Meta = { requestId: 'req_00000000000000000000', timestamp: '2026-01-01T00:00:00.000Z' };

/**
 * The error answers of one operation, each in its surface's error envelope: the statuses every
 * route of its kind may give, and the route's own refusals under their codes' statuses, each with
 * the body its surface's envelope makes of it as an example.
 */
function errorResponses(surface: string, envelope: string, statuses: number[], refusals: readonly RouteRefusal[] = []): Record<string, Schema> {
  const own = new Map<number, RouteRefusal[]>();
  for (const r of refusals) {
    if (!isKnownErrorCode(r.code)) throw new Error(`A route declares the refusal ${r.code}, which no service declares (registerErrorCodes)`);
    const status = ERROR_STATUS[r.code]!;
    own.set(status, [...(own.get(status) ?? []), r]);
  }
  const all = [...new Set([...statuses, ...own.keys()])].sort((a, b) => a - b);
  return Object.fromEntries(
    all.map((status) => {
      const declared = own.get(status) ?? [];
      const generic = !statuses.includes(status)
        ? ''
        : surface === 'infra'
          ? (infraCodes()[status] ?? 'error')
          : (ERROR_CODES[status] ?? []).filter((c) => (ERROR_STATUS as Record<string, number>)[c] === status).join(', ') || 'error';
      const examples = Object.fromEntries(
        declared.map((r, i) => [
          declared.findIndex((d) => d.code === r.code) === i ? r.code : `${r.code}_${i + 1}`,
          { summary: r.when, value: envelopeOf(envelope).error(new AppError(r.code, r.when.charAt(0).toUpperCase() + r.when.slice(1)), EXAMPLE_META) },
        ]),
      );
      return [
        String(status),
        {
          description: [generic, ...declared.map((r) => `${r.code} when ${r.when}`)].filter(Boolean).join('; '),
          content: {
            'application/json': {
              schema: { $ref: `#/components/schemas/${errorComponent(surface)}` },
              ...(declared.length ? { examples } : {}),
            },
          },
        },
      ];
    }),
  );
}

/** Which errors an operation can answer: refusals of its credential, of its input, of a missing resource. */
function errorStatuses(o: { hasInput: boolean; hasPathParams: boolean; needsToken: boolean }): number[] {
  return [
    ...(o.hasInput ? [400] : []),
    ...(o.needsToken ? [401, 403] : []),
    ...(o.hasPathParams ? [404] : []),
    // Every request counts against a rate limit, anonymous ones included.
    429,
    500,
  ];
}

/** A stable operationId from the surface and the route: `v1GetControlPlaneAgentsTasksByTaskId`. */
function operationId(surface: string, method: string, path: string): string {
  const words = [surface, method.toLowerCase(), ...path.split('/').map((seg) => (seg.startsWith(':') ? `by-${seg.slice(1)}` : seg))]
    .flatMap((w) => w.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return words.map((w, i) => (i === 0 ? w.replace(/^./, (c) => c.toLowerCase()) : w.replace(/^./, (c) => c.toUpperCase()))).join('');
}

/** The credentials a surface takes: a bearer token or key anywhere, X-API-Key anywhere, X-ENGINE-API-KEY on the engine's own layout. */
function securityOf(surface: Surface, permission: string | null): Schema[] {
  const schemes = [{ bearer: [] }, { apiKey: [] }, ...(surface.engineKeyHeader ? [{ engineKey: [] }] : [])];
  // A public operation still takes a credential: a service may answer a signed-in caller more (the
  // feature-request surface lets a project refuse anonymous submissions).
  return permission ? schemes : [{}, ...schemes];
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
  const invalid = surface.name === 'infra' ? infraCodes()[400] : 'validation_error';
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

/** Routes services serve themselves, beside the route tables (not GraphQL answers): their answers are written here. */
interface ServiceRoute {
  path: string;
  method: 'get' | 'post';
  surface: string;
  summary: string;
  permission: string | null;
  parameters?: Schema[];
  requestBody?: Schema;
  responses: Record<string, Schema>;
  errors: number[];
  /** The refusals the service gives beyond the generic ones (`errors`), as the route tables declare theirs. */
  refusals?: readonly RouteRefusal[];
}

const json = (schema: Schema) => ({ 'application/json': { schema } });
const redirect = (description: string) => ({ description, headers: { Location: { description: 'Where the browser goes next.', schema: { type: 'string' } } } });
const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });

const SERVICE_ROUTES: ServiceRoute[] = [
  {
    path: '/health',
    method: 'get',
    surface: 'platform',
    summary: 'Liveness',
    permission: null,
    responses: {
      '200': { description: 'Serving.', content: json({ type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }) },
      '503': { description: 'Starting or draining.', content: json({ type: 'object', required: ['status'], properties: { status: { type: 'string' } } }) },
    },
    errors: [],
  },
  {
    path: '/metrics',
    method: 'get',
    surface: 'v1',
    summary: 'Prometheus metrics',
    permission: 'metrics:read',
    responses: {
      '200': { description: 'Prometheus text format: tasks, executions, queue, requests, process.', content: { 'text/plain': { schema: { type: 'string' } } } },
    },
    errors: [401, 403, 429],
  },
  {
    path: '/links/{slug}',
    method: 'get',
    surface: 'links',
    summary: 'Follow a short link',
    permission: null,
    responses: {
      '302': redirect('To the destination.'),
      '200': html('The gate page of a protected link.'),
      '404': html('No link has this slug.'),
      '410': html('The link expired or was deactivated.'),
      '429': html('Too many requests.'),
    },
    errors: [],
  },
  {
    path: '/links/{slug}',
    method: 'post',
    surface: 'links',
    summary: 'Unlock a protected link (the gate page form)',
    permission: null,
    requestBody: {
      required: true,
      content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { password: { type: 'string' }, pin: { type: 'string' } } } } },
    },
    responses: {
      '302': redirect('To the destination; the link stays unlocked in this browser.'),
      '400': html('The gate page again: the password or PIN is missing.'),
      '401': html('The gate page again: the password or PIN is wrong.'),
      '404': html('No link has this slug.'),
      '410': html('The link expired or was deactivated.'),
      '429': html('Too many wrong attempts: try again after Retry-After seconds.'),
    },
    errors: [],
  },
  {
    path: '/links/api/links/{id}/verify',
    method: 'post',
    surface: 'links',
    summary: 'Unlock a protected link',
    permission: null,
    requestBody: {
      required: true,
      content: json({ type: 'object', properties: { password: { type: 'string' }, pin: { type: 'string' } } }),
    },
    responses: {
      '200': {
        description: 'Unlocked: the answer sets the cookie the link page reads, so this browser is not asked again.',
        content: json(
          successEnvelope('links', {
            type: 'object',
            required: ['id', 'slug', 'destination'],
            properties: { id: { type: 'string' }, slug: { type: 'string' }, destination: { type: 'string' } },
          }),
        ),
      },
    },
    errors: [400, 401, 404, 410, 429],
  },
  {
    path: '/feedback/api/v1/auth/github',
    method: 'get',
    surface: 'feedback',
    summary: 'Sign in with GitHub',
    permission: null,
    responses: { '302': redirect("To GitHub's authorization page; a cookie keeps the sign-in's state.") },
    errors: [],
    refusals: [{ code: 'service_unavailable', when: 'sign-in with GitHub is not configured (GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET)' }],
  },
  {
    path: '/feedback/api/v1/auth/google',
    method: 'get',
    surface: 'feedback',
    summary: 'Sign in with Google',
    permission: null,
    responses: { '302': redirect("To Google's authorization page; a cookie keeps the sign-in's state.") },
    errors: [],
    refusals: [{ code: 'service_unavailable', when: 'sign-in with Google is not configured (GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET)' }],
  },
  ...(['github', 'google'] as const).map((provider): ServiceRoute => ({
    path: `/feedback/api/v1/auth/${provider}/callback`,
    method: 'get',
    surface: 'feedback',
    summary: `${provider === 'github' ? 'GitHub' : 'Google'} sign-in callback`,
    permission: null,
    parameters: [
      { name: 'state', in: 'query', required: true, description: 'The state the sign-in started with (it must equal the cookie).', schema: { type: 'string' } },
      { name: 'code', in: 'query', required: false, description: "The provider's authorization code.", schema: { type: 'string' } },
      { name: 'error', in: 'query', required: false, description: 'Set by the provider when the person refused.', schema: { type: 'string' } },
    ],
    responses: {
      '302': redirect('To the feedback front end: /auth/callback?token=<JWT>, or ?error=<code>&message=<text> when the provider refused or failed.'),
    },
    errors: [],
    refusals: [{ code: 'invalid_state', when: 'the state is not the one this browser started with, expired or was already used' }],
  })),
  {
    path: '/infra/api/v1/services/{id}/logs',
    method: 'get',
    surface: 'infra',
    summary: "A service's log lines",
    permission: 'service:logs',
    parameters: [
      { name: 'follow', in: 'query', required: false, description: 'true: an NDJSON stream of lines as they come.', schema: { type: 'boolean' } },
      { name: 'lines', in: 'query', required: false, schema: { type: 'integer' } },
    ],
    responses: {
      '200': {
        description: 'The lines as {logs}; with follow=true, one JSON line per log line.',
        content: {
          ...json({ type: 'object', required: ['logs'], properties: { logs: { type: 'array', items: {} } } }),
          'application/x-ndjson': { schema: { type: 'string' } },
        },
      },
    },
    errors: [400, 401, 403, 404, 429],
  },
  ...(
    [
      ['/v1/engine', 'v1'],
      ['/engine/api/v1', 'engine-api'],
    ] as const
  ).map(([prefix, surface]): ServiceRoute => ({
    path: `${prefix}/executions/{executionId}/binary/{binaryId}`,
    method: 'get',
    surface,
    summary: "Download a file of an execution's binary data",
    permission: 'workflow:read',
    responses: {
      '200': {
        description: 'The file, streamed as it is read from where it is kept: its bytes, with its MIME type, its name (Content-Disposition) and its length.',
        headers: {
          'Content-Disposition': { description: 'attachment; filename="…"; filename*=UTF-8\'\'…', schema: { type: 'string' } },
          'Content-Length': { schema: { type: 'integer' } },
        },
        content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
    },
    errors: [401, 403, 404, 429],
  })),
  {
    path: '/webhook/{path}',
    method: 'post',
    surface: 'webhook',
    summary: 'Call a workflow webhook trigger',
    permission: null,
    requestBody: { required: false, content: json({}) },
    responses: { '200': { description: "The workflow's own answer, as its trigger says.", content: json({}) } },
    errors: [401, 404, 429],
  },
];

export function buildOpenApi(surfaces: Surface[], schema: GraphQLSchema, version: string): { document: Schema; examples: DocumentedExample[] } {
  const paths: Record<string, Record<string, Schema>> = {};
  const examples: DocumentedExample[] = [];
  const errorSurfaces = new Set<string>();
  const usedTags = new Set<string>();
  for (const surface of surfaces) {
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
      const path = (surface.prefix + route.path).replace(/:(\w+)/g, '{$1}');
      const tag = tagOf(path);
      usedTags.add(tag);
      errorSurfaces.add(surface.name);
      const success = { description: 'Success', content: json(successEnvelope(surface.name, responseSchema(schema, route))) };
      (paths[path] ??= {})[route.method.toLowerCase()] = {
        operationId: operationId(surface.name, route.method, route.path),
        tags: [tag],
        summary: summaryOf(op.name?.value ?? path),
        description: [
          `Runs the GraphQL operation \`${op.name?.value}\` through the gateway.`,
          permission === ANY_CALLER_LABEL
            ? 'Needs a signed-in caller.'
            : permission
              ? `Needs the permission \`${permission}\`.`
              : 'Public: no credential needed.',
          typeof route.status === 'function' ? 'Answers 200, or 202 while the work still runs.' : '',
        ]
          .filter(Boolean)
          .join(' '),
        'x-permission': permission,
        'x-graphql-operation': op.name?.value,
        ...(parameters.length ? { parameters } : {}),
        ...(hasBody ? { requestBody: { required: wholeBodyRequired, content: json(bodySchema!) } } : {}),
        responses: {
          [String(status)]: success,
          ...(typeof route.status === 'function' ? { '202': { ...success, description: 'Accepted: the work still runs.' } } : {}),
          ...errorResponses(
            surface.name,
            surface.envelope,
            errorStatuses({ hasInput: hasBody || t.query.size > 0 || t.params.size > 0, hasPathParams: t.params.size > 0, needsToken: permission !== null }),
            route.refusals,
          ),
        },
        security: securityOf(surface, permission),
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
    const tag = tagOf(r.path);
    usedTags.add(tag);
    if (r.errors.length || r.refusals?.length) errorSurfaces.add(r.surface);
    (paths[r.path] ??= {})[r.method] = {
      operationId: operationId(r.surface, r.method, r.path.replace(/\{(\w+)\}/g, ':$1')),
      tags: [tag],
      summary: r.summary,
      description: `Served by the service itself (not a GraphQL answer).${r.permission ? ` Needs the permission \`${r.permission}\`.` : ''}`,
      'x-permission': r.permission,
      ...(params.length || r.parameters ? { parameters: [...params, ...(r.parameters ?? [])] } : {}),
      ...(r.requestBody ? { requestBody: r.requestBody } : {}),
      responses: {
        ...r.responses,
        ...errorResponses(
          r.surface,
          r.surface,
          r.errors.filter((s) => !(String(s) in r.responses)),
          r.refusals,
        ),
      },
      security: r.permission ? [{ bearer: [] }, { apiKey: [] }] : [],
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
          'Every REST path of the platform. Each runs one GraphQL operation through the gateway at /graphql, so the same credentials work on both; the answers are described from those operations. Permissions are `resource:action` strings named per operation (x-permission).',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: '/' }],
      ...tagSection(usedTags),
      security: [{ bearer: [] }, { apiKey: [] }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key (cp_live_sk_…, ver_…, eng_…, lnk_…, inf_…) or, on /feedback and /infra, a session token.',
          },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key in a header of its own.' },
          engineKey: { type: 'apiKey', in: 'header', name: 'X-ENGINE-API-KEY', description: "The engine's own layout's header." },
        },
        schemas: Object.fromEntries([...errorSurfaces].map((s) => [errorComponent(s), errorEnvelope(s)])),
      },
      paths,
    },
  };
}

/** `GetTask` → `Get task`: the operation's name in words. */
function summaryOf(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The infrastructure surface's error code per status, as its service's envelope declares them. */
function infraCodes(): Readonly<Record<number, string>> {
  return envelopeOf('infra').codeByStatus ?? {};
}
