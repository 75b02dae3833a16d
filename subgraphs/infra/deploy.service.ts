import type { DataSource } from 'typeorm';
import type { Principal } from '../../kernel/auth/principal';
import { AppError, errors, type FieldError } from '../../kernel/errors';
import { withTransaction, type Tx } from '../../kernel/db/transaction';
import type { EventBus } from '../../kernel/events';
import type { Logger } from '../../kernel/logger';
import { Access, type Caller } from './access';
import { checkPage } from './account.service';
import {
  RevisionNotFound,
  WorkloadNotFound,
  type ClusterDriver,
  type LogLine,
  type RolloutStatus,
  type RolloutStrategy,
  type WorkloadRef,
  type WorkloadSpec,
} from './cluster/driver';
import { DeployStore } from './deploy.store';
import { infraPage, type InfraDeletion, type InfraDeployment, type InfraDeploymentPage, type InfraService, type InfraServicePage } from './infra.types';
import type { NotifyService } from './notify.service';
import type { ProjectService } from './project.service';
import { UUID } from '../../kernel/ids';
import { TOPIC } from '../../kernel/topics';
import { contextOf, currentTraceparent, inSpan, recordSpan } from '../../kernel/tracing';

/**
 * Services and their rollouts. A service is a workload (a Kubernetes Deployment named after it in
 * its project's namespace). Creating, deploying and rolling back each start a deployment row in
 * `in-progress` — at most one per service, which the database enforces — and apply the change to
 * the cluster driver inside the same transaction, so a refused change leaves no row behind. The
 * watcher then follows each rollout by kubectl's rules until `success` or `failed` (progress
 * deadline exceeded), publishing every change (deploymentUpdated) and `deployment.completed`.
 */

export const SERVICE_TYPES = ['backend', 'frontend', 'worker', 'database', 'cache'];
export const STRATEGIES: RolloutStrategy[] = ['rolling-update', 'recreate'];
export const SERVICE_STATUSES = ['deploying', 'running', 'stopped', 'failed'];
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** An OCI image reference: [registry[:port]/]path[:tag][@digest]. */
const IMAGE = /^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*(:[\w][\w.-]{0,127})?(@sha256:[a-f0-9]{64})?$/;

export class DeployService {
  private timer?: NodeJS.Timeout;
  private ticking = false;
  private readonly store: DeployStore;

  constructor(
    private readonly db: DataSource,
    private readonly access: Access,
    private readonly projects: ProjectService,
    private readonly driver: ClusterDriver,
    private readonly notify: NotifyService,
    private readonly events: EventBus,
    private readonly logger: Logger,
  ) {
    this.store = new DeployStore(db);
  }

  // ---- services -----------------------------------------------------------------------------

  async createService(
    p: Principal,
    input: { project: string; name: string; type?: string | null; image: string; replicas?: number | null; strategy?: string | null },
  ): Promise<InfraService> {
    const caller = await this.access.caller(p, 'service:write');
    const project = await this.projects.load(input.project, viewerOf(caller));
    await this.access.mayChange(caller, project.id);
    const problems: FieldError[] = [];
    if (typeof input.name !== 'string' || !DNS_LABEL.test(input.name))
      problems.push({ field: 'name', message: 'must be a DNS label: lowercase letters, digits and -, 1 to 63 characters' });
    const type = input.type ?? 'backend';
    if (!SERVICE_TYPES.includes(type)) problems.push({ field: 'type', message: `must be one of ${SERVICE_TYPES.join(', ')}` });
    checkRollout(input, problems, true);
    if (problems.length) throw errors.validation(problems);
    const replicas = input.replicas ?? 1;
    const strategy = (input.strategy ?? 'rolling-update') as RolloutStrategy;
    try {
      const id = await withTransaction(this.db, async (tx) => {
        const serviceId = await this.store.insertService(tx.manager, { projectId: project.id, name: input.name, type, image: input.image, replicas, strategy });
        await this.startDeployment(
          tx,
          caller,
          { id: serviceId, name: input.name, slug: project.slug, projectId: project.id },
          'create',
          { image: input.image, replicas, strategy },
          null,
          () => this.driver.apply(spec(project.slug, input.name, input.image, replicas, strategy, serviceId)),
        );
        return serviceId;
      });
      return this.service(id);
    } catch (err) {
      if ((err as { code?: string }).code === '23505')
        throw new AppError('conflict', `Project ${project.name} already has a service named ${input.name}`, { field: 'name' });
      throw err;
    }
  }

  async listServices(p: Principal, args: { project?: string | null; status?: string | null; page: number; limit: number }): Promise<InfraServicePage> {
    const caller = await this.access.caller(p, 'service:read');
    checkPage(args.page, args.limit);
    if (args.status != null && !SERVICE_STATUSES.includes(args.status)) throw errors.field('status', `must be one of ${SERVICE_STATUSES.join(', ')}`);
    if (args.project != null && !UUID.test(args.project)) throw errors.field('project', 'must be a project id');
    const { services, total } = await this.store.services(caller, args, args.page, args.limit);
    return { data: services, pagination: infraPage(total, args.page, args.limit) };
  }

  async getService(p: Principal, id: string): Promise<InfraService> {
    const caller = await this.access.caller(p, 'service:read');
    return this.service(id, caller);
  }

  async deleteService(p: Principal, id: string): Promise<InfraDeletion> {
    const caller = await this.access.caller(p, 'service:write');
    const s = await this.service(id, caller);
    await this.access.mayChange(caller, s.projectId);
    const ref = await this.ref(id);
    await withTransaction(this.db, async ({ manager: m }) => {
      await this.store.deleteService(m, id);
      await this.driver.remove(ref);
    });
    return { success: true, message: `Service ${s.name} deleted` };
  }

  // ---- deployments --------------------------------------------------------------------------

  async deploy(p: Principal, id: string, input: { image: string; replicas?: number | null; strategy?: string | null }): Promise<InfraDeployment> {
    const caller = await this.access.caller(p, 'service:deploy');
    const s = await this.service(id, caller);
    await this.access.mayChange(caller, s.projectId);
    const problems: FieldError[] = [];
    checkRollout(input, problems, true);
    if (problems.length) throw errors.validation(problems);
    const replicas = input.replicas ?? s.replicas.desired;
    const strategy = (input.strategy ?? s.strategy) as RolloutStrategy;
    const deploymentId = await withTransaction(this.db, async (tx) => {
      const target = await this.lockService(tx, id);
      await this.store.setRollout(tx.manager, id, input.image, replicas, strategy);
      return this.startDeployment(tx, caller, target, 'deploy', { image: input.image, replicas, strategy }, target.image, () =>
        this.driver.apply(spec(target.slug, target.name, input.image, replicas, strategy, id)),
      );
    });
    return this.deployment(deploymentId);
  }

  /** kubectl rollout undo: back to `revision`, by default the one before the current. */
  async rollback(p: Principal, id: string, revision?: string | null): Promise<InfraDeployment> {
    const caller = await this.access.caller(p, 'service:deploy');
    const s = await this.service(id, caller);
    await this.access.mayChange(caller, s.projectId);
    if (revision != null && !/^[1-9]\d{0,9}$/.test(revision)) throw errors.field('revision', "must be a revision number (see the service's deployments)");
    const deploymentId = await withTransaction(this.db, async (tx) => {
      const target = await this.lockService(tx, id);
      const ref = { namespace: target.slug, name: target.name };
      const history = await this.driver.history(ref);
      const current = (await this.driver.rolloutStatus(ref)).revision;
      const to = revision ? history.find((r) => r.revision === revision) : history.filter((r) => r.revision !== current).at(-1);
      if (!to) {
        throw new AppError(
          'validation_error',
          revision ? `Revision ${revision} is not in the service's history` : 'There is no earlier revision to roll back to',
          {
            errors: [{ field: 'revision', message: 'unknown revision' }],
            available: history.map((r) => r.revision),
          },
        );
      }
      if (to.revision === current) throw errors.conflict(`Revision ${to.revision} is already the current one`, { revision: to.revision });
      await this.store.setImage(tx.manager, id, to.image);
      return this.startDeployment(tx, caller, target, 'rollback', { image: to.image, replicas: target.replicas, strategy: target.strategy }, target.image, () =>
        this.driver.rollback(ref, to.revision),
      );
    });
    return this.deployment(deploymentId);
  }

  async getDeployment(p: Principal, deploymentId: string): Promise<InfraDeployment> {
    const caller = await this.access.caller(p, 'service:read');
    const d = await this.deployment(deploymentId);
    await this.service(d.serviceId, caller);
    return d;
  }

  async listDeployments(p: Principal, serviceId: string, page: number, limit: number): Promise<InfraDeploymentPage> {
    const caller = await this.access.caller(p, 'service:read');
    await this.service(serviceId, caller);
    checkPage(page, limit);
    const { deployments, total } = await this.store.deployments(serviceId, page, limit);
    return { data: deployments, pagination: infraPage(total, page, limit) };
  }

  // ---- logs ---------------------------------------------------------------------------------

  /** The service's log lines, and with `follow` every new one until `signal` aborts. */
  async logs(p: Principal, id: string, opts: { lines: number; follow: boolean; signal?: AbortSignal }): Promise<AsyncIterable<LogLine>> {
    await this.mayReadLogs(p, id);
    if (!Number.isInteger(opts.lines) || opts.lines < 1 || opts.lines > 10_000) throw errors.field('lines', 'must be an integer from 1 to 10000');
    const ref = await this.ref(id);
    return this.recovering(ref, id, async () => this.driver.logs(ref, opts));
  }

  /** Whether `p` may read the service's logs now: checked at the start, and again on a followed stream when the caller's rights change. */
  async mayReadLogs(p: Principal, id: string): Promise<void> {
    const caller = await this.access.caller(p, 'service:logs');
    await this.service(id, caller);
  }

  async collectLogs(p: Principal, id: string, lines: number): Promise<LogLine[]> {
    const out: LogLine[] = [];
    for await (const line of await this.logs(p, id, { lines, follow: false })) out.push(line);
    return out;
  }

  // ---- the watcher --------------------------------------------------------------------------

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.tick(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    while (this.ticking) await new Promise((r) => setTimeout(r, 10));
  }

  /** One pass over the rollouts in progress (rows locked SKIP LOCKED: one process follows each). */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      for (const id of await this.store.inProgress())
        await this.follow(id).catch((err) => this.logger.warn('infra: rollout not followed', { err, deploymentId: id }));
    } finally {
      this.ticking = false;
    }
  }

  private async follow(deploymentId: string): Promise<void> {
    let finished: InfraDeployment | undefined;
    let projectId = '';
    await withTransaction(this.db, async (tx) => {
      const d = await this.store.lockToFollow(tx.manager, deploymentId);
      if (!d) return;
      const ref = { namespace: d.slug, name: d.service_name };
      const status = await this.recovering(ref, d.service_id, () => this.driver.rolloutStatus(ref));
      const progress = {
        updated: status.replicas.updated,
        ready: status.replicas.ready,
        available: status.replicas.available,
        desired: status.replicas.desired,
      };
      const done = status.phase !== 'in-progress';
      const changed = done || JSON.stringify(progress) !== JSON.stringify(d.progress) || status.message !== d.message;
      await this.store.markChecked(tx.manager, d.service_id);
      if (!changed) return;
      const row = await this.store.recordProgress(tx.manager, deploymentId, progress, status.message, status.revision, done ? status.phase : 'in-progress');
      // Each step the watcher sees is a span from the step before (or the start), under the request that started the rollout.
      recordSpan(
        'rollout step',
        {
          startTime: d.stepped_at ?? d.created_at,
          attributes: {
            'deployment.id': deploymentId,
            'deployment.kind': d.kind,
            'deployment.status': row.status,
            'service.id': d.service_id,
            'service.name': d.service_name,
            'container.image.name': d.target_image,
            'rollout.replicas.updated': progress.updated,
            'rollout.replicas.ready': progress.ready,
            'rollout.replicas.available': progress.available,
            'rollout.replicas.desired': progress.desired,
          },
          failed: status.phase === 'failed' ? (status.message ?? 'The rollout failed') : undefined,
        },
        d.trace_parent ? contextOf(d.trace_parent) : undefined,
      );
      tx.afterCommit(() =>
        this.events
          .publish(TOPIC.deploymentUpdated, { deploymentId, serviceId: d.service_id, version: row.version })
          .catch((err) => this.logger.warn('infra: deployment event not published', { err, deploymentId })),
      );
      if (!done) return;
      finished = row;
      projectId = d.project_id;
      await this.notify.emit(
        'deployment.completed',
        {
          deploymentId,
          status: status.phase,
          service: { id: d.service_id, name: d.service_name },
          image: d.target_image,
          duration: Math.round((finished.finishedAt!.getTime() - finished.createdAt.getTime()) / 100) / 10,
        },
        { projectId: d.project_id },
        tx,
      );
    });
    if (finished?.status === 'failed') {
      await this.notify.raise(
        'deployment_failed',
        finished.serviceId,
        'critical',
        finished.message ?? 'The rollout failed',
        {
          deploymentId,
          image: finished.targetImage,
        },
        { projectId },
      );
    } else if (finished?.status === 'success') {
      await this.notify.resolve('deployment_failed', finished.serviceId);
    }
  }

  // -------------------------------------------------------------------------------------------

  /**
   * Inserts the in-progress row, then applies the change: a driver that refuses it (the cluster
   * is unreachable, a revision is gone) rolls the whole transaction back. The deployment.created
   * deliveries are queued in `tx`, so they wake the workers once it commits.
   */
  private async startDeployment(
    tx: Tx,
    caller: Caller,
    s: { id: string; name: string; slug: string; projectId: string },
    kind: 'create' | 'deploy' | 'rollback',
    target: { image: string; replicas: number; strategy: RolloutStrategy },
    previousImage: string | null,
    apply: () => Promise<RolloutStatus>,
  ): Promise<string> {
    // As `kubectl set image` during a rollout: the newest change wins, the running rollout ends.
    // The service row is locked, so concurrent changes take turns and each supersedes the last.
    const superseded = await this.store.supersede(tx.manager, s.id, `Superseded by a ${kind} of ${target.image}`);
    let deploymentId: string;
    try {
      deploymentId = await this.store.insertDeployment(tx.manager, {
        serviceId: s.id,
        kind,
        strategy: target.strategy,
        image: target.image,
        previousImage,
        replicas: target.replicas,
        createdBy: `${caller.kind}:${caller.id}`,
        traceParent: currentTraceparent(),
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') {
        // Read outside the failed transaction, which answers nothing more.
        const open = await this.store.inProgressOf(s.id);
        throw errors.conflict(`Service ${s.name} has a deployment in progress: wait for it to finish`, { deploymentId: open ?? null });
      }
      throw err;
    }
    let status: RolloutStatus;
    try {
      // The change handed to the cluster: the first step of the rollout, inside the request.
      const attributes = {
        'deployment.id': deploymentId,
        'deployment.kind': kind,
        'service.id': s.id,
        'service.name': s.name,
        'container.image.name': target.image,
      };
      status = await inSpan('rollout apply', { attributes }, () => apply());
    } catch (err) {
      if (err instanceof RevisionNotFound) throw errors.field('revision', err.message);
      if (err instanceof AppError) throw err;
      this.logger.error('infra: the cluster refused a change', { err, service: s.id });
      throw new AppError('service_unavailable', 'The cluster did not accept the change; nothing was deployed', { reason: 'cluster_unavailable' });
    }
    await this.store.setRevision(tx.manager, deploymentId, status.revision, status.message);
    if (superseded) {
      const supersededId = superseded.deploymentId;
      tx.afterCommit(() =>
        this.events
          .publish(TOPIC.deploymentUpdated, { deploymentId: supersededId, serviceId: s.id })
          .catch((err) => this.logger.warn('infra: deployment event not published', { err, deploymentId: supersededId })),
      );
      await this.notify.emit(
        'deployment.superseded',
        {
          deploymentId: supersededId,
          status: superseded.status,
          supersededBy: deploymentId,
          service: { id: s.id, name: s.name },
          image: superseded.targetImage,
          duration: Math.round((superseded.finishedAt!.getTime() - superseded.createdAt.getTime()) / 100) / 10,
        },
        { projectId: s.projectId },
        tx,
      );
    }
    await this.notify.emit(
      'deployment.created',
      {
        deploymentId,
        kind,
        service: { id: s.id, name: s.name, projectId: s.projectId },
        image: target.image,
        previousImage,
        replicas: target.replicas,
        strategy: target.strategy,
      },
      { projectId: s.projectId },
      tx,
    );
    return deploymentId;
  }

  /** The local driver forgets its workloads on restart: apply the service's spec again and retry. */
  private async recovering<T>(ref: WorkloadRef, serviceId: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof WorkloadNotFound)) throw err;
      const s = await this.store.spec(serviceId);
      if (!s) throw err;
      await this.driver.apply(spec(ref.namespace, ref.name, s.image, s.replicas, s.strategy, serviceId));
      return run();
    }
  }

  private async lockService(tx: Tx, id: string) {
    const s = await this.store.lockService(tx.manager, id);
    if (!s) throw errors.notFound('service', id);
    return s;
  }

  private async ref(id: string): Promise<WorkloadRef> {
    const r = await this.store.workload(id);
    if (!r) throw errors.notFound('service', id);
    return { namespace: r.slug, name: r.name };
  }

  /** The service, if `caller` may see its project (404 otherwise, as if absent). */
  service(id: string, caller?: Caller): Promise<InfraService> {
    return this.store.service(id, caller);
  }

  deployment(id: string): Promise<InfraDeployment> {
    return this.store.deployment(id);
  }
}

function checkRollout(input: { image?: string; replicas?: number | null; strategy?: string | null }, problems: FieldError[], imageRequired: boolean): void {
  if (imageRequired && (typeof input.image !== 'string' || input.image.length > 512 || !IMAGE.test(input.image))) {
    problems.push({ field: 'image', message: 'must be an image reference such as registry.example.com/team/api:1.4.2' });
  }
  if (input.replicas != null && (!Number.isInteger(input.replicas) || input.replicas < 0 || input.replicas > 100))
    problems.push({ field: 'replicas', message: 'must be an integer from 0 to 100' });
  if (input.strategy != null && !STRATEGIES.includes(input.strategy as RolloutStrategy))
    problems.push({ field: 'strategy', message: `must be one of ${STRATEGIES.join(', ')}` });
}

function spec(namespace: string, name: string, image: string, replicas: number, strategy: RolloutStrategy, serviceId: string): WorkloadSpec {
  return {
    namespace,
    name,
    image,
    replicas,
    strategy,
    labels: { 'app.kubernetes.io/name': name, 'app.kubernetes.io/managed-by': 'automation-platform', 'platform/service-id': serviceId },
  };
}

const viewerOf = (caller: Caller) => (caller.admin ? null : caller.id);
