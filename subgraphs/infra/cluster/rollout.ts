import type { RolloutStatus } from './driver';

/** The parts of a Kubernetes Deployment that kubectl's rollout status reads (apps/v1 field names). */
export interface DeploymentLike {
  metadata?: { name?: string; generation?: number; annotations?: Record<string, string> };
  spec?: { replicas?: number; template?: { spec?: { containers?: { image?: string }[] } } };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status?: string; reason?: string }[];
  };
}

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

/**
 * kubectl's DeploymentStatusViewer (k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go),
 * the same checks in the same order and the same sentences: both drivers report through it, so
 * the platform and `kubectl rollout status` agree on every state.
 */
export function rolloutStatusOf(d: DeploymentLike): RolloutStatus {
  const name = d.metadata?.name ?? '';
  const s = d.status ?? {};
  const desired = d.spec?.replicas ?? 1;
  const replicas = { desired, updated: s.updatedReplicas ?? 0, ready: s.readyReplicas ?? 0, available: s.availableReplicas ?? 0 };
  const base = { revision: d.metadata?.annotations?.[REVISION_ANNOTATION] ?? '0', image: d.spec?.template?.spec?.containers?.[0]?.image ?? '', replicas };
  if ((d.metadata?.generation ?? 0) > (s.observedGeneration ?? 0)) {
    return { ...base, phase: 'in-progress', message: 'Waiting for deployment spec update to be observed...' };
  }
  const progressing = s.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    return { ...base, phase: 'failed', message: `deployment "${name}" exceeded its progress deadline` };
  }
  if (replicas.updated < desired) {
    return {
      ...base,
      phase: 'in-progress',
      message: `Waiting for deployment "${name}" rollout to finish: ${replicas.updated} out of ${desired} new replicas have been updated...`,
    };
  }
  if ((s.replicas ?? 0) > replicas.updated) {
    return {
      ...base,
      phase: 'in-progress',
      message: `Waiting for deployment "${name}" rollout to finish: ${(s.replicas ?? 0) - replicas.updated} old replicas are pending termination...`,
    };
  }
  if (replicas.available < replicas.updated) {
    return {
      ...base,
      phase: 'in-progress',
      message: `Waiting for deployment "${name}" rollout to finish: ${replicas.available} of ${replicas.updated} updated replicas are available...`,
    };
  }
  return { ...base, phase: 'success', message: `deployment "${name}" successfully rolled out` };
}

/**
 * The simulated controller both the local driver and the tests' fake API server run: one step
 * moves a deployment's status one replica closer to its spec, the way the Deployment controller
 * does (rolling update: surge one new pod, then retire one old; recreate: all old pods first).
 * An image whose tag starts with `fail` never becomes ready: after `deadlineSteps` steps the
 * rollout is marked ProgressDeadlineExceeded, as Kubernetes does for an image that cannot be pulled.
 */
export interface SimulatedRollout {
  desired: number;
  /** Pods of the current template (created; ready once `ready` counts them). */
  updated: number;
  ready: number;
  /** Pods of older templates still running. */
  old: number;
  strategy: 'rolling-update' | 'recreate';
  failing: boolean;
  steps: number;
  deadlineExceeded: boolean;
}

export function imageFails(image: string): boolean {
  const tag = /:([^:/@]+)$/.exec(image)?.[1] ?? '';
  return tag.startsWith('fail');
}

export function startRollout(
  previous: SimulatedRollout | undefined,
  desired: number,
  strategy: SimulatedRollout['strategy'],
  image: string,
  templateChanged: boolean,
): SimulatedRollout {
  const running = previous ? previous.updated + previous.old : 0;
  if (!templateChanged && previous) return { ...previous, desired, steps: 0, deadlineExceeded: false };
  return { desired, updated: 0, ready: 0, old: running, strategy, failing: imageFails(image), steps: 0, deadlineExceeded: false };
}

/** Whether a step would change nothing: every replica updated and ready, no old one left, or given up. */
export function rolloutSettled(r: SimulatedRollout): boolean {
  return r.deadlineExceeded || (r.updated === r.desired && r.ready === r.desired && r.old === 0);
}

export function stepRollout(r: SimulatedRollout, deadlineSteps = 20): SimulatedRollout {
  const n = { ...r, steps: r.steps + 1 };
  if (n.failing) {
    if (n.updated < Math.min(1, n.desired)) n.updated += 1; // the new pod is created, and never gets ready
    if (n.steps >= deadlineSteps) n.deadlineExceeded = true;
    return n;
  }
  if (n.strategy === 'recreate' && n.old > 0) {
    n.old = 0;
    return n;
  }
  if (n.ready < n.updated) n.ready += 1;
  else if (n.updated < n.desired) n.updated += 1;
  else if (n.updated > n.desired) n.updated = n.ready = n.desired;
  if (n.old > 0 && n.ready > 0 && n.ready + n.old > n.desired) n.old -= 1;
  if (n.ready >= n.desired) n.old = 0;
  return n;
}

/** The Deployment status a simulated rollout shows (for rolloutStatusOf and the fake API server). */
export function statusOf(r: SimulatedRollout, generation: number): NonNullable<DeploymentLike['status']> {
  return {
    observedGeneration: generation,
    replicas: r.updated + r.old,
    updatedReplicas: r.updated,
    readyReplicas: r.ready + r.old,
    availableReplicas: r.ready + r.old,
    conditions: [
      r.deadlineExceeded
        ? { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }
        : { type: 'Progressing', status: 'True', reason: r.ready >= r.desired && r.old === 0 ? 'NewReplicaSetAvailable' : 'ReplicaSetUpdated' },
      { type: 'Available', status: r.ready + r.old >= Math.max(0, r.desired - 1) ? 'True' : 'False' },
    ],
  };
}
