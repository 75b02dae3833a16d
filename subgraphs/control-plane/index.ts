import os from 'node:os';
import { TaskRunClock1763769601160 } from './migrations/1763769601160-task-run-clock';
import { platformKey, SecretCipher } from '../../kernel/crypto';
import type { Kernel } from '../../kernel/platform';
import { Queue } from '../../kernel/queue';
import type { ServiceModule } from '../../kernel/subgraph';
import { AgentResolver } from './agent.resolver';
import { AgentService } from './agent.service';
import { ApiKeyResolver } from './api-key.resolver';
import { ControlPlaneTasks1763769600400 } from './migrations/1763769600400-control-plane-tasks';
import { createOrchestrations, orchestrationMigrations, orchestrationSubscription, startOrchestrations } from './orchestration.module';
import { HealthService } from './health.service';
import { MetricsResolver } from './metrics.resolver';
import { ResourceSampler } from './metrics.sampler';
import { MetricsService } from './metrics.service';
import { ResourceSamples1763769601600 } from './migrations/1763769601600-resource-samples';
import { TaskListIndexes1763769601610 } from './migrations/1763769601610-task-list-indexes';
import { KeyTaskSlots1763769601710 } from './migrations/1763769601710-key-task-slots';
import { registerPrometheus } from './prometheus';
import { seedAgentPrompts } from './prompts.seed';
import { TaskResolver } from './task.resolver';
import { TaskRuntime } from './task.runtime';
import { AGENT_CONCURRENCY, TaskService } from './task.service';
import { TOPIC } from '../../kernel/topics';

/**
 * The control plane: API keys and rate limits, the agent catalogue, agent tasks, gates and
 * orchestrations, metrics, system health and the Prometheus endpoint.
 */

export interface ControlPlaneServices {
  tasks: TaskService;
  agents: AgentService;
  metrics: MetricsService;
  health: HealthService;
  /** Records host and request figures; null where nothing runs (schema emission). */
  sampler: ResourceSampler | null;
  /** The task job handler and its worker pool; null where nothing runs (schema emission). */
  runtime: TaskRuntime | null;
  agentQueue: Queue | null;
}

const built = new WeakMap<object, ControlPlaneServices>();

/**
 * The control plane's services for one kernel, built once: `create` and `start` below share
 * them, and other control-plane code (orchestrations) receives `tasks` from here rather than
 * constructing its own TaskService.
 */
export function controlPlaneServices(kernel: Kernel): ControlPlaneServices {
  const existing = built.get(kernel);
  if (existing) return existing;
  // Schema emission builds the subgraph with a stand-in kernel that runs nothing.
  const live = kernel.queue instanceof Queue;
  const cipher = live ? new SecretCipher(platformKey(kernel.secrets.internal, 'task-webhooks'), 'automation-platform/task-webhook-secret/v1') : undefined;
  const logger = live ? kernel.logger.child({ service: 'control-plane' }) : kernel.logger;
  const tasks = new TaskService({
    db: kernel.db,
    events: kernel.events,
    queue: kernel.queue,
    llm: kernel.llm,
    get webhookPolicy() {
      return { allowHttp: kernel.config.webhookAllowHttp, allowPrivateNetworks: kernel.config.outboundAllowPrivateNetworks };
    },
    cipher,
    logger,
  });
  let runtime: TaskRuntime | null = null;
  let agentQueue: Queue | null = null;
  if (live) {
    // Agent tasks run in a pool of their own (the spec's 50 concurrent executions), so that long
    // model calls never hold the slots of webhook deliveries, chains and workflow executions.
    const pool = kernel.queue.pool({ name: 'agent-tasks', concurrency: AGENT_CONCURRENCY });
    const taskRuntime = new TaskRuntime({ db: kernel.db, tasks, operations: kernel.operations, llm: kernel.llm, webhooks: kernel.webhooks, cipher, logger });
    taskRuntime.register(pool);
    kernel.queue.onLifecycle(
      () => taskRuntime.startReconciling(pool),
      () => taskRuntime.stopReconciling(),
    );
    runtime = taskRuntime;
    agentQueue = pool;
  }
  const sampler = live ? new ResourceSampler(kernel.db, kernel.requests, `${os.hostname()}:${process.pid}`, logger, kernel.config.metrics.retentionDays) : null;
  const services: ControlPlaneServices = {
    tasks,
    agents: new AgentService(kernel.db),
    metrics: new MetricsService(kernel.db, kernel.operations, kernel.rateLimiter),
    health: new HealthService({
      db: kernel.db,
      limiter: kernel.rateLimiter,
      queue: kernel.queue,
      redis: kernel.redis,
      operations: kernel.operations,
      requests: kernel.requests,
      sampler,
      get subgraphUrls() {
        return kernel.config.subgraphUrls;
      },
    }),
    sampler,
    runtime,
    agentQueue,
  };
  built.set(kernel, services);
  return services;
}

/** Seeds the agent prompts; when the prompt library is not reachable yet, tries again in the background. */
async function seedPrompts(kernel: Kernel, attempt = 1): Promise<void> {
  try {
    await seedAgentPrompts(kernel.operations, kernel.logger);
  } catch (err) {
    if (attempt >= 30) {
      kernel.logger.error('agent prompts not seeded; agents answer PROMPT_NOT_FOUND until they exist', { err });
      return;
    }
    kernel.logger.warn('agent prompts not seeded yet; retrying in 10 s', { err, attempt });
    setTimeout(() => void seedPrompts(kernel, attempt + 1), 10_000).unref();
  }
}

export const controlPlane: ServiceModule<Kernel> = {
  name: 'control-plane',
  entities: [],
  migrations: [
    ControlPlaneTasks1763769600400,
    ...orchestrationMigrations,
    TaskRunClock1763769601160,
    ResourceSamples1763769601600,
    TaskListIndexes1763769601610,
    KeyTaskSlots1763769601710,
  ],
  subscriptions: [
    {
      field: 'apiKeyUpdated',
      topic: TOPIC.apiKeyChanged,
      filter: (payload: { id: string }, args) => payload.id === args.id,
      query: 'apiKey',
    },
    {
      field: 'taskUpdated',
      topic: TOPIC.taskUpdated,
      filter: (payload: { taskId?: string }, args) => payload?.taskId === args.taskId,
      query: 'task',
    },
    orchestrationSubscription,
  ],
  create: (kernel) => {
    const s = controlPlaneServices(kernel);
    const orchestrations = createOrchestrations(kernel, () => s.tasks);
    return {
      name: 'control-plane',
      surface: 'control-plane',
      resolvers: [ApiKeyResolver, AgentResolver, TaskResolver, MetricsResolver, ...orchestrations.resolvers],
      instances: [
        new ApiKeyResolver(kernel.keys),
        new AgentResolver(s.agents),
        new TaskResolver(s.tasks),
        new MetricsResolver(s.metrics, s.health),
        ...orchestrations.instances,
      ],
    };
  },
  start: async (kernel) => {
    await seedPrompts(kernel);
    await startOrchestrations(kernel);
    controlPlaneServices(kernel).sampler?.start(kernel.config.metrics.sampleIntervalMs);
  },
  stop: async (kernel) => {
    controlPlaneServices(kernel).sampler?.stop();
  },
  /** GET /metrics (Prometheus). */
  http: (app, deps) => registerPrometheus(app, deps),
};
