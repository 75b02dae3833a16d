import { page, Where } from '../../kernel/db/page';
import { exec, one, rowById, rows, type Queryable } from '../../kernel/db/rows';
import type { RolloutPhase, RolloutStrategy } from './cluster/driver';
import type { InfraDeployment, InfraService } from './infra.types';
import type { Viewer } from './project.store';

/** A rollout's status: the cluster's phase, or superseded (a newer deploy or rollback replaced it while it ran). */
export type DeploymentStatus = RolloutPhase | 'superseded';

/**
 * How services (infra.services) and their rollouts (infra.deployments, at most one in progress
 * per service: the database enforces it) are kept. A service's status and health are read from
 * its latest deployment. Methods that take a `Queryable` run in the caller's transaction.
 */

export interface Progress {
  updated: number;
  ready: number;
  available: number;
  desired: number;
}

/** A service as a change to it needs it, locked. */
export interface LockedServiceRow {
  id: string;
  name: string;
  image: string;
  replicas: number;
  strategy: RolloutStrategy;
  projectId: string;
  slug: string;
}

/** A rollout in progress with its service, as the watcher follows it. */
export interface FollowedRow extends DeploymentRow {
  project_id: string;
  service_name: string;
  service_image: string;
  service_replicas: number;
  service_strategy: RolloutStrategy;
  slug: string;
}

/** What re-applying a service's workload needs. */
export interface ServiceSpecRow {
  image: string;
  replicas: number;
  strategy: RolloutStrategy;
}

interface ServiceRow {
  id: string;
  project_id: string;
  name: string;
  type: string;
  image: string;
  replicas: number;
  strategy: RolloutStrategy;
  checked_at: Date | null;
  created_at: Date;
  updated_at: Date;
  slug: string;
  d_status: DeploymentStatus | null;
  d_progress: Progress | null;
}

interface DeploymentRow {
  id: string;
  service_id: string;
  kind: 'create' | 'deploy' | 'rollback';
  status: DeploymentStatus;
  strategy: RolloutStrategy;
  target_image: string;
  previous_image: string | null;
  replicas: number;
  revision: string | null;
  progress: Progress;
  message: string | null;
  created_by: string;
  created_at: Date;
  finished_at: Date | null;
  /** The traceparent of the request that started the rollout, when it was traced. */
  trace_parent: string | null;
  /** When the watcher last recorded a step (null before the first). */
  stepped_at: Date | null;
  /** bigint, read as text: raised by every change of the row. */
  version: string;
}

const SERVICE_COLUMNS = `s.*, p.slug, d.status AS d_status, d.progress AS d_progress`;
const SERVICE_FROM = `FROM infra.services s JOIN infra.projects p ON p.id = s.project_id
  LEFT JOIN LATERAL (SELECT status, progress FROM infra.deployments WHERE service_id = s.id ORDER BY created_at DESC, id DESC LIMIT 1) d ON true`;
const SERVICE_SELECT = `SELECT ${SERVICE_COLUMNS} ${SERVICE_FROM}`;
const SERVICE_STATUS_SQL = `CASE WHEN d.status = 'in-progress' THEN 'deploying' WHEN d.status = 'failed' THEN 'failed' WHEN s.replicas = 0 THEN 'stopped' ELSE 'running' END`;

export class DeployStore {
  constructor(private readonly db: Queryable) {}

  // ---- services -----------------------------------------------------------------------------

  /** The service if `viewer` (none: anyone) may see its project; 404 otherwise, as if absent. */
  async service(id: string, viewer?: Viewer): Promise<InfraService> {
    const params: unknown[] = [id];
    return toService(
      await rowById<ServiceRow>(this.db, 'service', id, `${SERVICE_SELECT} WHERE s.id = $1 AND ${viewer ? visible(viewer, params) : 'true'}`, params),
    );
  }

  /** A page of the services `viewer` may see (newest first), of `project` and in `status` when given. */
  async services(
    viewer: Viewer,
    filter: { project?: string | null; status?: string | null },
    pageNumber: number,
    limit: number,
  ): Promise<{ services: InfraService[]; total: number }> {
    const params: unknown[] = [];
    const where = new Where(params).always(visible(viewer, params)).equals('s.project_id', filter.project).equals(SERVICE_STATUS_SQL, filter.status);
    // Counted apart: each row's latest deployment (the lateral join) only for the page's rows.
    const found = await page<ServiceRow>(
      this.db,
      { select: SERVICE_COLUMNS, from: `${SERVICE_FROM} ${where}`, orderBy: 's.created_at DESC, s.id', params },
      { limit, offset: (pageNumber - 1) * limit },
      { count: 'apart' },
    );
    return { services: found.rows.map(toService), total: found.total };
  }

  /** A new service; 23505 when its project has one of that name. */
  async insertService(
    q: Queryable,
    s: { projectId: string; name: string; type: string; image: string; replicas: number; strategy: RolloutStrategy },
  ): Promise<string> {
    const row = await one<{ id: string }>(
      q,
      `INSERT INTO infra.services (project_id, name, type, image, replicas, strategy) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [s.projectId, s.name, s.type, s.image, s.replicas, s.strategy],
    );
    return row!.id;
  }

  deleteService(q: Queryable, id: string): Promise<void> {
    return exec(q, `DELETE FROM infra.services WHERE id = $1`, [id]);
  }

  /** Locks the service (FOR UPDATE) until `q`'s transaction ends: one change of a service at a time. */
  lockService(q: Queryable, id: string): Promise<LockedServiceRow | undefined> {
    return one<LockedServiceRow>(
      q,
      `SELECT s.id, s.name, s.image, s.replicas, s.strategy, s.project_id AS "projectId", p.slug FROM infra.services s JOIN infra.projects p ON p.id = s.project_id WHERE s.id = $1 FOR UPDATE OF s`,
      [id],
    );
  }

  setRollout(q: Queryable, id: string, image: string, replicas: number, strategy: RolloutStrategy): Promise<void> {
    return exec(q, `UPDATE infra.services SET image = $2, replicas = $3, strategy = $4, updated_at = now() WHERE id = $1`, [id, image, replicas, strategy]);
  }

  setImage(q: Queryable, id: string, image: string): Promise<void> {
    return exec(q, `UPDATE infra.services SET image = $2, updated_at = now() WHERE id = $1`, [id, image]);
  }

  markChecked(q: Queryable, id: string): Promise<void> {
    return exec(q, `UPDATE infra.services SET checked_at = now() WHERE id = $1`, [id]);
  }

  /** The workload's namespace (the project slug) and name. */
  workload(id: string): Promise<{ name: string; slug: string } | undefined> {
    return one<{ name: string; slug: string }>(
      this.db,
      `SELECT s.name, p.slug FROM infra.services s JOIN infra.projects p ON p.id = s.project_id WHERE s.id = $1`,
      [id],
    );
  }

  spec(id: string): Promise<ServiceSpecRow | undefined> {
    return one<ServiceSpecRow>(this.db, `SELECT image, replicas, strategy FROM infra.services WHERE id = $1`, [id]);
  }

  // ---- deployments --------------------------------------------------------------------------

  async deployment(id: string): Promise<InfraDeployment> {
    return toDeployment(await rowById<DeploymentRow>(this.db, 'deployment', id, `SELECT * FROM infra.deployments WHERE id = $1`));
  }

  /** A page of the service's deployments, newest first. */
  async deployments(serviceId: string, pageNumber: number, limit: number): Promise<{ deployments: InfraDeployment[]; total: number }> {
    const found = await page<DeploymentRow>(
      this.db,
      { select: '*', from: 'FROM infra.deployments WHERE service_id = $1', orderBy: 'created_at DESC, id DESC', params: [serviceId] },
      { limit, offset: (pageNumber - 1) * limit },
    );
    return { deployments: found.rows.map(toDeployment), total: found.total };
  }

  /** A new rollout in progress; 23505 while the service has one. */
  async insertDeployment(
    q: Queryable,
    d: {
      serviceId: string;
      kind: DeploymentRow['kind'];
      strategy: RolloutStrategy;
      image: string;
      previousImage: string | null;
      replicas: number;
      createdBy: string;
      traceParent: string | null;
    },
  ): Promise<string> {
    const row = await one<{ id: string }>(
      q,
      // clock_timestamp(), not the transaction's start: rollouts of a service are ordered as they took its lock.
      `INSERT INTO infra.deployments (service_id, kind, strategy, target_image, previous_image, replicas, progress, created_by, created_at, trace_parent)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, clock_timestamp(), $9) RETURNING id`,
      [
        d.serviceId,
        d.kind,
        d.strategy,
        d.image,
        d.previousImage,
        d.replicas,
        { updated: 0, ready: 0, available: 0, desired: d.replicas } satisfies Progress,
        d.createdBy,
        d.traceParent,
      ],
    );
    return row!.id;
  }

  /** Ends the service's rollout in progress, if any, as superseded (`message` says by what); the row as it ends. */
  async supersede(q: Queryable, serviceId: string, message: string): Promise<InfraDeployment | undefined> {
    const row = await one<DeploymentRow>(
      q,
      `UPDATE infra.deployments SET status = 'superseded', finished_at = clock_timestamp(), message = $2
        WHERE service_id = $1 AND status = 'in-progress' RETURNING *`,
      [serviceId, message],
    );
    return row && toDeployment(row);
  }

  /** The service's rollout in progress, if any. */
  async inProgressOf(serviceId: string): Promise<string | undefined> {
    return (await one<{ id: string }>(this.db, `SELECT id FROM infra.deployments WHERE service_id = $1 AND status = 'in-progress'`, [serviceId]))?.id;
  }

  setRevision(q: Queryable, id: string, revision: string, message: string | null): Promise<void> {
    return exec(q, `UPDATE infra.deployments SET revision = $2, message = $3 WHERE id = $1`, [id, revision, message]);
  }

  async inProgress(): Promise<string[]> {
    return (await rows<{ id: string }>(this.db, `SELECT id FROM infra.deployments WHERE status = 'in-progress'`)).map((r) => r.id);
  }

  /**
   * Locks the rollout if it is still in progress and no other process follows it (SKIP LOCKED).
   * Its service is locked with it, in the order a deploy takes them (service, then rollout): a
   * follower never waits on a deploy that waits on it; the rollout is followed at the next pass.
   */
  lockToFollow(q: Queryable, id: string): Promise<FollowedRow | undefined> {
    return one<FollowedRow>(
      q,
      `SELECT d.*, s.project_id, s.name AS service_name, s.image AS service_image, s.replicas AS service_replicas, s.strategy AS service_strategy, p.slug
           FROM infra.deployments d JOIN infra.services s ON s.id = d.service_id JOIN infra.projects p ON p.id = s.project_id
          WHERE d.id = $1 AND d.status = 'in-progress' FOR UPDATE OF d, s SKIP LOCKED`,
      [id],
    );
  }

  /** Records what the cluster reports; a status other than in-progress finishes the rollout. */
  async recordProgress(q: Queryable, id: string, progress: Progress, message: string | null, revision: string, status: RolloutPhase): Promise<InfraDeployment> {
    const row = await one<DeploymentRow>(
      q,
      `UPDATE infra.deployments SET progress = $2, message = $3, revision = $4, status = $5, finished_at = CASE WHEN $5 <> 'in-progress' THEN now() END, stepped_at = now()
            WHERE id = $1 RETURNING *`,
      [id, progress, message, revision, status],
    );
    return toDeployment(row!);
  }
}

/** Services of projects `viewer` may see (over aliases `s` and `p`). */
function visible(viewer: Viewer, params: unknown[]): string {
  if (viewer.admin) return 'true';
  return `(p.visibility <> 'private' OR EXISTS (SELECT 1 FROM infra.project_members m WHERE m.project_id = s.project_id AND m.user_id::text = $${params.push(viewer.id)}))`;
}

function toService(r: ServiceRow): InfraService {
  const progress = r.d_progress ?? { ready: 0, available: 0 };
  const status = r.d_status === 'in-progress' ? 'deploying' : r.d_status === 'failed' ? 'failed' : r.replicas === 0 ? 'stopped' : 'running';
  const health = r.replicas === 0 ? 'unknown' : progress.available >= r.replicas ? 'healthy' : progress.available > 0 ? 'degraded' : 'unhealthy';
  return {
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    type: r.type,
    status,
    image: r.image,
    strategy: r.strategy,
    replicas: { desired: r.replicas, ready: progress.ready, available: progress.available },
    endpoints: [`http://${r.name}.${r.slug}.svc.cluster.local`],
    health: { status: health, lastCheck: r.checked_at },
    createdAt: r.created_at,
  };
}

function toDeployment(r: DeploymentRow): InfraDeployment {
  return {
    deploymentId: r.id,
    serviceId: r.service_id,
    kind: r.kind,
    status: r.status,
    strategy: r.strategy,
    progress: r.progress,
    targetImage: r.target_image,
    previousImage: r.previous_image,
    revision: r.revision,
    message: r.message,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
    version: Number(r.version),
  };
}
