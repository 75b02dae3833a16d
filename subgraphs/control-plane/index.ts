/**
 * Control plane: the API keys' GraphQL face, the agent catalogue, agent tasks, gates, orchestrations,
 * metrics and health. This file wires the concept folders into one module; README.md maps them.
 * Owns: the `control_plane` schema (tasks, task_artifacts, orchestrations, orchestration_stages,
 *   orchestration_tasks, resource_samples; lock_key_tasks). API keys are the kernel's.
 * Calls: promptlib (renderPrompt, prompt seeding), engine (engineHealth, engineMetricsQuery,
 *   workflowUsage), through their public operations (kernel.operations), never their tables.
 */
import os from 'node:os';
import { TaskRunClock1763769601160 } from './migrations/1763769601160-task-run-clock';
import { platformKey, SecretCipher } from '../../kernel/crypto';
import type { Kernel } from '../../kernel/platform';
import { entityReference, type BuiltService, type ServiceModule } from '../../kernel/subgraph';
import { AgentResolver, AgentService, seedAgentPrompts } from './agents';
import { ApiKeyResolver, toApiKey } from './keys';
import { AuditResolver } from './audit';
import { ControlPlaneTasks1763769600400 } from './migrations/1763769600400-control-plane-tasks';
import { ControlPlaneOrchestrations1763769600550 } from './migrations/1763769600550-control-plane-orchestrations';
import { buildOrchestrations, orchestrationResolvers, orchestrationSubscription, orchestrationsSubscription } from './orchestrations';
import { HealthService, MetricsResolver, MetricsService, registerPrometheus, ResourceSampler, TASK_ROLLUP } from './metrics';
import { ResourceSamples1763769601600 } from './migrations/1763769601600-resource-samples';
import { TaskListIndexes1763769601610 } from './migrations/1763769601610-task-list-indexes';
import { KeyTaskSlots1763769601710 } from './migrations/1763769601710-key-task-slots';
import { TaskTally1763769601740 } from './migrations/1763769601740-task-tally';
import { TaskRunRollup1763769601760 } from './migrations/1763769601760-task-run-rollup';
import { TaskTallyStatementUpdates1763769601770 } from './migrations/1763769601770-task-tally-statement-updates';
import { ControlPlaneRowVersions1763769601870 } from './migrations/1763769601870-row-versions';
import { ControlPlaneTraceIds1764550000000 } from './migrations/1764550000000-trace-ids';
import { foldPeriodically } from '../../kernel/db/tally';
import { AGENT_CONCURRENCY, TASK_TALLY, TaskResolver, TaskRuntime, TaskService } from './tasks';
import { TOPIC } from '../../kernel/topics';

const NEWEST = 'sortBy: "createdAt", sortOrder: "desc"';

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
  surface: 'control-plane',
  migrations: [
    ControlPlaneTasks1763769600400,
    ControlPlaneOrchestrations1763769600550,
    TaskRunClock1763769601160,
    ResourceSamples1763769601600,
    TaskListIndexes1763769601610,
    KeyTaskSlots1763769601710,
    TaskTally1763769601740,
    TaskRunRollup1763769601760,
    TaskTallyStatementUpdates1763769601770,
    ControlPlaneRowVersions1763769601870,
    ControlPlaneTraceIds1764550000000,
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
      version: 'version',
    },
    {
      field: 'tasksUpdated',
      topic: TOPIC.taskUpdated,
      filter: (payload: { agentId?: string }, args) => args.agentId == null || payload?.agentId === args.agentId,
      query: 'task',
      version: 'version',
      entity: { arg: 'taskId', id: (payload: { taskId: string }) => payload.taskId },
      // The agent's latest tasks, as the dashboard lists them (an unknown agent is refused).
      check: ({ agentId, limit }) =>
        agentId == null
          ? { query: `query($limit: Int) { tasks(limit: $limit, ${NEWEST}) { tasks { taskId } } }`, variables: { limit } }
          : {
              query: `query($agentId: ID!, $agent: String!, $limit: Int) { agent(agentId: $agentId) { agentId } tasks(agentId: $agent, limit: $limit, ${NEWEST}) { tasks { taskId } } }`,
              variables: { agentId, agent: agentId, limit },
            },
      members: (data) => (data as { tasks: { tasks: { taskId: string }[] } }).tasks.tasks.map((t) => t.taskId),
    },
    orchestrationSubscription,
    orchestrationsSubscription,
  ],
  resolvers: [ApiKeyResolver, AuditResolver, AgentResolver, TaskResolver, MetricsResolver, ...orchestrationResolvers],
  build: (kernel) => buildControlPlane(kernel),
};

/** What the control plane's build gives: its phases, and the agent pool and runtime (tests and the bench drive them). */
export type ControlPlaneBuilt = ReturnType<typeof buildControlPlane>;

function buildControlPlane(kernel: Kernel) {
  const cipher = new SecretCipher(platformKey(kernel.secrets.internal, 'task-webhooks'), 'automation-platform/task-webhook-secret/v1');
  const logger = kernel.logger.child({ service: 'control-plane' });
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
    clock: kernel.clock,
  });
  const runtime = new TaskRuntime({ db: kernel.db, tasks, operations: kernel.operations, llm: kernel.llm, webhooks: kernel.webhooks, cipher, logger });
  const sampler = new ResourceSampler(kernel.db, kernel.requests, `${os.hostname()}:${process.pid}`, logger, kernel.config.metrics.retentionDays);
  const health = new HealthService({
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
  });
  const orchestrations = buildOrchestrations(kernel, () => tasks);
  // Agent tasks run in a pool of their own (50 concurrent executions), so that long
  // model calls never hold the slots of webhook deliveries, chains and workflow executions.
  const agentQueue = kernel.queue.pool({ name: 'agent-tasks', concurrency: AGENT_CONCURRENCY });
  return {
    runtime,
    agentQueue,
    instances: [
      new ApiKeyResolver(kernel.keys),
      new AuditResolver(kernel.audit),
      new AgentResolver(new AgentService(kernel.db)),
      new TaskResolver(tasks),
      new MetricsResolver(new MetricsService(kernel.db, kernel.operations, kernel.rateLimiter), health),
      ...orchestrations.instances,
    ],
    references: {
      ApiKey: entityReference({
        key: 'id',
        permission: 'keys:manage',
        loader: kernel.keys.byId,
        visible: (key, ctx) => kernel.keys.visibleTo(ctx.principal, key),
        toEntity: toApiKey,
      }),
    } satisfies BuiltService['references'],
    jobs: () => {
      runtime.register(agentQueue);
      kernel.queue.onLifecycle(
        () => runtime.startReconciling(agentQueue),
        () => runtime.stopReconciling(),
      );
      foldPeriodically(kernel.queue, kernel.db, [TASK_TALLY, ...TASK_ROLLUP.tallies], logger);
      orchestrations.jobs();
    },
    /** GET /metrics (Prometheus). */
    http: (app, deps) => registerPrometheus(app, kernel, deps),
    start: async () => {
      await seedPrompts(kernel);
      await orchestrations.start();
      sampler.start(kernel.config.metrics.sampleIntervalMs);
    },
    stop: async () => sampler.stop(),
  } satisfies BuiltService & Record<string, unknown>;
}
