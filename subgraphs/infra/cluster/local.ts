import { EventEmitter } from 'node:events';
import os from 'node:os';
import { connections, disk as diskOf, network as readNetwork, osImage } from '../../../kernel/host';
import {
  bytes,
  RevisionNotFound,
  WorkloadNotFound,
  type ClusterDriver,
  type ClusterInfo,
  type ClusterMetrics,
  type LogLine,
  type NodeInfo,
  type Revision,
  type RolloutStatus,
  type WorkloadRef,
  type WorkloadSpec,
} from './driver';
import { REVISION_ANNOTATION, rolloutSettled, rolloutStatusOf, startRollout, statusOf, stepRollout, type SimulatedRollout } from './rollout';

/**
 * CLUSTER_DRIVER=local: this host as a one-node cluster. Node, CPU, memory, disk and network
 * figures are the host's own. Workloads are SIMULATED: no container is started; a rollout moves
 * through the Deployment controller's states one replica per step (LOCAL_ROLLOUT_STEP_MS) and is
 * reported by kubectl's rules (rollout.ts), so a deploy, a rollback and their events behave as
 * they would on Kubernetes. Workloads live in this process: after a restart the service applies
 * each service's last spec again.
 */

interface Workload {
  spec: WorkloadSpec;
  revisions: Revision[];
  current: string;
  generation: number;
  rollout: SimulatedRollout;
  logs: LogLine[];
}

const LOG_KEPT = 1000;

export class LocalDriver implements ClusterDriver {
  readonly kind = 'local' as const;
  private readonly workloads = new Map<string, Workload>();
  private readonly lines = new EventEmitter();
  private timer?: NodeJS.Timeout;
  private network = { at: Date.now(), ...readNetwork() };

  constructor(private readonly stepMs = 1000) {
    this.lines.setMaxListeners(0);
  }

  async apply(spec: WorkloadSpec): Promise<RolloutStatus> {
    if (!this.timer) {
      this.timer = setInterval(() => this.step(), this.stepMs);
      this.timer.unref();
    }
    const key = keyOf(spec);
    const w = this.workloads.get(key);
    const templateChanged = !w || w.spec.image !== spec.image;
    if (!w) {
      const created: Workload = {
        spec,
        revisions: [],
        current: '0',
        generation: 0,
        rollout: startRollout(undefined, spec.replicas, spec.strategy, spec.image, true),
        logs: [],
      };
      this.workloads.set(key, created);
    }
    const target = this.workloads.get(key)!;
    target.rollout = startRollout(w?.rollout, spec.replicas, spec.strategy, spec.image, templateChanged);
    target.spec = spec;
    target.generation += 1;
    if (templateChanged) this.newRevision(target, spec.image);
    this.log(
      target,
      'info',
      templateChanged
        ? `Scaling up new replica set ${spec.name}-${target.current} (${spec.image}) to ${spec.replicas}`
        : `Scaled ${spec.name} to ${spec.replicas}`,
    );
    return this.status(target);
  }

  async rolloutStatus(ref: WorkloadRef): Promise<RolloutStatus> {
    return this.status(this.get(ref));
  }

  async history(ref: WorkloadRef): Promise<Revision[]> {
    return [...this.get(ref).revisions];
  }

  async rollback(ref: WorkloadRef, revision?: string): Promise<RolloutStatus> {
    const w = this.get(ref);
    const target = revision ? w.revisions.find((r) => r.revision === revision) : w.revisions.filter((r) => r.revision !== w.current).at(-1);
    if (!target)
      throw new RevisionNotFound(
        revision ?? 'previous',
        w.revisions.map((r) => r.revision),
      );
    return this.apply({ ...w.spec, image: target.image });
  }

  async remove(ref: WorkloadRef): Promise<void> {
    this.workloads.delete(keyOf(ref));
  }

  async *logs(ref: WorkloadRef, opts: { lines: number; follow: boolean; signal?: AbortSignal }): AsyncIterable<LogLine> {
    const w = this.get(ref);
    const key = keyOf(ref);
    const queue: LogLine[] = [];
    let wake: (() => void) | undefined;
    const onLine = (line: LogLine) => {
      queue.push(line);
      wake?.();
    };
    if (opts.follow) this.lines.on(key, onLine);
    try {
      for (const line of w.logs.slice(-opts.lines)) yield line;
      while (opts.follow && !opts.signal?.aborted) {
        if (!queue.length) {
          // One abort listener per wait, removed with it: a long stream must not pile them up on the signal.
          const aborted = () => wake?.();
          opts.signal?.addEventListener('abort', aborted, { once: true });
          await new Promise<void>((resolve) => (wake = resolve));
          opts.signal?.removeEventListener('abort', aborted);
          wake = undefined;
        }
        while (queue.length) yield queue.shift()!;
      }
    } finally {
      this.lines.off(key, onLine);
    }
  }

  async cluster(): Promise<ClusterInfo> {
    const m = await this.metrics();
    const disk = diskOf();
    return {
      name: os.hostname(),
      version: `local (${process.platform} ${os.release()})`,
      status: 'healthy',
      nodes: { total: 1, ready: 1, notReady: 0 },
      compute: {
        cpuAllocatable: String(os.cpus().length),
        memoryAllocatable: bytes(os.totalmem()),
        cpuUsed: m.cluster.cpu.used.toFixed(2),
        memoryUsed: bytes(m.cluster.memory.used),
      },
      storage: { persistentVolumes: 0, persistentVolumeClaims: 0, totalCapacity: bytes(disk.total) },
      networking: { networkPolicies: 0, serviceCount: this.workloads.size, ingressCount: 0 },
      security: { podsecuritystandards: 'not-applicable', rbacEnabled: true, networkPoliciesEnabled: false, encryptionAtRest: false },
      lastHealthCheck: new Date(),
    };
  }

  async nodes(): Promise<NodeInfo[]> {
    const memory = `${Math.floor(os.totalmem() / 1024)}Ki`;
    const cpu = String(os.cpus().length);
    let pods = 0;
    for (const w of this.workloads.values()) pods += w.rollout.updated + w.rollout.old;
    return [
      {
        name: os.hostname(),
        status: 'Ready',
        type: 'control-plane',
        instanceType: `${os.arch()} ${cpu} vCPU`,
        kubeletVersion: 'none (local driver)',
        containerRuntimeVersion: 'none (simulated workloads)',
        osImage: osImage(),
        kernelVersion: os.release(),
        capacity: { cpu, memory },
        allocatable: { cpu, memory },
        podCount: pods,
        createdAt: new Date(Date.now() - os.uptime() * 1000),
      },
    ];
  }

  async metrics(): Promise<ClusterMetrics> {
    const cpus = os.cpus().length;
    const load = Math.min(os.loadavg()[0]!, cpus);
    const total = os.totalmem();
    const used = total - os.freemem();
    const disk = diskOf();
    const now = { at: Date.now(), ...readNetwork() };
    const seconds = Math.max(0.001, (now.at - this.network.at) / 1000);
    const network = {
      ingressBytesPerSecond: Math.max(0, Math.round((now.rx - this.network.rx) / seconds)),
      egressBytesPerSecond: Math.max(0, Math.round((now.tx - this.network.tx) / seconds)),
      connectionCount: connections(),
    };
    this.network = now;
    return {
      timestamp: new Date(),
      cluster: { cpu: figure(load, cpus), memory: figure(used, total), disk: figure(disk.total - disk.free, disk.total) },
      network,
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.lines.removeAllListeners();
  }

  // -------------------------------------------------------------------------------------------

  private get(ref: WorkloadRef): Workload {
    const w = this.workloads.get(keyOf(ref));
    if (!w) throw new WorkloadNotFound(ref);
    return w;
  }

  private status(w: Workload): RolloutStatus {
    return rolloutStatusOf({
      metadata: { name: w.spec.name, generation: w.generation, annotations: { [REVISION_ANNOTATION]: w.current } },
      spec: { replicas: w.spec.replicas, template: { spec: { containers: [{ image: w.spec.image }] } } },
      status: statusOf(w.rollout, w.generation),
    });
  }

  /** kubectl's numbering: a template seen before moves to the newest revision number. */
  private newRevision(w: Workload, image: string): void {
    const next = String(Math.max(0, ...w.revisions.map((r) => Number(r.revision))) + 1);
    w.revisions = [...w.revisions.filter((r) => r.image !== image), { revision: next, image, createdAt: new Date() }];
    w.current = next;
  }

  private step(): void {
    for (const w of this.workloads.values()) {
      const before = w.rollout;
      if (rolloutSettled(before)) continue;
      w.rollout = stepRollout(before);
      const pod = `${w.spec.name}-${w.current}-${w.rollout.updated}`;
      if (w.rollout.deadlineExceeded && !before.deadlineExceeded)
        this.log(w, 'error', `Failed to pull image "${w.spec.image}": rollout exceeded its progress deadline`, pod);
      else if (w.rollout.failing && w.rollout.updated > before.updated) this.log(w, 'warn', `Back-off pulling image "${w.spec.image}"`, pod);
      else if (w.rollout.ready > before.ready)
        this.log(w, 'info', `Container started from ${w.spec.image}; replica ${w.rollout.ready} of ${w.spec.replicas} ready`, pod);
      else if (w.rollout.old < before.old) this.log(w, 'info', `Stopped an old replica (${w.rollout.old} left)`, pod);
    }
  }

  private log(w: Workload, level: string, message: string, pod = `${w.spec.name}-${w.current}`): void {
    const line = { timestamp: new Date().toISOString(), level, message, pod };
    w.logs.push(line);
    if (w.logs.length > LOG_KEPT) w.logs.splice(0, w.logs.length - LOG_KEPT);
    this.lines.emit(keyOf(w.spec), line);
  }
}

const keyOf = (ref: WorkloadRef) => `${ref.namespace}/${ref.name}`;

function figure(used: number, allocatable: number) {
  return { used, allocatable, utilizationPercent: allocatable > 0 ? Math.round((used / allocatable) * 1000) / 10 : 0 };
}
