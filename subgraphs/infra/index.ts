/**
 * Infrastructure service: users and roles, projects, services and their rollouts on a cluster driver
 * (CLUSTER_DRIVER `local` or `kubernetes`), cluster figures, signed webhooks and alerts. People use
 * HS256 JWTs (audience `infra`); machines infrastructure API keys (`inf_live_` / `inf_test_`).
 *
 * Owns: the `infra` schema, through its stores.
 * Calls: no other service (the cluster driver; webhook receivers through kernel/webhooks.ts).
 * Publishes: deploymentUpdated, infra.access.changed. Serves: `GET /services/:id/logs` (NDJSON).
 */
import type { FastifyInstance } from 'fastify';
import { platformKey, SecretCipher } from '../../kernel/crypto';
import { errors, type AppError } from '../../kernel/errors';
import type { Kernel } from '../../kernel/platform';
import type { ServiceHttpDeps, ServiceModule } from '../../kernel/subgraph';
import { INFRA_ENVELOPE } from './envelope';
import { sendError } from '../../kernel/http';
import { Access } from './access';
import { AccountService } from './account.service';
import type { ClusterDriver } from './cluster/driver';
import { KubernetesDriver } from './cluster/kubernetes';
import { LocalDriver } from './cluster/local';
import { ClusterService } from './cluster.service';
import { DeployService } from './deploy.service';
import { InfraResolver, type InfraServices } from './infra.resolver';
import { Infra1763769601500 } from './migrations/1763769601500-infra';
import { AlertProjects1763769601836 } from './migrations/1763769601836-alert-projects';
import { SupersededDeployments1764400000000 } from './migrations/1764400000000-superseded-deployments';
import { InfraRowVersions1763769601881 } from './migrations/1763769601881-row-versions';
import { DeploymentTraces1764550000001 } from './migrations/1764550000001-deployment-traces';
import { NotifyService } from './notify.service';
import { ProjectService } from './project.service';
import { TOPIC } from '../../kernel/topics';

const PREFIX = '/infra/api/v1';
const CLUSTER_CHECK_EVERY = 15;
type Infra = InfraServices & { driver: ClusterDriver; streams: Set<AbortController> };

function buildInfra(kernel: Kernel): Infra {
  const { db, config, logger } = kernel;
  const driver: ClusterDriver =
    config.cluster.driver === 'kubernetes' ? new KubernetesDriver(config.cluster.kubeconfig) : new LocalDriver(config.cluster.localStepMs);
  const access = new Access(db, kernel.events);
  const notify = new NotifyService(
    db,
    access,
    kernel.webhooks,
    () => new SecretCipher(platformKey(kernel.secrets.internal, 'infra-webhooks'), 'automation-platform/infra-webhook-secret/v1'),
    { allowHttp: config.webhookAllowHttp, allowPrivateNetworks: config.outboundAllowPrivateNetworks },
    (ids) => kernel.keys.byId.batch(ids),
  );
  const projects = new ProjectService(db, access);
  const log = logger.child({ service: 'infra' });
  return {
    driver,
    streams: new Set(),
    accounts: new AccountService(db, kernel.tokens, access),
    projects,
    deploys: new DeployService(db, access, projects, driver, notify, kernel.events, log),
    cluster: new ClusterService(access, driver, notify, log, config.cluster.alertThresholdPercent),
    notify,
  };
}

export const infra: ServiceModule<Kernel> = {
  name: 'infra',
  surface: 'infra',
  servesHttp: true,
  migrations: [
    Infra1763769601500,
    AlertProjects1763769601836,
    SupersededDeployments1764400000000,
    InfraRowVersions1763769601881,
    DeploymentTraces1764550000001,
  ],
  subscriptions: [
    {
      field: 'deploymentUpdated',
      topic: TOPIC.deploymentUpdated,
      filter: (payload: { deploymentId: string }, args) => payload.deploymentId === args.deploymentId,
      query: 'infraDeployment',
      version: 'version',
    },
    {
      field: 'deploymentsUpdated',
      topic: TOPIC.deploymentUpdated,
      filter: (payload: { serviceId?: string }, args) => args.serviceId == null || payload.serviceId === args.serviceId,
      query: 'infraDeployment',
      version: 'version',
      entity: { arg: 'deploymentId', id: (payload: { deploymentId: string }) => payload.deploymentId },
      // Without a service there is no list to send first (rollouts are listed by service).
      check: (args) =>
        args.serviceId == null
          ? 'query { infraServices(limit: 1) { data { id } } }'
          : 'query($serviceId: ID!, $limit: Int!) { infraService(id: $serviceId) { id } infraDeployments(serviceId: $serviceId, limit: $limit) { data { deploymentId } } }',
      members: (data) => (data as { infraDeployments?: { data: { deploymentId: string }[] } }).infraDeployments?.data.map((d) => d.deploymentId) ?? [],
    },
  ],
  resolvers: [InfraResolver],
  build: (kernel) => {
    const s = buildInfra(kernel);
    return {
      instances: [new InfraResolver(s)],
      http: (app, deps) => {
        app.register(async (scope) => registerLogs(scope, s, kernel, deps));
      },
      start: async () => {
        await s.accounts.bootstrap(kernel.config.infraAdmin);
        const every = kernel.config.cluster.watchIntervalMs;
        s.deploys.start(every);
        s.cluster.start(every * CLUSTER_CHECK_EVERY);
      },
      /** Followed log streams end when the process drains (a client following logs reconnects). */
      drain: () => {
        for (const stream of s.streams) stream.abort();
      },
      stop: async () => {
        s.cluster.stop();
        await s.deploys.stop();
        await s.driver.close();
      },
    };
  },
};

/**
 * `GET /services/:id/logs?lines=&follow=`: the last `lines` lines as `{logs}`; with `follow=true`
 * an NDJSON stream (one log line object per line) that stays open, carrying every new line,
 * until the client goes away or the caller may read it no more. Served here because a stream is
 * not a GraphQL answer; the checks are the `infraServiceLogs` operation's own
 * (DeployService.logs), made again whenever the caller's credential or rights change: when they
 * refuse, the stream's last line is the refusal in the surface's error shape
 * (`{error, message, details, requestId}`), and it ends.
 */
function registerLogs(scope: FastifyInstance, { deploys, streams }: Infra, kernel: Kernel, { admit, watch }: ServiceHttpDeps): void {
  scope.get(`${PREFIX}/services/:id/logs`, async (req, reply) => {
    let watching: { stop(): void } | undefined;
    try {
      const { context, headers } = await admit(req);
      reply.headers(headers);
      const q = req.query as Record<string, string | undefined>;
      const lines = q.lines === undefined || q.lines === '' ? 100 : /^\d{1,6}$/.test(q.lines) ? Number(q.lines) : NaN;
      if (q.follow !== undefined && !['true', 'false', ''].includes(q.follow)) throw errors.field('follow', 'must be true or false');
      const follow = q.follow === 'true';
      const id = (req.params as { id: string }).id;
      const abort = new AbortController();
      const refusal: { error?: AppError } = {};
      // Watched from before the checks, so that a change to the caller's rights while they run is seen.
      if (follow) {
        watching = watch(req, context, {
          changed: (now) => deploys.mayReadLogs(now.principal, id),
          ended: (error) => {
            refusal.error = error;
            abort.abort();
          },
        });
      }
      const stream = await deploys.logs(context.principal, id, { lines, follow, signal: abort.signal });
      if (refusal.error) throw refusal.error;
      if (!follow) {
        const logs = [];
        for await (const line of stream) logs.push(line);
        return reply.send({ logs });
      }
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, { ...headers, 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store' });
      res.flushHeaders();
      streams.add(abort);
      res.on('close', () => abort.abort());
      try {
        for await (const line of stream) {
          if (res.destroyed || refusal.error) break;
          res.write(`${JSON.stringify(line)}\n`);
        }
        if (refusal.error && !res.destroyed) {
          const meta = { requestId: context.requestId, timestamp: new Date().toISOString() };
          res.write(`${JSON.stringify(INFRA_ENVELOPE.error(refusal.error, meta))}\n`);
        }
      } finally {
        streams.delete(abort);
        res.end();
      }
    } catch (err) {
      return sendError(reply, err, INFRA_ENVELOPE, kernel.logger);
    } finally {
      watching?.stop();
    }
  });
}
