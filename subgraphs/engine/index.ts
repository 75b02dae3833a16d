/**
 * Workflow engine: workflows and versions, executions (sync, async, retry, cancel, restart-proof
 * waits), n8n imports, webhook and schedule triggers. How an execution flows: README.md.
 *
 * Owns: the `engine` schema, through its stores.
 * Calls: control plane (executeTask, task, cancelTask) and promptlib (testPrompt), through their public operations.
 * Publishes: executionUpdated, executionCancel, webhookTriggersChanged. Jobs: executions, resumes,
 * schedules, maintenance. Serves: /webhook/<path> as a door in the process hosting it.
 */
import { platformKey, SecretCipher } from '../../kernel/crypto';
import { guardedFetch } from '../../kernel/outbound';
import { loadSecret } from '../../kernel/secrets';
import type { Kernel } from '../../kernel/platform';
import type { ServiceModule } from '../../kernel/subgraph';
// First: the resolvers' load order is their fields' order in the schema.
import {
  ControlPlaneWorkflowResolver,
  CredentialResolver,
  ExecutionResolver,
  ScheduleResolver,
  toExecution,
  toWebhook,
  toWorkflow,
  VariableResolver,
  WebhookTriggerResolver,
  WorkflowMetricsResolver,
  WorkflowResolver,
} from './resolvers';
import {
  BinaryStore,
  registerBinaryDownloads,
  ExecutionMaintenance,
  ExecutionNotifier,
  ExecutionRunner,
  ExecutionService,
  EXECUTION_TALLY,
  WorkflowMetricsService,
} from './executions';
import { Engine1763769600700 } from './migrations/1763769600700-engine';
import { EngineSchedules1763769600800 } from './migrations/1763769600800-engine-schedules';
import { ExecutionRunClock1763769601180 } from './migrations/1763769601180-execution-run-clock';
import { WebhookPathParameters1763769601190 } from './migrations/1763769601190-webhook-path-parameters';
import { ExecutionNodeRuns1763769601730 } from './migrations/1763769601730-execution-node-runs';
import { ExecutionTally1763769601750 } from './migrations/1763769601750-execution-tally';
import { ExecutionTallyStatementUpdates1763769601780 } from './migrations/1763769601780-execution-tally-statement-updates';
import { ExecutionRunAs1763769601840 } from './migrations/1763769601840-execution-run-as';
import { ExecutionRanMs1763769601850 } from './migrations/1763769601850-execution-ran-ms';
import { EngineRowVersions1763769601883 } from './migrations/1763769601883-row-versions';
import { ExecutionTraceIds1764550000002 } from './migrations/1764550000002-execution-trace-ids';
import { EngineCredentials1764600000000 } from './migrations/1764600000000-credentials';
import { EngineVariables1764700000000 } from './migrations/1764700000000-engine-variables';
import { WorkflowStaticData1764700000001 } from './migrations/1764700000001-workflow-static-data';
import { WorkflowPinData1764700000002 } from './migrations/1764700000002-workflow-pin-data';
import { WorkflowStickyNotes1764800000000 } from './migrations/1764800000000-workflow-sticky-notes';
import { ExecutionBinaries1764800000001 } from './migrations/1764800000001-execution-binaries';
import { BinaryStorageExternal1764938271046 } from './migrations/1764938271046-binary-storage-external';
import { CredentialKeyRing, CredentialService } from './credentials';
import { foldPeriodically } from '../../kernel/db/tally';
import { WorkflowSchedules } from './schedules';
import { WebhookInbound, webhookDoor, WebhookTriggerService } from './webhooks';
import { WorkflowService, type WorkflowHooks } from './workflows';
import { VariableService } from './variables';
import { TOPIC } from '../../kernel/topics';

/** The engine's services on a kernel, wired to each other. */
export function createEngine(kernel: Kernel) {
  const hooks: WorkflowHooks = {};
  // Read/Write Files from Disk reaches this folder only.
  const workflows = new WorkflowService(kernel.db, hooks);
  const variables = new VariableService(kernel.db);
  const keyRing = new CredentialKeyRing(
    loadSecret(kernel.config.dataDir, 'credentials-key', kernel.config.credentials.key),
    kernel.config.credentials.previousKeys,
  );
  const credentials = new CredentialService(
    kernel.db,
    () => keyRing,
    // Token endpoints are reached as workflow HTTP nodes reach their servers.
    (url, init) => guardedFetch(url, init, { allowHttp: true, allowPrivateNetworks: kernel.config.outboundAllowPrivateNetworks }),
    kernel.logger,
    kernel.clock,
  );
  hooks.credentials = (nodes) => credentials.resolveNodes(nodes);
  const executionSecrets = new SecretCipher(
    platformKey(kernel.secrets.internal, 'engine-execution-webhooks'),
    'automation-platform/engine-execution-webhook/v1',
  );
  const notifier = new ExecutionNotifier(
    () => kernel.webhooks,
    () => executionSecrets,
    () => ({ allowHttp: kernel.config.webhookAllowHttp, allowPrivateNetworks: kernel.config.outboundAllowPrivateNetworks }),
    kernel.logger,
    () => kernel.config.publicUrl,
  );
  const binaries = new BinaryStore(kernel.db, () => kernel.config.engine.binary);
  const runner = new ExecutionRunner({
    db: kernel.db,
    binaries,
    queue: kernel.queue,
    events: kernel.events,
    logger: kernel.logger,
    workflows,
    get policy() {
      // Workflow HTTP nodes may use http://; private networks only when the platform allows it.
      return { allowHttp: true, allowPrivateNetworks: kernel.config.outboundAllowPrivateNetworks };
    },
    get secret() {
      return kernel.secrets.internal;
    },
    notifier,
    operations: kernel.operations,
    // The key store as it is now (no request's cache): a key revoked mid-run stops its next agent or prompt node.
    keys: async (id) => {
      const [key] = Array.from(await kernel.keys.byId.batch([id]));
      return key instanceof Error ? null : (key ?? null);
    },
    sandboxProcesses: kernel.config.engine.sandboxProcesses,
    credentials: credentials.forNodes(),
    filesDir: kernel.config.filesDir,
    get budgets() {
      return kernel.config.engine.budgets;
    },
    clock: kernel.clock,
    variables: () => variables.values(),
  });
  const schedules = new WorkflowSchedules(kernel.db, kernel.queue, workflows, runner, kernel.logger, kernel.clock);
  const maintenance = new ExecutionMaintenance(
    kernel.db,
    kernel.queue,
    runner,
    () => kernel.config.engine,
    kernel.logger,
    kernel.clock,
    () => schedules.heal(),
    binaries,
  );
  const executions = new ExecutionService(kernel.db, runner, workflows, kernel.rateLimiter, notifier, binaries, kernel.logger);
  // Inbound webhooks cache the triggers by path: every change clears the cache here and in the other processes.
  const triggersChanged = () => inbound.triggersChanged();
  const triggers = new WebhookTriggerService(
    kernel.db,
    workflows,
    kernel.rateLimiter,
    () => platformKey(kernel.secrets.internal, 'engine-webhook-secrets'),
    triggersChanged,
  );
  const inbound: WebhookInbound = new WebhookInbound(
    kernel.events,
    kernel.db,
    runner,
    workflows,
    kernel.rateLimiter,
    () => triggers.cipher,
    (path) => triggers.urlFor(path),
    kernel.logger,
  );
  hooks.changed = async (record) => {
    await triggersChanged();
    await schedules.syncNodes(record.id);
  };
  hooks.deleting = (id) => executions.cancelAllOf(id);
  hooks.deleted = () => triggersChanged();
  return { workflows, runner, schedules, maintenance, executions, triggers, inbound, variables, credentials };
}

export const engine: ServiceModule<Kernel> = {
  name: 'engine',
  surface: 'engine',
  // The binary data downloads (executions/download.ts): a gateway fronts them when the engine runs elsewhere.
  servesHttp: true,
  doors: ['/webhook'],
  migrations: [
    Engine1763769600700,
    EngineSchedules1763769600800,
    ExecutionRunClock1763769601180,
    WebhookPathParameters1763769601190,
    ExecutionNodeRuns1763769601730,
    ExecutionTally1763769601750,
    ExecutionTallyStatementUpdates1763769601780,
    ExecutionRunAs1763769601840,
    ExecutionRanMs1763769601850,
    EngineRowVersions1763769601883,
    ExecutionTraceIds1764550000002,
    EngineCredentials1764600000000,
    EngineVariables1764700000000,
    WorkflowStaticData1764700000001,
    WorkflowPinData1764700000002,
    WorkflowStickyNotes1764800000000,
    ExecutionBinaries1764800000001,
    BinaryStorageExternal1764938271046,
  ],
  subscriptions: [
    {
      field: 'executionUpdated',
      topic: TOPIC.executionUpdated,
      filter: (payload: { executionId: string }, args) => payload.executionId === args.executionId,
      query: 'execution',
      version: 'version',
    },
    {
      field: 'executionsUpdated',
      topic: TOPIC.executionUpdated,
      filter: (payload: { workflowId?: string }, args) => args.workflowId == null || payload.workflowId === args.workflowId,
      query: 'execution',
      version: 'version',
      entity: { arg: 'executionId', id: (payload: { executionId: string }) => payload.executionId },
      check: (args) =>
        args.workflowId == null
          ? 'query($limit: Int!) { executions(limit: $limit) { executions { executionId } } }'
          : 'query($workflowId: ID!, $limit: Int!) { workflow(workflowId: $workflowId) { workflowId } executions(workflowId: $workflowId, limit: $limit) { executions { executionId } } }',
      members: (data) => (data as { executions: { executions: { executionId: string }[] } }).executions.executions.map((e) => e.executionId),
    },
  ],
  resolvers: [
    WorkflowResolver,
    ExecutionResolver,
    WebhookTriggerResolver,
    ScheduleResolver,
    ControlPlaneWorkflowResolver,
    WorkflowMetricsResolver,
    VariableResolver,
    CredentialResolver,
  ],
  build: (kernel) => {
    const s = createEngine(kernel);
    return {
      instances: [
        new WorkflowResolver(s.workflows, s.triggers),
        new ExecutionResolver(s.executions),
        new WebhookTriggerResolver(s.triggers, s.inbound),
        new ScheduleResolver(s.schedules),
        new ControlPlaneWorkflowResolver(s.workflows, s.executions, s.triggers),
        new WorkflowMetricsResolver(new WorkflowMetricsService(kernel.db, kernel.rateLimiter)),
        new VariableResolver(s.variables),
        new CredentialResolver(s.credentials),
      ],
      references: {
        Workflow: { key: 'workflowId', permission: 'workflow:read', loader: s.workflows.byId, toEntity: toWorkflow },
        WorkflowExecution: { key: 'executionId', permission: 'workflow:read', loader: s.executions.byId, toEntity: toExecution },
        WorkflowWebhook: { key: 'webhookId', permission: 'workflow:read', loader: s.triggers.byId, toEntity: toWebhook },
      },
      http: (app, deps) => registerBinaryDownloads(app, s.executions, kernel.logger, deps),
      // This process's /webhook/<path> is answered by this engine directly.
      doors: [webhookDoor(s.inbound, kernel.audit)],
      jobs: () => {
        s.runner.register(kernel.queue);
        s.schedules.register(kernel.queue);
        s.maintenance.register(kernel.queue);
        foldPeriodically(kernel.queue, kernel.db, [EXECUTION_TALLY], kernel.logger);
      },
      /** Plans the maintenance chain (pruning, stale runs) and the schedules of active workflows. */
      start: async () => {
        // Rotation: credentials still under a CREDENTIALS_KEY_PREVIOUS key move to CREDENTIALS_KEY.
        await s.credentials.reencrypt();
        await s.maintenance.plan(5_000);
        await s.schedules.restore();
      },
    };
  },
};
