import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer, type ApolloServerPlugin, type GraphQLRequest } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { createHash } from 'node:crypto';
import { getOperationAST, GraphQLError, isScalarType, parse, specifiedRules, validate, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { GraphQLDateTimeISO, GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import type { Logger } from '../kernel/logger';
import type { RequestContext, SubgraphExecutor } from '../kernel/subgraph';
import { LocalDataSource, SignedRemoteDataSource } from './data-sources';
import { DEFAULT_LIMITS, checkCost, limitRules, type QueryLimits } from './limits';

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
  data?: Record<string, any> | null;
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

  constructor(private readonly opts: GatewayOptions) {
    this.limits = opts.limits ?? DEFAULT_LIMITS;
    this.gateway = new ApolloGateway({
      supergraphSdl: opts.supergraphSdl,
      logger: quiet(opts.logger),
      buildService: ({ name }) => {
        const executor = opts.local[name];
        if (executor) return new LocalDataSource(executor);
        const url = opts.remote[name];
        if (!url) throw new Error(`Subgraph ${name} is neither in this process nor given in SUBGRAPH_URLS`);
        return new SignedRemoteDataSource(url, opts.internalSecret);
      },
    });
    this.gateway.onSchemaLoadOrUpdate(({ apiSchema }) => {
      adoptScalarParsing(apiSchema);
      this.apiSchema = apiSchema;
    });
    this.apollo = new ApolloServer<RequestContext>({
      gateway: this.gateway as any,
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
        // Without introspection, "Did you mean …?" would still spell the schema out field by field.
        const message = opts.introspection === false ? formatted.message.replace(/ Did you mean .+\?$/, '') : formatted.message;
        return { ...formatted, message, extensions };
      },
    });
  }

  async start(): Promise<void> {
    await this.apollo.start();
  }

  /**
   * A fixed operation (a REST route's) parsed, validated and hashed once, then executed straight
   * by the gateway's executor: its query plan is cached by that hash, and no request goes through
   * Apollo Server's per-request pipeline again. The executor still validates and coerces each
   * request's variables; client-sent GraphQL keeps the full pipeline and its limits.
   */
  prepare(query: string): (variables: Record<string, unknown>, context: RequestContext) => Promise<OperationResult> {
    const document = parse(query);
    const problems = validate(this.schema, document, [...specifiedRules, ...limitRules(this.limits)]);
    if (problems.length) throw new Error(`Invalid fixed operation: ${problems.map((p) => p.message).join('; ')}\n${query}`);
    const operation = getOperationAST(document);
    if (!operation || (operation.operation !== 'query' && operation.operation !== 'mutation')) throw new Error(`A fixed operation is one query or mutation:\n${query}`);
    const operationName = operation.name?.value;
    const queryHash = createHash('sha256').update(query).digest('hex');
    const executor = (this.gateway as unknown as { executor: (rc: unknown) => Promise<{ data?: Record<string, any> | null; errors?: readonly GraphQLError[] }> }).executor;
    const logger = quiet(this.opts.logger);
    return async (variables, context) => {
      try {
        const result = await executor({
          request: { query, operationName, variables },
          document,
          operation,
          operationName,
          queryHash,
          source: query,
          schema: this.schema,
          context,
          contextValue: context,
          logger,
          metrics: {},
        });
        return { data: result.data, errors: result.errors?.map((e) => ({ ...e.toJSON(), extensions: clientExtensions(e.extensions) })) };
      } catch (err) {
        this.opts.logger.error('fixed operation failed in the gateway', { err, operationName });
        return { data: null, errors: [{ message: 'An internal error occurred', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] };
      }
    };
  }

  async stop(): Promise<void> {
    await this.apollo.stop();
  }

  /** The composed API schema (after start). */
  get schema(): GraphQLSchema {
    if (!this.apiSchema) throw new Error('The gateway has not loaded its schema yet');
    return this.apiSchema;
  }

  async execute(
    request: Pick<GraphQLRequest, 'query' | 'variables' | 'operationName'>,
    context: RequestContext,
  ): Promise<OperationResult> {
    const response = await this.apollo.executeOperation(request, { contextValue: context });
    if (response.body.kind !== 'single') throw new Error('Incremental delivery is not supported here');
    return response.body.singleResult;
  }
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

/** serviceName is an internal detail of the plan; clients see code, http and details. */
function clientExtensions(extensions: Record<string, unknown> | undefined): Record<string, unknown> {
  const { serviceName: _s, stacktrace: _t, ...rest } = extensions ?? {};
  return rest;
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
            throw badRequest(request.operationName ? `Unknown operation named "${request.operationName}".` : 'The document has several operations: give operationName.');
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
