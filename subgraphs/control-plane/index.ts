import type { Kernel } from '../../kernel/platform';
import type { ServiceModule } from '../../kernel/subgraph';
import { ApiKeyResolver } from './api-key.resolver';

/**
 * The control plane: API keys and rate limits for now (agents, tasks, orchestrations, workflows
 * and metrics arrive with their issues).
 */
export const controlPlane: ServiceModule<Kernel> = {
  name: 'control-plane',
  entities: [],
  migrations: [],
  subscriptions: [
    {
      field: 'apiKeyUpdated',
      topic: 'apiKey.changed',
      filter: (payload: { id: string }, args) => payload.id === args.id,
      query: 'apiKey',
    },
  ],
  create: (kernel) => ({
    name: 'control-plane',
    surface: 'control-plane',
    resolvers: [ApiKeyResolver],
    instances: [new ApiKeyResolver(kernel.keys)],
  }),
};
