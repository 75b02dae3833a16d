import { randomUUID } from 'node:crypto';
import { AppError, fromGraphQLError } from './errors';
import type { Principal } from './auth/principal';
import type { RequestContext } from './subgraph';

/**
 * How one service uses another: through the other's public GraphQL operation, run by the
 * gateway of this process (in every role a process plans over the supergraph), as the platform
 * itself. A service never reads another service's tables.
 */
export const SERVICE_PRINCIPAL: Principal = { kind: 'service', name: 'platform' };

export type OperationRunner = (
  request: { query: string; variables?: Record<string, unknown> },
  context: RequestContext,
) => Promise<{ data?: Record<string, unknown> | null; errors?: readonly { message: string; extensions?: Record<string, unknown> }[] }>;

export class Operations {
  private runner?: OperationRunner;

  /** Set by main.ts once this process's gateway is up. */
  bind(runner: OperationRunner): void {
    this.runner = runner;
  }

  /** Runs an operation as the platform; the first error is thrown as the AppError it carries. */
  async execute<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<T> {
    if (!this.runner) throw new AppError('service_unavailable', 'The platform is starting', { reason: 'gateway not ready' });
    const result = await this.runner({ query, variables }, { principal: SERVICE_PRINCIPAL, requestId: `internal_${randomUUID().slice(0, 8)}` });
    if (result.errors?.length) throw fromGraphQLError(result.errors[0]!);
    return result.data as T;
  }
}
