import { createHash } from 'node:crypto';
import { SecretCipher } from '../../../kernel/crypto';
import type { Kernel } from '../../../kernel/platform';
import type { SubscriptionRoute } from '../../../kernel/subgraph';
import { GateResolver } from '../gates';
import { OrchestrationEngine } from './orchestration.engine';
import type { TaskPort } from './orchestration.tasks';
import { OrchestrationResolver } from './orchestration.resolver';
import { OrchestrationService, catalogDirectory } from './orchestration.service';
import { TOPIC } from '../../../kernel/topics';

/**
 * Gates and orchestrations as the control plane's index.ts registers them: subscription route,
 * resolver classes, and `buildOrchestrations` for its build phase (resolver instances, the engine's
 * job handlers, and its start: listening to task events, resuming unfinished orchestrations). Their
 * migration is listed with the others in index.ts, so that only it reaches into migrations/.
 */

export const orchestrationResolvers = [GateResolver, OrchestrationResolver] as const;

/** `orchestrationUpdated(orchestrationId, includeTaskDetails)`: the twin query gets the same arguments. */
export const orchestrationSubscription: SubscriptionRoute = {
  field: 'orchestrationUpdated',
  topic: TOPIC.orchestrationUpdated,
  filter: (payload: { orchestrationId?: string }, args) => payload?.orchestrationId === args.orchestrationId,
  query: 'orchestration',
  version: 'version',
};

export const orchestrationsSubscription: SubscriptionRoute = {
  field: 'orchestrationsUpdated',
  topic: TOPIC.orchestrationUpdated,
  filter: () => true,
  query: 'orchestration',
  version: 'version',
  entity: { arg: 'orchestrationId', id: (payload: { orchestrationId: string }) => payload.orchestrationId },
  check: () => 'query($limit: Int) { orchestrations(limit: $limit) { orchestrations { orchestrationId } } }',
  members: (data) =>
    (data as { orchestrations: { orchestrations: { orchestrationId: string }[] } }).orchestrations.orchestrations.map((o) => o.orchestrationId),
};

/** The orchestration engine and the resolvers' service for this kernel; `tasks` gives the TaskService. */
export function buildOrchestrations(kernel: Kernel, tasks: () => TaskPort) {
  const cipher = new SecretCipher(
    createHash('sha256').update(`orchestration-webhooks:${kernel.secrets.internal}`).digest(),
    'automation-platform/orchestration-webhook-secret/v1',
  );
  const engine = new OrchestrationEngine({
    db: kernel.db,
    queue: kernel.queue,
    events: kernel.events,
    webhooks: kernel.webhooks,
    cipher,
    tasks,
    taskSeconds: (agentId, taskType) => catalogDirectory.taskSeconds(agentId, taskType),
    logger: kernel.logger,
    clock: kernel.clock,
  });
  const service = new OrchestrationService({
    db: kernel.db,
    engine,
    cipher,
    get webhookPolicy() {
      return { allowHttp: kernel.config.webhookAllowHttp, allowPrivateNetworks: kernel.config.outboundAllowPrivateNetworks };
    },
    tasks,
    agents: () => catalogDirectory,
  });
  return {
    instances: [new GateResolver(), new OrchestrationResolver(service)],
    /** The engine's job handlers (stage advance, timeouts). */
    jobs: () => engine.register(),
    /** Task events drive orchestrations, and unfinished ones resume after a restart. */
    start: () => engine.start(),
  };
}
