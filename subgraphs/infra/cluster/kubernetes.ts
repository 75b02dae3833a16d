import { Writable } from 'node:stream';
import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
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
import { REVISION_ANNOTATION, rolloutStatusOf } from './rollout';

/**
 * CLUSTER_DRIVER=kubernetes: @kubernetes/client-node against KUBECONFIG (or the default
 * kubeconfig / in-cluster account). A service is a Deployment in its project's namespace.
 * Rollout status is kubectl's (rollout.ts); history and undo follow `kubectl rollout history`
 * and `kubectl rollout undo`: the revisions are the Deployment's ReplicaSets, and an undo copies
 * the chosen ReplicaSet's pod template back into the Deployment. Node usage comes from
 * metrics.k8s.io; disk and network from each kubelet's stats summary (0 where unavailable).
 */

type Client = typeof K8s;
const NAME_LABEL = 'app.kubernetes.io/name';
const POD_TEMPLATE_HASH = 'pod-template-hash';

interface Apis {
  k8s: Client;
  kc: K8s.KubeConfig;
  apps: K8s.AppsV1Api;
  core: K8s.CoreV1Api;
  net: K8s.NetworkingV1Api;
  version: K8s.VersionApi;
  groups: K8s.ApisApi;
}

export class KubernetesDriver implements ClusterDriver {
  readonly kind = 'kubernetes' as const;
  private apis?: Promise<Apis>;
  private network?: { at: number; rx: number; tx: number };

  constructor(private readonly kubeconfig?: string) {}

  private client(): Promise<Apis> {
    // The client is an ES module: loaded on first use, so the local driver never pays for it.
    return (this.apis ??= import('@kubernetes/client-node').then((k8s) => {
      const kc = new k8s.KubeConfig();
      if (this.kubeconfig) kc.loadFromFile(this.kubeconfig);
      else kc.loadFromDefault();
      return {
        k8s,
        kc,
        apps: kc.makeApiClient(k8s.AppsV1Api),
        core: kc.makeApiClient(k8s.CoreV1Api),
        net: kc.makeApiClient(k8s.NetworkingV1Api),
        version: kc.makeApiClient(k8s.VersionApi),
        groups: kc.makeApiClient(k8s.ApisApi),
      };
    }));
  }

  async apply(spec: WorkloadSpec): Promise<RolloutStatus> {
    const { apps, core } = await this.client();
    await core.createNamespace({ body: { metadata: { name: spec.namespace } } }).catch(ignore(409));
    const labels = { ...spec.labels, [NAME_LABEL]: spec.name };
    const strategy = spec.strategy === 'recreate' ? { type: 'Recreate' } : { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
    const existing = await apps.readNamespacedDeployment({ name: spec.name, namespace: spec.namespace }).catch(ignore(404));
    if (!existing) {
      const created = await apps.createNamespacedDeployment({
        namespace: spec.namespace,
        body: {
          metadata: { name: spec.name, namespace: spec.namespace, labels },
          spec: {
            replicas: spec.replicas,
            selector: { matchLabels: { [NAME_LABEL]: spec.name } },
            strategy,
            progressDeadlineSeconds: 600,
            template: { metadata: { labels }, spec: { containers: [{ name: spec.name, image: spec.image }] } },
          },
        },
      });
      return rolloutStatusOf(created);
    }
    const d = existing;
    d.spec!.replicas = spec.replicas;
    d.spec!.strategy = strategy;
    const containers = d.spec!.template.spec!.containers;
    containers[0] = { ...containers[0]!, image: spec.image };
    return rolloutStatusOf(await apps.replaceNamespacedDeployment({ name: spec.name, namespace: spec.namespace, body: d }));
  }

  async rolloutStatus(ref: WorkloadRef): Promise<RolloutStatus> {
    return rolloutStatusOf(await this.deployment(ref));
  }

  async history(ref: WorkloadRef): Promise<Revision[]> {
    const d = await this.deployment(ref);
    return (await this.replicaSets(ref, d)).map((rs) => ({
      revision: rs.metadata!.annotations![REVISION_ANNOTATION]!,
      image: rs.spec?.template?.spec?.containers?.[0]?.image ?? '',
      createdAt: new Date(rs.metadata?.creationTimestamp ?? 0),
    }));
  }

  /** kubectl rollout undo: the ReplicaSet of `revision` (default: the newest but one), its template back. */
  async rollback(ref: WorkloadRef, revision?: string): Promise<RolloutStatus> {
    const { apps } = await this.client();
    const d = await this.deployment(ref);
    const sets = await this.replicaSets(ref, d);
    const target = revision ? sets.find((rs) => rs.metadata!.annotations![REVISION_ANNOTATION] === revision) : sets.at(-2);
    if (!target)
      throw new RevisionNotFound(
        revision ?? 'previous',
        sets.map((rs) => rs.metadata!.annotations![REVISION_ANNOTATION]!),
      );
    const template = structuredClone(target.spec!.template!);
    delete template.metadata?.labels?.[POD_TEMPLATE_HASH];
    d.spec!.template = template;
    return rolloutStatusOf(await apps.replaceNamespacedDeployment({ name: ref.name, namespace: ref.namespace, body: d }));
  }

  async remove(ref: WorkloadRef): Promise<void> {
    const { apps } = await this.client();
    await apps.deleteNamespacedDeployment({ name: ref.name, namespace: ref.namespace, propagationPolicy: 'Foreground' }).catch(ignore(404));
  }

  async *logs(ref: WorkloadRef, opts: { lines: number; follow: boolean; signal?: AbortSignal }): AsyncIterable<LogLine> {
    const { core, k8s, kc } = await this.client();
    await this.deployment(ref);
    const pods = (await core.listNamespacedPod({ namespace: ref.namespace, labelSelector: `${NAME_LABEL}=${ref.name}` })).items.map((p) => p.metadata!.name!);
    if (!opts.follow) {
      const all: LogLine[] = [];
      for (const pod of pods) {
        const text = await core.readNamespacedPodLog({ name: pod, namespace: ref.namespace, tailLines: opts.lines, timestamps: true });
        all.push(
          ...text
            .split('\n')
            .filter(Boolean)
            .map((l) => parseLine(l, pod)),
        );
      }
      yield* all.sort((a, b) => a.timestamp.localeCompare(b.timestamp)).slice(-opts.lines);
      return;
    }
    const queue: LogLine[] = [];
    let wake: (() => void) | undefined;
    let open = pods.length;
    const log = new k8s.Log(kc);
    const streams: AbortController[] = [];
    for (const pod of pods) {
      let rest = '';
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          const parts = (rest + chunk.toString('utf8')).split('\n');
          rest = parts.pop() ?? '';
          for (const l of parts) if (l) queue.push(parseLine(l, pod));
          wake?.();
          done();
        },
        final(done) {
          open -= 1;
          wake?.();
          done();
        },
      });
      streams.push(await log.log(ref.namespace, pod, ref.name, sink, { follow: true, tailLines: opts.lines, timestamps: true }));
    }
    const stop = () => {
      for (const s of streams) s.abort();
      wake?.();
    };
    opts.signal?.addEventListener('abort', stop, { once: true });
    try {
      while (!opts.signal?.aborted && (open > 0 || queue.length)) {
        if (!queue.length) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        while (queue.length) yield queue.shift()!;
      }
    } finally {
      stop();
    }
  }

  async cluster(): Promise<ClusterInfo> {
    const { core, net, version, groups, kc } = await this.client();
    const [v, nodes, metrics, pvs, pvcs, policies, services, ingresses, apiGroups, ns] = await Promise.all([
      version.getCode(),
      this.nodes(),
      this.metrics(),
      core.listPersistentVolume(),
      core.listPersistentVolumeClaimForAllNamespaces(),
      net.listNetworkPolicyForAllNamespaces(),
      core.listServiceForAllNamespaces(),
      net.listIngressForAllNamespaces(),
      groups.getAPIVersions(),
      core.readNamespace({ name: 'default' }).catch(() => undefined),
    ]);
    const ready = nodes.filter((n) => n.status === 'Ready').length;
    const capacity = pvs.items.reduce((sum, pv) => sum + quantity(pv.spec?.capacity?.storage ?? '0'), 0);
    const groupNames = apiGroups.groups.map((g) => g.name);
    return {
      name: kc.getCurrentCluster()?.name ?? 'kubernetes',
      version: v.gitVersion,
      status: ready === nodes.length ? 'healthy' : ready > 0 ? 'degraded' : 'unhealthy',
      nodes: { total: nodes.length, ready, notReady: nodes.length - ready },
      compute: {
        cpuAllocatable: String(metrics.cluster.cpu.allocatable),
        memoryAllocatable: bytes(metrics.cluster.memory.allocatable),
        cpuUsed: metrics.cluster.cpu.used.toFixed(2),
        memoryUsed: bytes(metrics.cluster.memory.used),
      },
      storage: { persistentVolumes: pvs.items.length, persistentVolumeClaims: pvcs.items.length, totalCapacity: bytes(capacity) },
      networking: { networkPolicies: policies.items.length, serviceCount: services.items.length, ingressCount: ingresses.items.length },
      security: {
        podsecuritystandards: ns?.metadata?.labels?.['pod-security.kubernetes.io/enforce'] ?? 'not-enforced',
        rbacEnabled: groupNames.includes('rbac.authorization.k8s.io'),
        networkPoliciesEnabled: policies.items.length > 0,
        // Not observable through the API (it is an API server flag): reported as not known to be on.
        encryptionAtRest: false,
      },
      lastHealthCheck: new Date(),
    };
  }

  async nodes(): Promise<NodeInfo[]> {
    const { core } = await this.client();
    const [nodes, pods] = await Promise.all([core.listNode(), core.listPodForAllNamespaces({ fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed' })]);
    const perNode = new Map<string, number>();
    for (const p of pods.items) if (p.spec?.nodeName) perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1);
    return nodes.items.map((n) => {
      const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
      const labels = n.metadata?.labels ?? {};
      const info = n.status?.nodeInfo;
      return {
        name: n.metadata!.name!,
        status: ready?.status === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown',
        type: 'node-role.kubernetes.io/control-plane' in labels ? 'control-plane' : 'worker',
        instanceType: labels['node.kubernetes.io/instance-type'] ?? labels['beta.kubernetes.io/instance-type'] ?? 'unknown',
        kubeletVersion: info?.kubeletVersion ?? '',
        containerRuntimeVersion: info?.containerRuntimeVersion ?? '',
        osImage: info?.osImage ?? '',
        kernelVersion: info?.kernelVersion ?? '',
        capacity: { cpu: n.status?.capacity?.cpu ?? '0', memory: n.status?.capacity?.memory ?? '0' },
        allocatable: { cpu: n.status?.allocatable?.cpu ?? '0', memory: n.status?.allocatable?.memory ?? '0' },
        podCount: perNode.get(n.metadata!.name!) ?? 0,
        createdAt: new Date(n.metadata?.creationTimestamp ?? 0),
      };
    });
  }

  async metrics(): Promise<ClusterMetrics> {
    const { core, k8s, kc } = await this.client();
    const nodes = (await core.listNode()).items;
    const usage = await new k8s.Metrics(kc).getNodeMetrics().catch(() => ({ items: [] as K8s.NodeMetric[] }));
    let cpuUsed = 0;
    let memUsed = 0;
    for (const m of usage.items) {
      cpuUsed += quantity(m.usage.cpu);
      memUsed += quantity(m.usage.memory);
    }
    let cpuAlloc = 0;
    let memAlloc = 0;
    let diskUsed = 0;
    let diskCap = 0;
    let rx = 0;
    let tx = 0;
    for (const n of nodes) {
      cpuAlloc += quantity(n.status?.allocatable?.cpu ?? '0');
      memAlloc += quantity(n.status?.allocatable?.memory ?? '0');
      const summary = await this.summary(n.metadata!.name!);
      diskUsed += summary?.node?.fs?.usedBytes ?? 0;
      diskCap += summary?.node?.fs?.capacityBytes ?? quantity(n.status?.capacity?.['ephemeral-storage'] ?? '0');
      rx += summary?.node?.network?.rxBytes ?? 0;
      tx += summary?.node?.network?.txBytes ?? 0;
    }
    const now = { at: Date.now(), rx, tx };
    const prev = this.network;
    this.network = now;
    const seconds = prev ? Math.max(0.001, (now.at - prev.at) / 1000) : 0;
    return {
      timestamp: new Date(),
      cluster: { cpu: figure(cpuUsed, cpuAlloc), memory: figure(memUsed, memAlloc), disk: figure(diskUsed, diskCap) },
      network: {
        ingressBytesPerSecond: prev ? Math.max(0, Math.round((rx - prev.rx) / seconds)) : 0,
        egressBytesPerSecond: prev ? Math.max(0, Math.round((tx - prev.tx) / seconds)) : 0,
        connectionCount: 0,
      },
    };
  }

  async close(): Promise<void> {}

  // -------------------------------------------------------------------------------------------

  private async deployment(ref: WorkloadRef): Promise<K8s.V1Deployment> {
    const { apps } = await this.client();
    const d = await apps.readNamespacedDeployment({ name: ref.name, namespace: ref.namespace }).catch(ignore(404));
    if (!d) throw new WorkloadNotFound(ref);
    return d;
  }

  /** The Deployment's ReplicaSets (owned by it, with a revision), oldest revision first. */
  private async replicaSets(ref: WorkloadRef, d: K8s.V1Deployment): Promise<K8s.V1ReplicaSet[]> {
    const { apps } = await this.client();
    const list = await apps.listNamespacedReplicaSet({ namespace: ref.namespace, labelSelector: `${NAME_LABEL}=${ref.name}` });
    return list.items
      .filter((rs) => rs.metadata?.ownerReferences?.some((o) => o.uid === d.metadata?.uid) && rs.metadata?.annotations?.[REVISION_ANNOTATION])
      .sort((a, b) => Number(a.metadata!.annotations![REVISION_ANNOTATION]) - Number(b.metadata!.annotations![REVISION_ANNOTATION]));
  }

  private async summary(
    node: string,
  ): Promise<{ node?: { fs?: { usedBytes?: number; capacityBytes?: number }; network?: { rxBytes?: number; txBytes?: number } } } | undefined> {
    const { kc } = await this.client();
    const cluster = kc.getCurrentCluster();
    if (!cluster) return undefined;
    try {
      const init: RequestInit & { headers: Record<string, string> } = { headers: {} };
      await kc.applyToFetchOptions(init as never);
      const res = await fetch(`${cluster.server}/api/v1/nodes/${encodeURIComponent(node)}/proxy/stats/summary`, {
        headers: init.headers,
        signal: AbortSignal.timeout(5000),
      });
      return res.ok ? ((await res.json()) as never) : undefined;
    } catch {
      return undefined;
    }
  }
}

/** A rejection of status `code` becomes undefined; anything else is rethrown. */
function ignore(code: number) {
  return (err: unknown): undefined => {
    if ((err as { code?: number }).code === code) return undefined;
    throw err;
  };
}

/** A Kubernetes quantity as a number: cores for CPU (`250m`, `1200000n`), bytes for memory (`16Gi`, `1G`). */
export function quantity(q: string): number {
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(q).trim());
  if (!m) return 0;
  const n = Number(m[1]);
  const unit: Record<string, number> = {
    n: 1e-9,
    u: 1e-6,
    m: 1e-3,
    '': 1,
    k: 1e3,
    K: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    P: 1e15,
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
    Ti: 1024 ** 4,
    Pi: 1024 ** 5,
  };
  return n * (unit[m[2]!] ?? 1);
}

function figure(used: number, allocatable: number) {
  return { used: Math.round(used * 1000) / 1000, allocatable, utilizationPercent: allocatable > 0 ? Math.round((used / allocatable) * 1000) / 10 : 0 };
}

/** `2026-11-24T10:00:00.123456789Z message` (kubelet's timestamps=true) into a log line. */
function parseLine(line: string, pod: string): LogLine {
  const space = line.indexOf(' ');
  const ts = space > 0 ? line.slice(0, space) : '';
  const message = space > 0 && !Number.isNaN(Date.parse(ts)) ? line.slice(space + 1) : line;
  const timestamp = message === line ? new Date().toISOString() : new Date(Date.parse(ts)).toISOString();
  const level = /\b(error|fatal|panic)\b/i.test(message) ? 'error' : /\bwarn(ing)?\b/i.test(message) ? 'warn' : /\bdebug\b/i.test(message) ? 'debug' : 'info';
  return { timestamp, level, message, pod };
}
