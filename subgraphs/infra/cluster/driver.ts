/**
 * The infrastructure service's view of a cluster. Two drivers implement it:
 * `local` (this host as a one-node cluster; rollouts simulated by the same state machine, no
 * containers started) and `kubernetes` (@kubernetes/client-node against KUBECONFIG). The service
 * keeps its own rows (services, deployments); the driver owns what runs.
 */

/** Where a service's workload lives: a Deployment `name` in `namespace` (Kubernetes terms). */
export interface WorkloadRef {
  namespace: string;
  name: string;
}

export type RolloutStrategy = 'rolling-update' | 'recreate';

export interface WorkloadSpec extends WorkloadRef {
  image: string;
  replicas: number;
  strategy: RolloutStrategy;
  /** Labels identifying the platform's objects (service id, project). */
  labels?: Record<string, string>;
}

export interface ReplicaCounts {
  desired: number;
  updated: number;
  ready: number;
  available: number;
}

/** kubectl's rollout status, reduced: still rolling, done, or failed (progress deadline exceeded). */
export type RolloutPhase = 'in-progress' | 'success' | 'failed';

export interface RolloutStatus {
  phase: RolloutPhase;
  /** The revision being rolled out (Kubernetes: the deployment.kubernetes.io/revision annotation). */
  revision: string;
  image: string;
  replicas: ReplicaCounts;
  /** kubectl's sentence, e.g. `Waiting for deployment "api" rollout to finish: 1 of 3 updated replicas are available...` */
  message: string;
}

export interface Revision {
  revision: string;
  image: string;
  createdAt: Date;
}

export interface LogLine {
  timestamp: string;
  level: string;
  message: string;
  pod: string;
}

export interface ClusterInfo {
  name: string;
  version: string;
  status: 'healthy' | 'degraded' | 'unhealthy';
  nodes: { total: number; ready: number; notReady: number };
  compute: { cpuAllocatable: string; memoryAllocatable: string; cpuUsed: string; memoryUsed: string };
  storage: { persistentVolumes: number; persistentVolumeClaims: number; totalCapacity: string };
  networking: { networkPolicies: number; serviceCount: number; ingressCount: number };
  security: { podsecuritystandards: string; rbacEnabled: boolean; networkPoliciesEnabled: boolean; encryptionAtRest: boolean };
  lastHealthCheck: Date;
}

export interface NodeInfo {
  name: string;
  status: 'Ready' | 'NotReady' | 'Unknown';
  type: string;
  instanceType: string;
  kubeletVersion: string;
  containerRuntimeVersion: string;
  osImage: string;
  kernelVersion: string;
  capacity: { cpu: string; memory: string };
  allocatable: { cpu: string; memory: string };
  podCount: number;
  createdAt: Date;
}

export interface UsageFigure {
  used: number;
  allocatable: number;
  utilizationPercent: number;
}

export interface ClusterMetrics {
  timestamp: Date;
  /** cpu in cores, memory and disk in bytes. */
  cluster: { cpu: UsageFigure; memory: UsageFigure; disk: UsageFigure };
  network: { ingressBytesPerSecond: number; egressBytesPerSecond: number; connectionCount: number };
}

export interface ClusterDriver {
  readonly kind: 'local' | 'kubernetes';
  /** Creates the workload or changes its image, replicas and strategy; a new revision when the template changes. */
  apply(spec: WorkloadSpec): Promise<RolloutStatus>;
  /** The current rollout of a workload (kubectl rollout status rules). */
  rolloutStatus(ref: WorkloadRef): Promise<RolloutStatus>;
  /** Revisions, oldest first (kubectl rollout history). */
  history(ref: WorkloadRef): Promise<Revision[]>;
  /** Rolls back to `revision`, default the previous one (kubectl rollout undo). */
  rollback(ref: WorkloadRef, revision?: string): Promise<RolloutStatus>;
  /** Deletes the workload; a missing one is not an error. */
  remove(ref: WorkloadRef): Promise<void>;
  /** The last `lines` log lines of the workload's pods, then, with `follow`, new lines until `signal` aborts. */
  logs(ref: WorkloadRef, opts: { lines: number; follow: boolean; signal?: AbortSignal }): AsyncIterable<LogLine>;
  cluster(): Promise<ClusterInfo>;
  nodes(): Promise<NodeInfo[]>;
  metrics(): Promise<ClusterMetrics>;
  close(): Promise<void>;
}

/** What every driver throws for a workload it does not have, and for a revision not in its history. */
export class WorkloadNotFound extends Error {
  constructor(readonly ref: WorkloadRef) {
    super(`No workload ${ref.namespace}/${ref.name}`);
  }
}

export class RevisionNotFound extends Error {
  constructor(
    readonly revision: string,
    readonly available: string[],
  ) {
    super(`unable to find specified revision ${revision} in history`);
  }
}

/** A byte count as Kubernetes writes quantities (`16.0Gi`, `512Mi`). */
export function bytes(n: number): string {
  const gi = n / 1024 ** 3;
  return gi >= 1 ? `${gi.toFixed(1)}Gi` : `${Math.round(n / 1024 ** 2)}Mi`;
}
