import { RemoteGraphQLDataSource, type GraphQLDataSource } from '@apollo/gateway';
import type { GraphQLDataSourceProcessOptions } from '@apollo/gateway/dist/datasources/types';
import type { GatewayGraphQLResponse } from '@apollo/server-gateway-interface';
import { SpanKind } from '@opentelemetry/api';
import { signContext } from '../kernel/auth/handoff';
import { inSpan } from '../kernel/tracing';
import type { RequestContext, SubgraphExecutor } from '../kernel/subgraph';
import { anonymousContext } from '../kernel/subgraph';

/**
 * One fetch from a subgraph as a client span `subgraph <name>` (attribute `subgraph.name`), under the
 * operation's span: the subgraph's statements, or in split mode its HTTP request, are its children.
 */
export function inSubgraphSpan<T>(name: string, fn: () => Promise<T>): Promise<T> {
  return inSpan(`subgraph ${name}`, { kind: SpanKind.CLIENT, attributes: { 'subgraph.name': name } }, fn);
}

/** An in-process subgraph: the subgraph's executor caches parsed and validated documents. */
export class LocalDataSource implements GraphQLDataSource<RequestContext> {
  constructor(
    private readonly name: string,
    private readonly executor: SubgraphExecutor,
  ) {}

  process({ request, context }: GraphQLDataSourceProcessOptions<RequestContext>): Promise<GatewayGraphQLResponse> {
    const ctx = context && 'principal' in context ? (context as RequestContext) : anonymousContext();
    return inSubgraphSpan(this.name, () => this.executor(request.query!, request.variables, ctx, request.operationName) as Promise<GatewayGraphQLResponse>);
  }
}

/** A subgraph in another process: the request context travels signed (kernel/auth/handoff.ts). */
export class SignedRemoteDataSource extends RemoteGraphQLDataSource<RequestContext> {
  constructor(
    private readonly name: string,
    url: string,
    private readonly secret: string,
  ) {
    super({ url });
  }

  /** The HTTP request (an HTTP client span carrying `traceparent` on) runs inside the fetch's span. */
  override process(options: GraphQLDataSourceProcessOptions<RequestContext>): Promise<GatewayGraphQLResponse> {
    return inSubgraphSpan(this.name, () => super.process(options));
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<RequestContext>): void {
    const ctx = context && 'principal' in context ? (context as RequestContext) : anonymousContext();
    for (const [name, value] of Object.entries(signContext(ctx, this.secret))) request.http?.headers.set(name, value);
  }
}
