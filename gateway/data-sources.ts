import { RemoteGraphQLDataSource, type GraphQLDataSource } from '@apollo/gateway';
import type { GraphQLDataSourceProcessOptions } from '@apollo/gateway/dist/datasources/types';
import type { GatewayGraphQLResponse } from '@apollo/server-gateway-interface';
import { signContext } from '../kernel/auth/handoff';
import type { RequestContext, SubgraphExecutor } from '../kernel/subgraph';
import { anonymousContext } from '../kernel/subgraph';

/** An in-process subgraph: the subgraph's executor caches parsed and validated documents. */
export class LocalDataSource implements GraphQLDataSource<RequestContext> {
  constructor(private readonly executor: SubgraphExecutor) {}

  async process({ request, context }: GraphQLDataSourceProcessOptions<RequestContext>): Promise<GatewayGraphQLResponse> {
    const ctx = context && 'principal' in context ? (context as RequestContext) : anonymousContext();
    const result = await this.executor(request.query!, request.variables, ctx, request.operationName);
    return result as GatewayGraphQLResponse;
  }
}

/** A subgraph in another process: the request context travels signed (kernel/auth/handoff.ts). */
export class SignedRemoteDataSource extends RemoteGraphQLDataSource<RequestContext> {
  constructor(
    url: string,
    private readonly secret: string,
  ) {
    super({ url });
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<RequestContext>): void {
    const ctx = context && 'principal' in context ? (context as RequestContext) : anonymousContext();
    for (const [name, value] of Object.entries(signContext(ctx, this.secret))) request.http?.headers.set(name, value);
  }
}
