import { createHash } from 'node:crypto';
import { SecretCipher } from '../../kernel/crypto';
import type { Kernel } from '../../kernel/platform';
import { Queue } from '../../kernel/queue';
import type { SubscriptionRoute } from '../../kernel/subgraph';
import { GateResolver } from './gate.resolver';
import { OrchestrationEngine } from './orchestration.engine';
import type { TaskPort } from './orchestration.tasks';
import { OrchestrationResolver } from './orchestration.resolver';
import { OrchestrationService, catalogDirectory } from './orchestration.service';
import { ControlPlaneOrchestrations1763769600550 } from './migrations/1763769600550-control-plane-orchestrations';
import { TOPIC } from '../../kernel/topics';

/**
 * Gates and orchestrations as the control plane's index.ts registers them: migration,
 * subscription route, resolvers (createOrchestrations, in `create`) and the engine's start hook
 * (startOrchestrations, in `start`: listens to task events and resumes unfinished orchestrations).
 */

export const orchestrationMigrations = [ControlPlaneOrchestrations1763769600550];
export const orchestrationResolvers = [GateResolver, OrchestrationResolver] as const;

/** `orchestrationUpdated(orchestrationId, includeTaskDetails)`: the twin query gets the same arguments. */
export const orchestrationSubscription: SubscriptionRoute = {
  field: 'orchestrationUpdated',
  topic: TOPIC.orchestrationUpdated,
  filter: (payload: { orchestrationId?: string }, args) => payload?.orchestrationId === args.orchestrationId,
  query: 'orchestration',
};

const engines = new WeakMap<object, OrchestrationEngine>();

/** Builds the orchestration service for this kernel; `tasks` gives the TaskService once it exists. */
export function createOrchestrations(kernel: Kernel, tasks: () => TaskPort): { resolvers: typeof orchestrationResolvers; instances: object[] } {
  // Schema emission passes a kernel that runs nothing: the cipher and queue are only touched when used.
  let cipher: SecretCipher | undefined;
  const lazyCipher = {
    encrypt: (plain: string, id: string) => (cipher ??= webhookCipher(kernel)).encrypt(plain, id),
    decrypt: (blob: Buffer, id: string) => (cipher ??= webhookCipher(kernel)).decrypt(blob, id),
  } as SecretCipher;
  const engine = new OrchestrationEngine({
    db: kernel.db,
    queue: kernel.queue,
    events: kernel.events,
    webhooks: kernel.webhooks,
    cipher: lazyCipher,
    tasks,
    taskSeconds: (agentId, taskType) => catalogDirectory.taskSeconds(agentId, taskType),
    logger: kernel.queue instanceof Queue ? kernel.logger : silentLogger(),
  });
  if (kernel.queue instanceof Queue) {
    engine.register();
    engines.set(kernel, engine);
  }
  const service = new OrchestrationService({
    db: kernel.db,
    engine,
    cipher: lazyCipher,
    get webhookPolicy() {
      return { allowHttp: kernel.config.webhookAllowHttp, allowPrivateNetworks: kernel.config.outboundAllowPrivateNetworks };
    },
    tasks,
    agents: () => catalogDirectory,
  });
  return { resolvers: orchestrationResolvers, instances: [new GateResolver(), new OrchestrationResolver(service)] };
}

/** The start hook: task events drive orchestrations, and unfinished ones resume after a restart. */
export async function startOrchestrations(kernel: Kernel): Promise<void> {
  await engines.get(kernel)?.start();
}

function webhookCipher(kernel: Kernel): SecretCipher {
  return new SecretCipher(
    createHash('sha256').update(`orchestration-webhooks:${kernel.secrets.internal}`).digest(),
    'automation-platform/orchestration-webhook-secret/v1',
  );
}

function silentLogger(): Kernel['logger'] {
  const logger: any = { debug() {}, info() {}, warn() {}, error() {}, child: () => logger };
  return logger;
}
