import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  GraphQLError,
  GraphQLID,
  Kind,
  coerceInputValue,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  parse,
  typeFromAST,
  type GraphQLFormattedError,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { PUBLIC } from '../kernel/auth/principal';
import { AppError, errors, fromGraphQLError, type FieldError, type FieldReason } from '../kernel/errors';
import { assertAcceptableParams } from '../kernel/input-policy';
import { bodyTooLarge, useJsonBodyParser } from '../kernel/json-body';
import { EdgeRejection, newRequestId, type Admission, type Edge } from '../kernel/edge';
import { envelopeOf, type Meta } from '../kernel/envelopes';
import { presentedCredentials } from '../kernel/http';
import type { Logger } from '../kernel/logger';
import type { RequestContext } from '../kernel/subgraph';
import { convertKeys, toCamel, toSnake } from './case';
import { routeOutput } from './output';
import { declaredRoles, type RestRequest, type RouteDef } from './route';

export interface Surface {
  name: string;
  /** URL prefix; empty when the surface is served alone. */
  prefix: string;
  /** The name of the envelope it answers in (a kernel one, or one its service registered). */
  envelope: string;
  routes: RouteDef[];
  /** Body and error field names are snake_case on this surface. */
  snakeCase?: boolean;
  /** Default largest body in bytes. */
  bodyLimit?: number;
  /** Accept the engine's X-ENGINE-API-KEY header. */
  engineKeyHeader?: boolean;
}

/**
 * What the REST adapter needs of the gateway, by shape: the adapter and the gateway are siblings
 * (server/ wires them together), so neither imports the other.
 */
export interface OperationGateway {
  /** The composed API schema, to check variables at the edge. */
  readonly schema: GraphQLSchema;
  /** One named operation, parsed and checked once, run per request. */
  prepare(operation: string): (variables: Record<string, unknown>, context: RequestContext) => Promise<OperationResult>;
}

export interface OperationResult {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLFormattedError[];
}

export interface SurfaceDeps {
  gateway: OperationGateway;
  edge: Edge;
  logger: Logger;
}

const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Registers one REST surface: its routes, its JSON parsing, its envelope for every answer. */
export function registerSurface(app: FastifyInstance, surface: Surface, deps: SurfaceDeps): void {
  const envelope = envelopeOf(surface.envelope);
  const meta = (req: FastifyRequest): Meta => ({
    requestId: req.requestId ?? newRequestId(),
    timestamp: new Date().toISOString(),
  });
  const fail = (req: FastifyRequest, reply: FastifyReply, err: AppError) => {
    // Endpoint-specific limits (prompt tests, chain executions…) are refused inside a subgraph.
    const retryAfter = err.details?.retryAfter;
    if (err.code === 'RATE_LIMIT_EXCEEDED' && typeof retryAfter === 'number' && !reply.hasHeader('retry-after')) {
      reply.header('retry-after', String(retryAfter));
    }
    return reply.code(err.status).send(envelope.error(err, meta(req)));
  };

  app.register(
    async (scope) => {
      useJsonBodyParser(scope);

      scope.setErrorHandler((err: FastifyError, req, reply) => {
        if (err instanceof EdgeRejection) {
          reply.headers(err.headers);
          return fail(req, reply, err.error);
        }
        if (err instanceof AppError) return fail(req, reply, err);
        const tooLarge = bodyTooLarge(err, req.routeOptions.bodyLimit);
        if (tooLarge) return fail(req, reply, tooLarge);
        if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
          return fail(
            req,
            reply,
            new AppError('invalid_json', 'The request body must be JSON (Content-Type: application/json)', { parse_error: 'unsupported content type' }),
          );
        }
        if (typeof err.statusCode === 'number' && err.statusCode < 500) {
          return fail(req, reply, errors.validation([{ field: 'request', message: err.message }]));
        }
        deps.logger.error('unhandled error in REST route', { err, url: req.url });
        return fail(req, reply, errors.internal(req.requestId));
      });

      const patterns = surface.routes.map((r) => ({ method: r.method, regex: pathRegex(r.path) }));
      scope.setNotFoundHandler((req, reply) => {
        const path = req.url.split('?')[0]!.slice(surface.prefix.length) || '/';
        const allowed = patterns.filter((p) => p.regex.test(path)).map((p) => p.method);
        if (allowed.length) {
          reply.header('allow', [...new Set(allowed)].join(', '));
          return fail(req, reply, new AppError('method_not_allowed', `${req.method} is not allowed on ${req.url.split('?')[0]}`, { allowed }));
        }
        return fail(req, reply, errors.notFound('route', `${req.method} ${req.url.split('?')[0]}`));
      });

      for (const route of surface.routes) {
        const checks = variableChecks(route, deps.gateway);
        const run = deps.gateway.prepare(route.operation);
        const answer = routeOutput(route);
        const open = isPublicOperation(route);
        const admissions = new WeakMap<FastifyRequest, Admission>();
        scope.route({
          method: route.method,
          url: route.path,
          bodyLimit: route.bodyLimit ?? surface.bodyLimit ?? DEFAULT_BODY_LIMIT,
          // Who is calling is settled before the body is read or checked: a caller without a
          // credential learns that it needs one (401), not what its body lacks (400).
          onRequest: async (req, reply) => {
            req.requestId = newRequestId();
            const admission = await deps.edge.admit(presentedCredentials(req, surface.engineKeyHeader), req.requestId);
            reply.headers(admission.headers);
            if (!open && admission.context.principal.kind === 'anonymous') throw errors.missingAuthorization();
            admissions.set(req, admission);
          },
          handler: async (req, reply) => {
            const admission = admissions.get(req)!;
            assertAcceptableParams(req.params as Record<string, unknown>);
            assertAcceptableParams(req.query as Record<string, unknown>);
            const opaque = new Set(route.opaque ?? []);
            const body = surface.snakeCase ? convertKeys(req.body, toCamel, opaque) : req.body;
            const rest: RestRequest = { params: req.params as Record<string, string>, query: req.query as RestRequest['query'], body };
            const variables = route.variables?.(rest) ?? {};
            checks.check(variables, body, surface.snakeCase);
            const result = await run(variables, admission.context);
            if (result.errors?.length) throw fromGraphQLError(result.errors[0]!);
            const data = answer(result.data, rest);
            const status = typeof route.status === 'function' ? route.status(result.data, rest) : (route.status ?? 200);
            return reply.code(status).send(envelope.success(data, meta(req)));
          },
        });
      }
    },
    { prefix: surface.prefix },
  );
}

/**
 * Whether the route's operation is open to callers without a credential: its root field declares
 * @Authorized(PUBLIC) in its subgraph. Every other operation refuses an anonymous caller anyway,
 * so the surface refuses one before reading the body.
 */
function isPublicOperation(route: RouteDef): boolean {
  const op = parse(route.operation).definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
  const roles = declaredRoles(op);
  if (!roles) throw new Error(`Route ${route.method} ${route.path}: its operation's root field declares no @Authorized (is its subgraph loaded?)`);
  return roles.includes(PUBLIC);
}

/**
 * Validation at the edge: the variables are coerced against the operation's variable types in
 * the composed schema, and every problem is reported as {field, message} in the client's terms.
 */
function variableChecks(route: RouteDef, gateway: OperationGateway) {
  const doc = parse(route.operation);
  const op = doc.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
  if (!op) throw new Error(`Route ${route.method} ${route.path}: the operation has no definition`);
  const vars = (op.variableDefinitions ?? []).map((def) => {
    const type = typeFromAST(gateway.schema, def.type) as GraphQLInputType | undefined;
    if (!type) throw new Error(`Route ${route.method} ${route.path}: unknown type for $${def.variable.name.value}`);
    return { name: def.variable.name.value, type, hasDefault: !!def.defaultValue };
  });
  return {
    check(variables: Record<string, unknown>, body: unknown, snake = false) {
      const problems: FieldError[] = [];
      const name = (variable: string, path: readonly (string | number)[]) => {
        const segments = variables[variable] === body && body !== undefined ? path : [variable, ...path];
        const out = segments.map((s) => (snake && typeof s === 'string' ? toSnake(s) : String(s))).join('.');
        return out || 'body';
      };
      for (const v of vars) {
        const value = variables[v.name];
        if (value === undefined || value === null) {
          if (isNonNullType(v.type) && !v.hasDefault) {
            problems.push({ field: name(v.name, []), message: value === null ? 'must not be null' : 'is required', reason: 'required_field_missing' });
          }
          continue;
        }
        // Unknown and missing fields, and values of the wrong kind, are named by path from the
        // type's shape; graphql-js then checks the values. Its report of a missing field (made at
        // the parent object's path) is dropped as a duplicate, and so is anything it says inside a
        // value already refused for its kind.
        const parentsOfMissing = new Set<string>();
        const refused: string[] = [];
        const known = checkShape(value, v.type, [], (path, message, kind) => {
          problems.push({ field: name(v.name, path), message, reason: SHAPE_REASONS[kind] });
          if (kind === 'missing') parentsOfMissing.add(path.slice(0, -1).join('.'));
          if (kind === 'wrong-kind') refused.push(path.join('.'));
        });
        coerceInputValue(known, v.type, (path, invalid, error: GraphQLError) => {
          const at = path.join('.');
          if (parentsOfMissing.has(at) || refused.some((r) => at === r || at.startsWith(`${r}.`))) return;
          problems.push({ field: name(v.name, path), message: cleanMessage(error.message), reason: coercionReason(v.type, path, invalid) });
        });
      }
      if (problems.length) throw errors.validation(problems);
    },
  };
}

const SHAPE_REASONS: Record<'unknown' | 'missing' | 'wrong-kind', FieldReason> = {
  unknown: 'unknown_field',
  missing: 'required_field_missing',
  'wrong-kind': 'invalid_type',
};

/** The JSON kind each built-in scalar takes; a value of another kind is of the wrong type, not a wrong value of the right one. */
const SCALAR_KINDS: Record<string, string> = { Int: 'number', Float: 'number', String: 'string', ID: 'string', Boolean: 'boolean' };

/** Why graphql-js refused `invalid` at `path`: a value of the wrong kind (invalid_type), else a wrong value (invalid_value). */
function coercionReason(type: GraphQLInputType, path: readonly (string | number)[], invalid: unknown): FieldReason {
  let at: GraphQLInputType | undefined = type;
  for (const segment of path) {
    const named: GraphQLInputType | undefined = at && getNullableType(at);
    at = isListType(named) ? named.ofType : isInputObjectType(named) && typeof segment === 'string' ? named.getFields()[segment]?.type : undefined;
  }
  const leaf = at && getNullableType(at);
  if (leaf && isEnumType(leaf)) return typeof invalid === 'string' ? 'invalid_value' : 'invalid_type';
  const kind = leaf && isLeafType(leaf) ? SCALAR_KINDS[leaf.name] : undefined;
  return kind && typeof invalid !== kind ? 'invalid_type' : 'invalid_value';
}

/**
 * Walks `value` along its input type: reports fields the type does not define, required fields
 * that are missing, and values graphql-js would coerce instead of refusing (a single value where
 * a list is expected becomes a one-item list; a number where an ID is expected becomes a string):
 * a REST client sending the wrong type gets a 400 naming the field, never a silent conversion.
 * Returns a copy without the unknown fields.
 */
function checkShape(
  value: unknown,
  type: GraphQLInputType,
  path: (string | number)[],
  report: (path: (string | number)[], message: string, kind: 'unknown' | 'missing' | 'wrong-kind') => void,
): unknown {
  const named = getNullableType(type);
  if (value === null || value === undefined) return value;
  if (isListType(named)) {
    if (!Array.isArray(value)) {
      report(path, 'must be an array', 'wrong-kind');
      return value;
    }
    return value.map((item, i) => checkShape(item, named.ofType, [...path, i], report));
  }
  if (named === GraphQLID && typeof value !== 'string') {
    report(path, 'must be a string', 'wrong-kind');
    return value;
  }
  if (!isInputObjectType(named)) return value;
  if (typeof value !== 'object' || Array.isArray(value)) {
    report(path, 'must be an object', 'wrong-kind');
    return value;
  }
  const fields = named.getFields();
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const field = fields[key];
    const item = (value as Record<string, unknown>)[key];
    if (!field) report([...path, key], 'is not a known field', 'unknown');
    else out[key] = isPlainLeaf(item, field.type) ? item : checkShape(item, field.type, [...path, key], report);
  }
  for (const key of requiredFields(named)) {
    const given = (value as Record<string, unknown>)[key];
    if (given === undefined || given === null) report([...path, key], given === null ? 'must not be null' : 'is required', 'missing');
  }
  return out;
}

/** A value checkShape has nothing to say about, not walked: absent, or a scalar's or an enum's (an ID's a string). */
function isPlainLeaf(value: unknown, type: GraphQLInputType): boolean {
  const named = getNullableType(type);
  return value === null || value === undefined || (isLeafType(named) && (named !== GraphQLID || typeof value === 'string'));
}

const required = new WeakMap<GraphQLInputObjectType, string[]>();

/** The fields of an input type a value must give (non-null, without a default), read once per type. */
function requiredFields(type: GraphQLInputObjectType): string[] {
  let names = required.get(type);
  if (!names) {
    names = Object.values(type.getFields())
      .filter((f) => isNonNullType(f.type) && f.defaultValue === undefined)
      .map((f) => f.name);
    required.set(type, names);
  }
  return names;
}

function cleanMessage(message: string): string {
  // graphql-js phrases some problems in terms of its types; keep the message, drop the noise.
  return message.replace(/^Expected value of type "([^"]+)", found [^;]+; /, '').replace(/"(\w+)!"/g, '$1');
}

function pathRegex(path: string): RegExp {
  const pattern = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, '[^/]+');
  return new RegExp(`^${pattern}/?$`);
}
