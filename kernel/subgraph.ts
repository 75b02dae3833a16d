import 'reflect-metadata';
import { tracingChannel } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError, execute, parse, validate, type GraphQLResolveInfo, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { buildSubgraphSchema, printSubgraphSchema } from '@apollo/subgraph';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { buildSchema, createResolversMap, getMetadataStorage, type NonEmptyArray, type PubSub } from 'type-graphql';
import type { ValidationError } from 'class-validator';
import { VALIDATION, dropPlainFieldResolvers, runRootOperationsDirectly, validateArgumentsDirectly } from './adapters/type-graphql';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, errors, tracedDetails, type FieldError } from './errors';
import { refusedInput } from './input-policy';
import { ANONYMOUS, authorize, type KeyService, type Principal, type Surface } from './auth/principal';
import type { RateLimitSnapshot } from './rate-limit';
import type { SubgraphName } from './config';
import type { Logger } from './logger';
import type { TopicName } from './topics';
import { load, type LoaderDefinition, type RequestLoaders } from './loaders';
import { recordMutations, type AuditTrail } from './audit';

/** What every resolver receives: who calls, and the request's id and rate-limit standing. */
export interface RequestContext {
  principal: Principal;
  requestId: string;
  rateLimit?: RateLimitSnapshot;
  ip?: string;
  /** The client's User-Agent (the edge's, forwarded to remote subgraphs with the rest of the context). */
  userAgent?: string;
  /**
   * The platform's address as the caller reaches it (PUBLIC_URL, else the request's scheme and
   * host, X-Forwarded-* believed only with TRUST_PROXY): links in answers are absolute with it.
   */
  baseUrl?: string;
  /**
   * The batched loads of this execution (kernel/loaders.ts), created on first use. Each subgraph
   * execution starts with none of its own: reach them only through `load`/`loaderOf`.
   */
  loaders?: RequestLoaders;
}

/** `path` (starting with "/") as an absolute URL for this caller; relative when the base is unknown (internal calls). */
export function absoluteUrl(ctx: Pick<RequestContext, 'baseUrl'> | undefined, path: string): string {
  return `${ctx?.baseUrl ?? ''}${path}`;
}

export function anonymousContext(requestId = 'internal'): RequestContext {
  return { principal: ANONYMOUS, requestId };
}

export interface SubgraphSpec {
  name: SubgraphName;
  /** The key service this subgraph's operations accept. */
  surface: KeyService | 'feedback';
  resolvers: NonEmptyArray<Function>;
  /** Resolver instances, constructed by the service's index.ts with their dependencies. */
  instances: object[];
  orphanedTypes?: Function[];
  /** The federation entities (types with @key) other subgraphs may reference, by type name (each has its own row type, which only its own loader and toEntity see). */
  references?: Record<string, EntityReference<unknown>>;
  /** Where its mutations are recorded (kernel/audit); none when only its schema is printed. */
  audit?: AuditTrail;
}

/**
 * How a subgraph resolves references to one of its entities (`_entities`): through a batched
 * load, so that a plan that references 100 entities makes one query, not 100. `_entities` is not
 * a root field the auth checker sees, so the reference names the permission its own query
 * declares and the kernel checks it before loading.
 */
export interface EntityReference<V> {
  /** The @key field the reference carries. */
  key: string;
  /** As the entity's own query: `@Authorized(permission)` on the subgraph's surface. */
  permission: string;
  /** The entity's row by key, null for a missing one (the reference then resolves to null). */
  loader: LoaderDefinition<string, V | null>;
  // Methods, not function properties: their parameters are checked bivariantly, so a reference of
  // any row type stands in a Record<string, EntityReference<unknown>> beside the others.
  /** The row as the GraphQL type (e.g. the resolver's `toWorkflow`). */
  toEntity(row: V): unknown;
  /** Whether this caller may see the row, beyond the permission (its own keys only, say): a hidden row resolves to null, as a missing one. */
  visible?(row: V, ctx: RequestContext): boolean;
}

/** A reference typed by its own loader's rows, so toEntity and visible read them as such. */
export function entityReference<V>(ref: EntityReference<V>): EntityReference<V> {
  return ref;
}

export interface BuiltSubgraph {
  name: string;
  schema: GraphQLSchema;
  /** The subgraph SDL as composition reads it (committed under schema/subgraphs), printed when first read. */
  readonly sdl: string;
  /** The type definitions the schema was built from: what the SDL is printed from, cheaper to hash than to print. */
  readonly source?: string;
}

const FEDERATION_LINK = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable", "@external", "@requires", "@provides", "@interfaceObject"])`;

/**
 * TypeGraphQL schema -> Apollo Federation 2 subgraph. Every operation is checked by the auth
 * checker: `@Authorized('perm')` names the permission, `@Authorized()` any authenticated caller.
 */
export async function buildSubgraph(spec: SubgraphSpec): Promise<BuiltSubgraph> {
  const instances = new Map<Function, object>(spec.instances.map((i) => [i.constructor, i]));
  const check = (context: RequestContext, roles: string[]) => {
    const [permission, ...extra] = roles;
    const surfaces = extra.length ? [spec.surface, ...extra.filter((r) => r.startsWith('surface:')).map((r) => r.slice(8) as Surface)] : spec.surface;
    authorize(context.principal, surfaces, permission);
  };
  validateArgumentsDirectly();
  const typeSchema = await buildSchema({
    resolvers: spec.resolvers,
    orphanedTypes: spec.orphanedTypes,
    skipCheck: true,
    validate: VALIDATION,
    container: {
      get: (cls: Function) => {
        const instance = instances.get(cls);
        if (!instance) throw new Error(`No instance of ${cls.name} was given to subgraph ${spec.name}`);
        return instance;
      },
    },
    authChecker: ({ context }, roles) => {
      check(context as RequestContext, roles);
      return true;
    },
    pubSub: { publish: () => undefined, subscribe: () => emptyIterable() } satisfies PubSub,
  });
  assertEveryOperationAuthorized(spec);
  const resolvers = createResolversMap(typeSchema) as Record<string, Record<string, unknown>>;
  dropPlainFieldResolvers(resolvers);
  runRootOperationsDirectly(resolvers, spec.resolvers, instances, check);
  if (spec.audit) recordMutations(resolvers, spec.audit, spec.name);
  for (const [type, ref] of Object.entries(spec.references ?? {})) {
    resolvers[type] = {
      ...resolvers[type],
      __resolveReference: async (reference: Record<string, unknown>, ctx: RequestContext) => {
        authorize(ctx.principal, spec.surface, ref.permission);
        const row = await load(ctx, ref.loader, String(reference[ref.key]));
        return row === null || (ref.visible && !ref.visible(row, ctx)) ? null : ref.toEntity(row);
      },
    };
  }
  const source = `${FEDERATION_LINK}\n${printSchemaWithDirectives(typeSchema)}`;
  const schema = buildSubgraphSchema({ typeDefs: parse(source), resolvers: resolvers as SubgraphResolvers });
  let sdl: string | undefined;
  return {
    name: spec.name,
    schema,
    source,
    get sdl() {
      return (sdl ??= printSubgraphSchema(schema));
    },
  };
}

async function* emptyIterable(): AsyncGenerator<never> {}

/** The resolver map @apollo/subgraph takes (its type is not exported by name). */
type SubgraphResolvers = Extract<Parameters<typeof buildSubgraphSchema>[0], { typeDefs: unknown }>['resolvers'];

/**
 * Security by default: every root operation names its permission with @Authorized (PUBLIC and
 * ANY_CALLER included); a subgraph with an operation that forgot to is refused at build time.
 */
function assertEveryOperationAuthorized(spec: SubgraphSpec): void {
  const storage = getMetadataStorage();
  const targets = new Set<Function>(spec.resolvers);
  const authorized = new Set(storage.authorizedFields.map((a) => `${a.target.name}.${a.fieldName}`));
  const operations = [...storage.queries, ...storage.mutations, ...storage.subscriptions].filter((o) => targets.has(o.target));
  const open = operations.filter((o) => !authorized.has(`${o.target.name}.${o.methodName}`));
  if (open.length) {
    throw new Error(
      `Subgraph ${spec.name}: ${open.map((o) => `${o.target.name}.${o.methodName}`).join(', ')} must declare @Authorized('<permission>') ` +
        `(or @Authorized(ANY_CALLER) / @Authorized(PUBLIC) from kernel/auth/principal.ts)`,
    );
  }
}

/** Runs operations on one subgraph schema (in this process). */
export interface SubgraphExecutor {
  (query: string, variables: Record<string, unknown> | undefined, context: RequestContext, operationName?: string): Promise<ExecutionResult>;
  readonly schema: GraphQLSchema;
  /** A document the caller has already validated against `schema`. */
  executeDocument(
    document: DocumentNode,
    variables: Record<string, unknown> | undefined,
    context: RequestContext,
    operationName?: string,
  ): Promise<ExecutionResult>;
}

/** Runs of a document interpreted before it is compiled. */
const JIT_AFTER = 1;

/**
 * Every subgraph execution, traced (node:diagnostics_channel) for observers: its start, end and
 * error events carry `{ context }`, the execution's RequestContext, and a store bound to `start`
 * holds for all the execution does (the statements its resolvers issue). Costs nothing unobserved.
 */
export const SUBGRAPH_EXECUTION = tracingChannel<unknown, { context: RequestContext }>('automation-platform:subgraph-execution');

/**
 * Executes operations against one subgraph schema, parsing and validating each distinct
 * document once (the gateway sends the same few planned fetches over and over). A document run
 * again is compiled into a function of its own (graphql-jit, as Mercurius does) instead of being
 * interpreted again on every execution; one seen once is not worth its compilation.
 */
export function createExecutor(schema: GraphQLSchema, logger: Logger): SubgraphExecutor {
  const documents = new Map<string, DocumentNode | readonly GraphQLError[]>();
  const seen = new WeakMap<DocumentNode, Map<string, { runs: number; compiled?: CompiledQuery | ExecutionResult | null }>>();
  /**
   * How `document` runs this time: its compiled function once it has run JIT_AFTER times, else
   * undefined; a document the compiler cannot take (null) stays interpreted.
   */
  const compiledFor = (document: DocumentNode, operationName = '') => {
    let byName = seen.get(document);
    if (!byName) seen.set(document, (byName = new Map()));
    let entry = byName.get(operationName);
    if (!entry) byName.set(operationName, (entry = { runs: 0 }));
    if (entry.compiled === undefined && ++entry.runs > JIT_AFTER) {
      try {
        entry.compiled = compileQuery(schema, document, operationName || undefined);
      } catch (err) {
        logger.warn('document not compiled; it stays interpreted', { err, operationName });
        entry.compiled = null;
      }
    }
    return entry.compiled ?? undefined;
  };
  const executeDocument: SubgraphExecutor['executeDocument'] = async (document, variables, context, operationName) => {
    // A fresh loader slot per execution: the caller's context may outlive it (a subscription runs
    // every event's query with its connection's context), and cached loads must not.
    const contextValue: RequestContext = { ...context, loaders: undefined };
    const compiled = compiledFor(document, operationName);
    const run = async () =>
      !compiled
        ? execute({ schema, document, variableValues: variables, contextValue, operationName })
        : isCompiledQuery(compiled)
          ? compiled.query(undefined, contextValue, variables ?? {})
          : compiled;
    const result = SUBGRAPH_EXECUTION.hasSubscribers ? await SUBGRAPH_EXECUTION.tracePromise(run, { context: contextValue }) : await run();
    return result.errors ? { ...result, errors: result.errors.map((e) => formatError(e, context, logger)) } : result;
  };
  const run = async (query: string, variables: Record<string, unknown> | undefined, context: RequestContext, operationName?: string) => {
    let doc = documents.get(query);
    if (!doc) {
      try {
        const parsed = parse(query);
        const problems = validate(schema, parsed);
        doc = problems.length ? problems : parsed;
      } catch (err) {
        doc = [err as GraphQLError];
      }
      if (documents.size > 5_000) documents.clear();
      documents.set(query, doc);
    }
    if (Array.isArray(doc)) return { errors: doc as GraphQLError[] };
    return executeDocument(doc as DocumentNode, variables, context, operationName);
  };
  return Object.assign(run, { schema, executeDocument });
}

/** Resolver errors -> GraphQL errors carrying {code, http, details}; unexpected ones are logged and hidden. */
export function formatError(err: GraphQLError, context: RequestContext, logger: Logger): GraphQLError {
  const original = err.originalError;
  let app: AppError | undefined;
  if (original instanceof AppError) app = original;
  else if (original instanceof GraphQLError && original.extensions?.code === 'BAD_USER_INPUT') {
    const list = (original.extensions.validationErrors ?? []) as ValidationError[];
    app = errors.validation(flattenValidation(list));
  } else if (original instanceof GraphQLError && typeof original.extensions?.code === 'string') {
    return err;
  } else if (original instanceof GraphQLError && !err.path) {
    // A request-level problem, such as a variable the subgraph's own scalar rejects.
    app = errors.validation([{ field: 'variables', message: err.message }]);
  } else if (original && refusedInput(original)) {
    app = refusedInput(original);
  } else if (original) {
    logger.error('unexpected error in resolver', { err: original, path: err.path, requestId: context.requestId });
    app = errors.internal(context.requestId);
  }
  if (!app) return err;
  return new GraphQLError(app.message, {
    path: err.path,
    extensions: { code: app.code, http: { status: app.status }, details: tracedDetails(app.details) },
  });
}

function flattenValidation(list: ValidationError[], prefix = ''): FieldError[] {
  return list.flatMap((v) => {
    const field = prefix ? `${prefix}.${v.property}` : v.property;
    const own = Object.values(v.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flattenValidation(v.children ?? [], field)];
  });
}

/**
 * A subscription field served by the gateway: events of `topic` passing `filter` are resolved into the
 * subscriber's selection by running `query` with the subscriber's credential.
 *
 * An entity subscription passes its own arguments to `query` and sends its answer first, so a late
 * subscriber still sees how the work ended. A list subscription declares `entity` (each event's entity
 * read through `query`, unreadable ones skipped) and `check`, the list's own query with the
 * subscription's arguments and `$limit` (FIRST_STATE): it authorizes, and `members` takes from its
 * answer the ids sent first, each read as an event. `version` names the field that drops answers
 * older than, or equal to, one already sent. A payload with `deleted: true` announces the entity's
 * deletion: the subscriber gets the entity as last sent to it, with `deleted` true and the new version.
 */
export interface SubscriptionRoute {
  field: string;
  topic: TopicName;
  /** A method, so that each route declares the payload its topic carries. */
  filter(payload: unknown, args: Record<string, unknown>): boolean;
  query: string;
  version?: string;
  entity?: { arg: string; id(payload: unknown): string };
  /** Its query, run with the arguments as variables (or with the variables it gives). */
  check?: (args: Record<string, unknown>) => string | { query: string; variables: Record<string, unknown> };
  /** The list's members in `check`'s answer, as the list orders them (newest first); none: no first state. */
  members?(data: Record<string, unknown>, args: Record<string, unknown>): string[];
}

/** A list subscription's first state: its newest `limit` members, `limit` 1 to `max`. */
export const FIRST_STATE = { limit: 20, max: 100 } as const;

/**
 * One business service as every process knows it before building anything: enough to print its schema
 * with no kernel (schema/emit.ts). A hosting process runs, in order (main.ts): `build(kernel)`, `jobs()`,
 * `http(app, …)`, `start()` once every service is reachable, then `drain()` and `stop()`.
 */
export interface ServiceModule<K = unknown> {
  name: SubgraphName;
  /** The key service this subgraph's operations accept. */
  surface: KeyService | 'feedback';
  /** Its build serves HTTP of its own (BuiltService.http): a gateway fronts those routes even when the subgraph is remote. */
  servesHttp?: boolean;
  /** The prefixes of its raw HTTP doors (BuiltService.doors): a gateway without the service hands them to the service's server. */
  doors?: string[];
  migrations: Function[];
  subscriptions: SubscriptionRoute[];
  resolvers: NonEmptyArray<Function>;
  orphanedTypes?: Function[];
  build(kernel: K): BuiltService;
}

/** A service built on a live kernel: what its phases do. */
export interface BuiltService {
  /** One instance of each of the module's resolver classes, constructed with its services. */
  instances: object[];
  /** The federation entities (types with @key) other subgraphs may reference, by type name. */
  references?: Record<string, EntityReference<unknown>>;
  /** Registers the service's job handlers on the kernel's queue. */
  jobs?(): void;
  /**
   * HTTP routes the service serves itself, beside GraphQL and the REST route tables: redirects,
   * HTML pages, streams (the public short link and its gate page, OAuth sign-in, followed logs).
   * Each route authenticates through `deps.admit` and enforces the same permissions and limits
   * as the operation it stands beside.
   */
  http?(app: FastifyInstance, deps: ServiceHttpDeps): void | Promise<void>;
  /** Raw HTTP doors the service answers in this process (the surface serving each prefix hands requests over). */
  doors?: HttpDoor[];
  /** Runs once this process can reach every service (kernel.operations is bound). Idempotent: every process of a split deployment runs it. */
  start?(): Promise<void>;
  /** Runs when the process starts draining, before it waits for requests in flight: end open streams. */
  drain?(): void;
  /** Runs when the process drains, once no request comes in any more: write what is buffered, stop timers. */
  stop?(): Promise<void>;
}

/** The subgraph of a service: its classes, with the instances of a build (none for schema emission). */
export function subgraphSpec(service: ServiceModule<never>, built?: BuiltService, audit?: AuditTrail): SubgraphSpec {
  return {
    name: service.name,
    surface: service.surface,
    resolvers: service.resolvers,
    orphanedTypes: service.orphanedTypes,
    instances: built?.instances ?? [],
    references: built?.references,
    audit,
  };
}

export interface ServiceHttpDeps {
  /**
   * The edge's admission of a request (API key, JWT or anonymous; the key's rate limits): the
   * caller's context and the headers the answer carries. A refusal throws an error with
   * `error: AppError` and `headers`. `engineKeyHeader`: the engine's X-ENGINE-API-KEY counts too
   * (its /engine/api/v1 paths).
   */
  admit(req: FastifyRequest, opts?: { engineKeyHeader?: boolean }): Promise<{ context: RequestContext; headers: Record<string, string> }>;
  /**
   * Watches the credential of an answer that stays open (a followed stream), admitted with
   * `context`, until `stop()`: `changed` re-checks what it reads after a change to the caller's
   * rights (a refusal thrown there ends it), `ended` ends it with the refusal, once
   * (kernel/credential-watch.ts).
   */
  watch(
    req: FastifyRequest,
    context: RequestContext,
    handlers: { changed(context: RequestContext): Promise<void>; ended(error: AppError): void },
  ): { stop(): void };
  /**
   * GETs under `prefix` (a path prefix, e.g. `/links/`) that `answer` may answer before any routing,
   * when it can at once from memory (a cached public short link's redirect): the routes' parsing,
   * hooks and promises are skipped. `answer` returns true once it has answered; false hands the
   * request on, untouched, to the routes, which must answer it the same way.
   */
  fastGet(prefix: string, answer: FastGet): void;
}

/** `rest`: the request's URL after the prefix, query string included, as the client sent it (not decoded). */
export type FastGet = (req: IncomingMessage, res: ServerResponse, rest: string) => boolean;

/**
 * A raw HTTP door: the surface serving `prefix` hands every request under it over as it came
 * (the body byte for byte) and sends back the status, headers and body the service answers. A
 * process without the service reaches its door on the service's own server (kernel/door.ts).
 */
export interface HttpDoor {
  prefix: string;
  receive(request: DoorRequest, sourceIp: string | null, requestId?: string): Promise<DoorReply>;
}

export interface DoorRequest {
  /** The path under the door's prefix. */
  path: string;
  method: string;
  /** Lower-case names, repeated headers joined with ", ". */
  headers: Record<string, string>;
  query: Record<string, unknown>;
  body: Buffer;
  bodyTooLarge?: boolean;
  /** The platform's address as the caller reached it (RequestContext.baseUrl). */
  baseUrl?: string;
}

export interface DoorReply {
  status: number;
  headers: Record<string, string>;
  /** JSON, a text, bytes, or a stream of bytes (a file, sent as it is read). */
  body: unknown;
  /** A stream's length in bytes, when known: sent as its content-length. */
  length?: number;
}
