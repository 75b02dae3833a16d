import type { ApolloGateway } from '@apollo/gateway';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import type { GatewayExecutor, GatewayGraphQLRequestContext, GatewayInterface } from '@apollo/server-gateway-interface';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { createHash } from 'node:crypto';
import { operationFromDocument, Supergraph } from '@apollo/federation-internals';
import { QueryPlanner } from '@apollo/query-planner';
import { loadedPlanner, newApolloGateway, type LoadedPlanner } from '../kernel/adapters/apollo-gateway';
import {
  BREAK,
  getOperationAST,
  GraphQLError,
  isScalarType,
  NoSchemaIntrospectionCustomRule,
  specifiedRules,
  validate,
  visit,
  type DocumentNode,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from 'graphql';
import { GraphQLDateTimeISO, GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { SpanKind } from '@opentelemetry/api';
import { tracedExtensions } from '../kernel/errors';
import type { Logger } from '../kernel/logger';
import { inSpan } from '../kernel/tracing';
import type { RequestContext, SubgraphExecutor } from '../kernel/subgraph';
import { inSubgraphSpan, LocalDataSource, SignedRemoteDataSource } from './data-sources';
import { DEFAULT_LIMITS, checkCost, costVaries, limitRules, parseWithLimits, tokenLimitError, type QueryLimits } from './limits';

export interface GatewayOptions {
  supergraphSdl: string;
  /** Subgraphs served in this process. */
  local: Record<string, SubgraphExecutor>;
  /** Subgraphs served elsewhere, by URL; their requests carry the signed context. */
  remote: Record<string, string>;
  internalSecret: string;
  logger: Logger;
  limits?: QueryLimits;
  /** Introspection and field suggestions (GRAPHQL_INTROSPECTION); default on. */
  introspection?: boolean;
}

export interface OperationResult {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLFormattedError[];
}

/**
 * The federated gateway: plans each operation (plans and validated documents are cached by
 * Apollo) and fetches from in-process or remote subgraphs. REST routes and subscriptions run
 * their operations through `execute`, so every surface shares one execution path.
 */
export class PlatformGateway {
  readonly apollo: ApolloServer<RequestContext>;
  readonly limits: QueryLimits;
  private apiSchema?: GraphQLSchema;
  private readonly gateway: ApolloGateway;
  private readonly compiled = new Map<string, CompiledOperation | readonly GraphQLError[]>();
  private readonly validationRules: ValidationRule[];
  private readonly quietLogger: ReturnType<typeof quiet>;
  private planner?: LoadedPlanner;
  private loadedExecutor?: GatewayExecutor;

  constructor(private readonly opts: GatewayOptions) {
    this.limits = opts.limits ?? DEFAULT_LIMITS;
    this.validationRules = [...specifiedRules, ...limitRules(this.limits), ...(opts.introspection === false ? [NoSchemaIntrospectionCustomRule] : [])];
    this.quietLogger = quiet(opts.logger);
    this.gateway = newApolloGateway({
      supergraphSdl: opts.supergraphSdl,
      logger: quiet(opts.logger),
      buildService: ({ name }) => {
        const executor = opts.local[name];
        if (executor) return new LocalDataSource(name, executor);
        const url = opts.remote[name];
        if (!url) throw new Error(`Subgraph ${name} is neither in this process nor given in SUBGRAPH_URLS`);
        return new SignedRemoteDataSource(name, url, opts.internalSecret);
      },
    });
    this.gateway.onSchemaLoadOrUpdate(({ apiSchema }) => {
      adoptScalarParsing(apiSchema);
      this.apiSchema = apiSchema;
    });
    // Apollo Server loads the gateway through this wrapper, which keeps the executor the load
    // returns (the public gateway interface) for operations run outside Apollo Server's pipeline,
    // each run in its operation's span, whichever pipeline runs it.
    const gateway = this.gateway;
    const recording: GatewayInterface = {
      load: async (options) => {
        const loaded = await gateway.load(options);
        const executor = loaded.executor;
        this.loadedExecutor = (request) => (request.operation ? inOperationSpan(request.operation, () => executor(request)) : executor(request));
        return { ...loaded, executor: this.loadedExecutor };
      },
      onSchemaLoadOrUpdate: (callback) => gateway.onSchemaLoadOrUpdate(callback),
      stop: () => gateway.stop(),
    };
    this.apollo = new ApolloServer<RequestContext>({
      gateway: recording,
      validationRules: limitRules(this.limits),
      parseOptions: { maxTokens: this.limits.maxTokens },
      introspection: opts.introspection ?? true,
      stopOnTerminationSignals: false, // main.ts owns the drain order
      includeStacktraceInErrorResponses: false,
      plugins: [ApolloServerPluginLandingPageDisabled(), operationChecks(() => this.schema, this.limits)],
      logger: quiet(opts.logger),
      formatError: (formatted, error) => {
        const extensions = clientExtensions(formatted.extensions);
        // Apollo files our limit errors under GRAPHQL_VALIDATION_FAILED: give them their own code back.
        const original = ((error as { originalError?: unknown })?.originalError ?? error) as { extensions?: Record<string, unknown> };
        if (original?.extensions?.code === 'query_too_complex') extensions.code = 'query_too_complex';
        // Its parser stops at the token limit as at a syntax error (GRAPHQL_PARSE_FAILED): the
        // document's limit error instead, with the limit in details, as over the fast path and graphql-ws.
        const tooLong = extensions.code === 'GRAPHQL_PARSE_FAILED' && original instanceof GraphQLError ? tokenLimitError(original, this.limits) : undefined;
        if (tooLong) {
          const { http: _http, ...limit } = tooLong.extensions;
          return { message: tooLong.message, extensions: tracedExtensions(limit) };
        }
        // Without introspection, "Did you mean …?" would still spell the schema out field by field.
        const message = opts.introspection === false ? formatted.message.replace(/ Did you mean .+\?$/, '') : formatted.message;
        return { ...formatted, message, extensions };
      },
    });
  }

  async start(): Promise<void> {
    await this.apollo.start();
  }

  /** The gateway's executor, as its load hands it to Apollo Server: runs a resolved operation from its cached query plan. */
  private get executor(): GatewayExecutor {
    if (!this.loadedExecutor) throw new Error('The gateway has not loaded its schema yet');
    return this.loadedExecutor;
  }

  /**
   * A fixed operation (a REST route's), compiled once at its first run rather than at start (a
   * process prepares every REST route's operation); it must be valid — the tests compile every
   * route's. Each request's variables are still validated and coerced when it runs.
   */
  prepare(query: string): (variables: Record<string, unknown>, context: RequestContext) => Promise<OperationResult> {
    let fixed: CompiledOperation | undefined;
    return (variables, context) => this.run((fixed ??= this.fixed(query)), variables, context);
  }

  private fixed(query: string): CompiledOperation {
    const compiled = this.compile(query);
    if (!('document' in compiled)) throw new Error(`Invalid fixed operation: ${compiled.map((p) => p.message).join('; ')}\n${query}`);
    if (compiled.operation.operation === 'subscription') throw new Error(`A fixed operation is one query or mutation:\n${query}`);
    return compiled;
  }

  async stop(): Promise<void> {
    await this.apollo.stop();
  }

  /** The composed API schema (after start). */
  get schema(): GraphQLSchema {
    if (!this.apiSchema) throw new Error('The gateway has not loaded its schema yet');
    return this.apiSchema;
  }

  /** An operation of the platform's own (a service calling another, a subscription's event query). */
  async execute(request: { query: string; variables?: Record<string, unknown>; operationName?: string }, context: RequestContext): Promise<OperationResult> {
    const compiled = this.compile(request.query, request.operationName);
    if (!('document' in compiled)) return { errors: compiled.map((e) => e.toJSON()) };
    if (compiled.operation.operation === 'subscription') return { errors: [{ message: 'A subscription is not run as an operation' }] };
    const tooCostly = compiled.costVaries && checkCost(this.schema, compiled.document, this.limits, compiled.operationName, request.variables);
    if (tooCostly) return { errors: [tooCostly.toJSON()] };
    return this.run(compiled, request.variables ?? {}, context);
  }

  /**
   * GraphQL over HTTP without Apollo Server's per-request pipeline, for the requests whose answer
   * it would not shape: a valid query or mutation (parsed, validated with the limits and planned
   * once per document) whose cost with its variables is in budget and whose variables coerce (a
   * refusal there comes before anything runs). Anything else (`undefined`) goes through Apollo
   * Server, which answers the problem in its own words.
   * The answer is Apollo's: errors before data, `extensions.http` turned into the status.
   */
  async executeHttp(body: unknown, context: RequestContext): Promise<{ status: number; body: string } | undefined> {
    if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
    const { query, variables, operationName, extensions, ...rest } = body as Record<string, unknown>;
    if (typeof query !== 'string' || extensions !== undefined || Object.keys(rest).length) return undefined;
    if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return undefined;
    if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
    const compiled = this.compile(query, operationName ?? undefined);
    if (!('document' in compiled) || compiled.operation.operation === 'subscription') return undefined;
    const values = (variables ?? {}) as Record<string, unknown>;
    if (compiled.costVaries && checkCost(this.schema, compiled.document, this.limits, compiled.operationName, values)) return undefined;
    const result = await this.run(compiled, values, context);
    // No data at all: the variables were refused before anything ran (coercion happens once, there).
    if (result.data === undefined) return undefined;
    let status = 200;
    const errors = result.errors?.map((error) => {
      const { http, ...extensions } = (error.extensions ?? {}) as Record<string, unknown> & { http?: { status?: number } };
      if (typeof http?.status === 'number') status = http.status;
      return { ...error, extensions: { ...extensions, code: extensions.code ?? 'INTERNAL_SERVER_ERROR' } };
    });
    return { status, body: JSON.stringify(errors ? { errors, data: result.data } : { data: result.data }) + '\n' };
  }

  /**
   * Parses (with the token limit) and validates (with the depth, alias and cost limits) a
   * document once, and plans it at its first run; cached by document text and operation name.
   * When the plan is a single fetch from an in-process subgraph, the operation runs on that
   * subgraph's schema directly: the answer is the one the plan's fetch would give, without the
   * gateway building, sending and reshaping it (a plan with entities, several subgraphs or
   * introspection runs through the gateway's executor, as do remote subgraphs with their signed
   * hand-off).
   */
  private compile(query: string, operationName?: string): CompiledOperation | readonly GraphQLError[] {
    const cacheKey = operationName ? `${operationName}\n${query}` : query;
    const cached = this.compiled.get(cacheKey);
    if (cached) return cached;
    let result: CompiledOperation | readonly GraphQLError[];
    try {
      const document = parseWithLimits(query, this.limits);
      const problems = validate(this.schema, document, this.validationRules);
      const operation = problems.length ? undefined : getOperationAST(document, operationName);
      if (problems.length) result = problems;
      else if (!operation)
        result = [new GraphQLError(operationName ? `Unknown operation named "${operationName}".` : 'The document has several operations: give operationName.')];
      else {
        result = {
          query,
          document,
          operation,
          operationName: operation.name?.value,
          queryHash: createHash('sha256').update(query).digest('hex'),
          costVaries: costVaries(document),
          direct: operation.operation === 'subscription' ? null : undefined,
        };
      }
    } catch (err) {
      if (!(err instanceof GraphQLError)) throw err;
      result = [err];
    }
    if (this.compiled.size >= COMPILED_CACHE_SIZE) this.compiled.delete(this.compiled.keys().next().value!);
    this.compiled.set(cacheKey, result);
    return result;
  }

  /** The in-process subgraph that answers the whole operation in one root fetch, if there is one. */
  private directSubgraph(document: DocumentNode, operationName?: string): DirectSubgraph | undefined {
    if (hasIntrospection(document)) return undefined;
    this.planner ??=
      loadedPlanner(this.gateway) ??
      (() => {
        const supergraph = Supergraph.build(this.opts.supergraphSdl);
        return { apiSchema: supergraph.apiSchema(), planner: new QueryPlanner(supergraph) };
      })();
    const plan = this.planner.planner.buildQueryPlan(operationFromDocument(this.planner.apiSchema, document, { operationName }));
    const node = plan.node;
    if (node?.kind !== 'Fetch' || node.requires || node.inputRewrites?.length || node.outputRewrites?.length || node.contextRewrites?.length) return undefined;
    const local = this.opts.local[node.serviceName];
    return local && validate(local.schema, document).length === 0 ? { name: node.serviceName, executor: local } : undefined;
  }

  private async run(compiled: CompiledOperation, variables: Record<string, unknown>, context: RequestContext): Promise<OperationResult> {
    try {
      // Planned at its first run, not at start (a process prepares every REST route's operation).
      // A document the planner cannot take runs through the gateway's executor, which says why.
      if (compiled.direct === undefined) compiled.direct = attempt(() => this.directSubgraph(compiled.document, compiled.operationName)) ?? null;
      const direct = compiled.direct;
      const result = direct
        ? await inOperationSpan(compiled.operation, () =>
            inSubgraphSpan(direct.name, () => direct.executor.executeDocument(compiled.document, definedOnly(variables), context, compiled.operationName)),
          )
        : await this.executor({
            request: { query: compiled.query, operationName: compiled.operationName, variables },
            document: compiled.document,
            operation: compiled.operation,
            operationName: compiled.operationName,
            queryHash: compiled.queryHash,
            source: compiled.query,
            schema: this.schema,
            context,
            contextValue: context,
            logger: this.quietLogger,
            metrics: {},
          } as unknown as GatewayGraphQLRequestContext<RequestContext>);
      // As the gateway answers: no locations (a planned fetch's would point into the subgraph's document).
      const errors = result.errors?.map(({ message, path, extensions }) => ({ message, ...(path && { path }), extensions: clientExtensions(extensions) }));
      return { data: result.data, ...(errors && { errors }) };
    } catch (err) {
      this.opts.logger.error('operation failed in the gateway', { err, operationName: compiled.operationName });
      return { data: null, errors: [{ message: 'An internal error occurred', extensions: tracedExtensions({ code: 'INTERNAL_SERVER_ERROR' }) }] };
    }
  }
}

interface CompiledOperation {
  query: string;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  operationName?: string;
  queryHash: string;
  /** The cost estimate depends on the request's variables (validation only saw their defaults). */
  costVaries: boolean;
  /** The in-process subgraph that answers it alone (see `compile`); null: none; undefined: not planned yet. */
  direct?: DirectSubgraph | null;
}

interface DirectSubgraph {
  name: string;
  executor: SubgraphExecutor;
}

/**
 * Runs one GraphQL operation in its span, as the semantic conventions name it (`query GetTask`,
 * `graphql.operation.type`, `graphql.operation.name`), under the request's span; its subgraph
 * fetches are its children (gateway/data-sources.ts).
 */
export function inOperationSpan<T>(operation: OperationDefinitionNode, fn: () => Promise<T>): Promise<T> {
  const type = operation.operation;
  const name = operation.name?.value;
  const attributes = name ? { 'graphql.operation.type': type, 'graphql.operation.name': name } : { 'graphql.operation.type': type };
  return inSpan(name ? `${type} ${name}` : type, { kind: SpanKind.INTERNAL, attributes }, fn);
}

/** Distinct documents kept compiled; the oldest goes first (REST routes and internal operations are a few hundred). */
const COMPILED_CACHE_SIZE = 2000;

function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/** Variables as a subgraph receives them over the wire: an `undefined` value is absent, not null. */
function definedOnly(variables: Record<string, unknown>): Record<string, unknown> {
  for (const name in variables) {
    if (variables[name] === undefined) return Object.fromEntries(Object.entries(variables).filter(([, v]) => v !== undefined));
  }
  return variables;
}

function hasIntrospection(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if (node.name.value === '__schema' || node.name.value === '__type') {
        found = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/**
 * The supergraph knows custom scalars only by name, so it would accept any value for them.
 * Giving the API schema the subgraphs' own parsers makes the gateway reject a bad DateTime or
 * JSON object at the edge, with the variable path, before any subgraph runs.
 */
function adoptScalarParsing(schema: GraphQLSchema): void {
  for (const real of [GraphQLDateTimeISO, GraphQLJSON, GraphQLJSONObject]) {
    const type = schema.getType(real.name);
    if (isScalarType(type)) {
      type.parseValue = real.parseValue;
      type.parseLiteral = real.parseLiteral;
    }
  }
}

/** serviceName is an internal detail of the plan; clients see code, http and details (with the trace id when traced). */
function clientExtensions(extensions: Record<string, unknown> | undefined): Record<string, unknown> {
  const { serviceName: _s, stacktrace: _t, ...rest } = extensions ?? {};
  return tracedExtensions(rest);
}

function quiet(logger: Logger) {
  return {
    debug: (m: unknown) => logger.debug(String(m)),
    info: (m: unknown) => logger.debug(String(m)),
    warn: (m: unknown) => logger.warn(String(m)),
    error: (m: unknown) => logger.error(String(m)),
  };
}

/**
 * Requests GraphQL over HTTP refuses with 400 before anything is planned: an operationName that
 * names no operation of the document, a subscription (served over graphql-ws on the same path),
 * and an operation whose cost with the request's variables is over the budget (validation only
 * saw the variables' defaults).
 */
function operationChecks(schema: () => GraphQLSchema, limits: QueryLimits): ApolloServerPlugin<RequestContext> {
  const badRequest = (message: string, code = 'BAD_REQUEST') => new GraphQLError(message, { extensions: { code, http: { status: 400 } } });
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, document, request }) {
          if (!operation) {
            throw badRequest(
              request.operationName ? `Unknown operation named "${request.operationName}".` : 'The document has several operations: give operationName.',
            );
          }
          if (operation.operation === 'subscription') {
            throw badRequest('Subscriptions are served over WebSocket (graphql-ws protocol) on /graphql, not over HTTP.');
          }
          const tooCostly = checkCost(schema(), document, limits, request.operationName, request.variables);
          if (tooCostly) throw tooCostly;
        },
      };
    },
  };
}
