import { createHash, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './net';
import {
  REVISION_ANNOTATION,
  rolloutSettled,
  startRollout,
  statusOf,
  stepRollout,
  type DeploymentLike,
  type SimulatedRollout,
} from '../../subgraphs/infra/cluster/rollout';

/**
 * The Kubernetes objects this server keeps, with the apps/v1 and v1 fields it and the tests read,
 * as the platform's driver sends them (its Deployments always carry labels, a selector and a strategy).
 */
type Labels = Record<string, string>;

interface PodTemplate {
  metadata: { labels: Labels };
  spec: { containers: { name: string; image: string }[] };
}

interface DeploymentSpec {
  replicas: number;
  selector: { matchLabels: Labels };
  strategy: { type: string; rollingUpdate?: { maxSurge: string; maxUnavailable: string } };
  template: PodTemplate;
}

/** A Deployment as a client POSTs or PUTs it. */
interface SentDeployment {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; labels: Labels };
  spec: DeploymentSpec;
}

/** A Deployment as this server keeps and answers it. */
export interface DeploymentObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; uid: string; generation: number; creationTimestamp: string; labels: Labels; annotations: Labels };
  spec: DeploymentSpec;
  status: NonNullable<DeploymentLike['status']>;
}

export interface ReplicaSetObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    labels: Labels;
    annotations: Labels;
    ownerReferences: { apiVersion: string; kind: string; name: string; uid: string; controller: boolean }[];
    creationTimestamp: string;
  };
  spec: { replicas: number; template: PodTemplate };
  status: { replicas: number };
}

interface NamespaceObject {
  metadata: { name: string; uid?: string; labels?: Labels };
}

/**
 * A small Kubernetes API server on loopback for the tests: the paths and objects that kubectl and
 * @kubernetes/client-node use for deployments (discovery, namespaces, deployments, replica sets,
 * pods and their logs — followed too —, nodes, metrics.k8s.io, the kubelet stats summary, and the
 * lists the cluster view counts). The Deployment controller is the one of rollout.ts, stepped by
 * the test (`step()`), so a test can freeze a rollout and ask kubectl about it.
 */

interface Deployment {
  obj: DeploymentObject;
  rollout: SimulatedRollout;
}

export interface FakeKubernetes {
  url: string;
  kubeconfig: string;
  /** One controller step for every deployment (observes the spec, moves a replica). */
  step(): void;
  /** Steps until no rollout moves any more (at most `max` steps). */
  settle(max?: number): void;
  deployment(namespace: string, name: string): DeploymentObject | undefined;
  replicaSets(namespace: string): ReplicaSetObject[];
  /** What metrics.k8s.io reports for a node from now on. */
  setUsage(node: string, usage: { cpu: string; memory: string }): void;
  /** Appends a line to every pod of a deployment (what its containers print). */
  print(namespace: string, name: string, message: string): void;
  requests: string[];
  close(): Promise<void>;
}

export async function startFakeKubernetes(opts: { dir: string; deadlineSteps?: number; notReadyNode?: boolean }): Promise<FakeKubernetes> {
  const namespaces = new Map<string, NamespaceObject>([
    ['default', { metadata: { name: 'default', labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } }],
  ]);
  const deployments = new Map<string, Deployment>();
  const replicaSets = new Map<string, ReplicaSetObject>();
  const logs = new Map<string, string[]>();
  const followers = new Map<string, Set<http.ServerResponse>>();
  const requests: string[] = [];
  let resourceVersion = 1;
  const created = new Date(Date.UTC(2026, 0, 1)).toISOString();

  const nodes = [node('node-a', true, 'm5.large', '2', '8039404Ki', true), node('node-b', !opts.notReadyNode, 'm5.xlarge', '4', '16078808Ki', false)];
  const usage: Record<string, { cpu: string; memory: string }> = {
    'node-a': { cpu: '500m', memory: '2097152Ki' },
    'node-b': { cpu: '1250000000n', memory: '4Gi' },
  };

  const key = (ns: string, name: string) => `${ns}/${name}`;
  const templateHash = (template: unknown) => createHash('sha256').update(JSON.stringify(template)).digest('hex').slice(0, 10);
  const image = (d: DeploymentObject) => d.spec.template.spec.containers[0]!.image;

  function setTemplate(d: Deployment, previous?: SimulatedRollout) {
    const obj = d.obj;
    const ns = obj.metadata.namespace;
    const hash = templateHash(obj.spec.template);
    const owned = [...replicaSets.values()].filter((rs) => rs.metadata.namespace === ns && rs.metadata.ownerReferences[0].uid === obj.metadata.uid);
    const next = String(Math.max(0, ...owned.map((rs) => Number(rs.metadata.annotations[REVISION_ANNOTATION]))) + 1);
    let rs = owned.find((r) => r.metadata.labels['pod-template-hash'] === hash);
    const isCurrent = rs && rs.metadata.annotations[REVISION_ANNOTATION] === obj.metadata.annotations?.[REVISION_ANNOTATION];
    if (isCurrent) {
      d.rollout = startRollout(previous, obj.spec.replicas, strategyOf(obj), image(obj), false);
      return;
    }
    if (!rs) {
      const template = structuredClone(obj.spec.template);
      template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, 'pod-template-hash': hash } };
      rs = {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: `${obj.metadata.name}-${hash}`,
          namespace: ns,
          uid: randomUUID(),
          labels: { ...obj.spec.template.metadata?.labels, 'pod-template-hash': hash },
          annotations: {},
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: obj.metadata.name, uid: obj.metadata.uid, controller: true }],
          creationTimestamp: new Date().toISOString(),
        },
        spec: { replicas: 0, template },
        status: { replicas: 0 },
      };
      replicaSets.set(key(ns, rs.metadata.name), rs);
    }
    rs.metadata.annotations[REVISION_ANNOTATION] = next; // a template seen before moves to the newest number
    obj.metadata.annotations = { ...obj.metadata.annotations, [REVISION_ANNOTATION]: next };
    d.rollout = startRollout(previous, obj.spec.replicas, strategyOf(obj), image(obj), true);
  }

  function podsOf(d: Deployment): string[] {
    const obj = d.obj;
    const hash = templateHash(obj.spec.template);
    const pods: string[] = [];
    for (let i = 0; i < d.rollout.updated; i++) pods.push(`${obj.metadata.name}-${hash}-${i}`);
    for (let i = 0; i < d.rollout.old; i++) pods.push(`${obj.metadata.name}-old-${i}`);
    return pods;
  }

  function append(ns: string, pod: string, message: string) {
    const line = `${new Date().toISOString()} ${message}`;
    const k = key(ns, pod);
    logs.set(k, [...(logs.get(k) ?? []), line]);
    for (const res of followers.get(k) ?? []) res.write(`${line}\n`);
  }

  function step() {
    for (const d of deployments.values()) {
      const obj = d.obj;
      const before = d.rollout;
      obj.status = { ...obj.status, observedGeneration: obj.metadata.generation };
      if (!rolloutSettled(before)) d.rollout = stepRollout(before, opts.deadlineSteps ?? 20);
      obj.status = statusOf(d.rollout, obj.metadata.generation);
      if (d.rollout.ready > before.ready) {
        const pod = podsOf(d)[d.rollout.ready - 1]!;
        append(obj.metadata.namespace, pod, `Started container ${obj.metadata.name} from ${image(obj)}`);
      }
      resourceVersion++;
    }
  }

  const server = http.createServer((req, res) => {
    void readBody(req).then((text) => {
      const url = new URL(req.url!, 'http://fake');
      requests.push(`${req.method} ${url.pathname}`);
      const body: unknown = text ? JSON.parse(text) : undefined;
      try {
        route(req.method!, url, body, res);
      } catch (err) {
        send(res, 500, status(500, 'InternalError', String(err)));
      }
    });
  });

  /** `body` is the parsed request, the object its path names (a namespace, a deployment). */
  function route(method: string, url: URL, body: unknown, res: http.ServerResponse): void {
    const p = url.pathname;
    let m: RegExpExecArray | null;
    if (p === '/version') return send(res, 200, { major: '1', minor: '31', gitVersion: 'v1.31.2', platform: 'linux/amd64' });
    if (p === '/api') return send(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
    if (p === '/apis') return send(res, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: GROUPS.map(group) });
    if (p === '/api/v1') return send(res, 200, resourceList('v1', CORE_RESOURCES));
    for (const g of GROUPS) if (p === `/apis/${g.name}/${g.version}`) return send(res, 200, resourceList(`${g.name}/${g.version}`, g.resources));

    if (p === '/api/v1/namespaces' && method === 'POST') {
      const sent = body as NamespaceObject;
      if (namespaces.has(sent.metadata.name)) return send(res, 409, status(409, 'AlreadyExists', `namespaces "${sent.metadata.name}" already exists`));
      namespaces.set(sent.metadata.name, { ...sent, metadata: { ...sent.metadata, uid: randomUUID() } });
      return send(res, 201, namespaces.get(sent.metadata.name));
    }
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(p))) {
      const ns = namespaces.get(m[1]!);
      return ns ? send(res, 200, ns) : send(res, 404, status(404, 'NotFound', `namespaces "${m[1]}" not found`));
    }

    if ((m = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/deployments$/.exec(p))) {
      const ns = m[1]!;
      if (method === 'POST') {
        const sent = body as SentDeployment;
        if (deployments.has(key(ns, sent.metadata.name))) return send(res, 409, status(409, 'AlreadyExists', 'exists'));
        const obj: DeploymentObject = {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          ...sent,
          metadata: { ...sent.metadata, namespace: ns, uid: randomUUID(), generation: 1, creationTimestamp: new Date().toISOString(), annotations: {} },
          status: {},
        };
        const d: Deployment = { obj, rollout: startRollout(undefined, obj.spec.replicas, strategyOf(obj), image(obj), true) };
        deployments.set(key(ns, obj.metadata.name), d);
        setTemplate(d);
        return send(res, 201, withVersion(obj));
      }
      const name = /metadata\.name=([^,]+)/.exec(url.searchParams.get('fieldSelector') ?? '')?.[1];
      const items = [...deployments.values()].map((d) => d.obj).filter((o) => o.metadata.namespace === ns && (!name || o.metadata.name === name));
      return send(res, 200, list('DeploymentList', 'apps/v1', items));
    }
    if ((m = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/deployments\/([^/]+)$/.exec(p))) {
      const k = key(m[1]!, m[2]!);
      const d = deployments.get(k);
      if (!d) return send(res, 404, status(404, 'NotFound', `deployments.apps "${m[2]}" not found`));
      if (method === 'GET') return send(res, 200, withVersion(d.obj));
      if (method === 'DELETE') {
        deployments.delete(k);
        for (const [rk, rs] of replicaSets) if (rs.metadata.ownerReferences[0].uid === d.obj.metadata.uid) replicaSets.delete(rk);
        return send(res, 200, status(200, 'Success', 'deleted'));
      }
      if (method === 'PUT') {
        const sent = body as SentDeployment;
        const templateChanged = JSON.stringify(sent.spec.template) !== JSON.stringify(d.obj.spec.template);
        const changed = JSON.stringify(sent.spec) !== JSON.stringify(d.obj.spec);
        d.obj = { ...d.obj, spec: sent.spec, metadata: { ...d.obj.metadata, generation: d.obj.metadata.generation + (changed ? 1 : 0) } };
        if (templateChanged) setTemplate(d, d.rollout);
        else if (changed) d.rollout = startRollout(d.rollout, d.obj.spec.replicas, strategyOf(d.obj), image(d.obj), false);
        return send(res, 200, withVersion(d.obj));
      }
    }
    if ((m = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/replicasets$/.exec(p))) {
      const items = [...replicaSets.values()].filter(
        (rs) => rs.metadata.namespace === m![1] && matches(rs.metadata.labels, url.searchParams.get('labelSelector')),
      );
      return send(res, 200, list('ReplicaSetList', 'apps/v1', items));
    }
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(p))) {
      const ns = m[1]!;
      const items = [...deployments.values()]
        .filter((d) => d.obj.metadata.namespace === ns && matches(d.obj.spec.template.metadata?.labels ?? {}, url.searchParams.get('labelSelector')))
        .flatMap((d) => podsOf(d).map((name) => pod(name, ns, d.obj)));
      return send(res, 200, list('PodList', 'v1', items));
    }
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/.exec(p))) {
      const k = key(m[1]!, m[2]!);
      const tail = Number(url.searchParams.get('tailLines') ?? 1e9);
      const lines = (logs.get(k) ?? []).slice(-tail);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(lines.map((l) => `${l}\n`).join(''));
      if (url.searchParams.get('follow') !== 'true') return void res.end();
      const set = followers.get(k) ?? new Set();
      followers.set(k, set.add(res));
      res.on('close', () => set.delete(res));
      return;
    }
    if (p === '/api/v1/pods') {
      const items = [...deployments.values()].flatMap((d) => podsOf(d).map((name) => pod(name, d.obj.metadata.namespace, d.obj)));
      return send(res, 200, list('PodList', 'v1', items));
    }
    if (p === '/api/v1/nodes') return send(res, 200, list('NodeList', 'v1', nodes));
    if ((m = /^\/api\/v1\/nodes\/([^/]+)\/proxy\/stats\/summary$/.exec(p))) {
      return send(res, 200, {
        node: {
          nodeName: m[1],
          fs: { usedBytes: 20 * 1024 ** 3, capacityBytes: 100 * 1024 ** 3 },
          network: { rxBytes: 1000 * resourceVersion, txBytes: 500 * resourceVersion },
        },
      });
    }
    if (p === '/apis/metrics.k8s.io/v1beta1/nodes') {
      return send(res, 200, {
        kind: 'NodeMetricsList',
        apiVersion: 'metrics.k8s.io/v1beta1',
        items: nodes.map((n) => ({ metadata: { name: n.metadata.name }, timestamp: new Date().toISOString(), window: '10s', usage: usage[n.metadata.name] })),
      });
    }
    if (p === '/api/v1/persistentvolumes')
      return send(
        res,
        200,
        list('PersistentVolumeList', 'v1', [
          { metadata: { name: 'pv-1' }, spec: { capacity: { storage: '50Gi' } } },
          { metadata: { name: 'pv-2' }, spec: { capacity: { storage: '10Gi' } } },
        ]),
      );
    if (p === '/api/v1/persistentvolumeclaims')
      return send(res, 200, list('PersistentVolumeClaimList', 'v1', [{ metadata: { name: 'data', namespace: 'default' } }]));
    if (p === '/api/v1/services') return send(res, 200, list('ServiceList', 'v1', [{ metadata: { name: 'kubernetes', namespace: 'default' } }]));
    if (p === '/apis/networking.k8s.io/v1/networkpolicies')
      return send(res, 200, list('NetworkPolicyList', 'networking.k8s.io/v1', [{ metadata: { name: 'deny-all', namespace: 'default' } }]));
    if (p === '/apis/networking.k8s.io/v1/ingresses') return send(res, 200, list('IngressList', 'networking.k8s.io/v1', []));
    send(res, 404, status(404, 'NotFound', `the server could not find the requested resource (${method} ${p})`));
  }

  const withVersion = (obj: DeploymentObject) => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(resourceVersion++) } });
  const list = (kind: string, apiVersion: string, items: unknown[]) => ({ kind, apiVersion, metadata: { resourceVersion: String(resourceVersion) }, items });
  function pod(name: string, namespace: string, d: DeploymentObject) {
    return {
      metadata: { name, namespace, labels: d.spec.template.metadata?.labels ?? {} },
      spec: { nodeName: 'node-a', containers: d.spec.template.spec.containers },
      status: { phase: 'Running' },
    };
  }
  function node(name: string, ready: boolean, instanceType: string, cpu: string, memory: string, controlPlane: boolean) {
    return {
      metadata: {
        name,
        creationTimestamp: created,
        labels: { 'node.kubernetes.io/instance-type': instanceType, ...(controlPlane ? { 'node-role.kubernetes.io/control-plane': '' } : {}) },
      },
      status: {
        capacity: { cpu, memory, 'ephemeral-storage': '100Gi' },
        allocatable: { cpu, memory },
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
        nodeInfo: {
          kubeletVersion: 'v1.31.2',
          containerRuntimeVersion: 'containerd://1.7.22',
          osImage: 'Ubuntu 24.04.1 LTS',
          kernelVersion: '6.8.0-45-generic',
        },
      },
    };
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = `${opts.dir}/kubeconfig`;
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: fake',
      '  cluster:',
      `    server: ${url}`,
      '    insecure-skip-tls-verify: true',
      'contexts:',
      '- name: fake',
      '  context:',
      '    cluster: fake',
      '    user: tester',
      'current-context: fake',
      'users:',
      '- name: tester',
      '  user:',
      '    token: test-token',
      '',
    ].join('\n'),
  );

  return {
    url,
    kubeconfig,
    step,
    settle(max = 100) {
      for (let i = 0; i < max; i++) step();
    },
    deployment: (ns, name) => deployments.get(key(ns, name))?.obj,
    setUsage: (name, u) => void (usage[name] = u),
    replicaSets: (ns) => [...replicaSets.values()].filter((rs) => rs.metadata.namespace === ns),
    print(ns, name, message) {
      const d = deployments.get(key(ns, name));
      if (d) for (const p of podsOf(d)) append(ns, p, message);
    },
    requests,
    async close() {
      for (const set of followers.values()) for (const res of set) res.end();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const strategyOf = (obj: DeploymentObject) => (obj.spec.strategy?.type === 'Recreate' ? 'recreate' : 'rolling-update') as 'recreate' | 'rolling-update';

function send(res: http.ServerResponse, code: number, body: unknown) {
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: code < 400 ? 'Success' : 'Failure', message, reason, code };
}

function matches(labels: Record<string, string>, selector: string | null): boolean {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return labels[k!] === v;
  });
}

const CORE_RESOURCES = [
  ['pods', 'Pod', true, ['po']],
  ['namespaces', 'Namespace', false, ['ns']],
  ['nodes', 'Node', false, ['no']],
  ['services', 'Service', true, ['svc']],
  ['persistentvolumes', 'PersistentVolume', false, ['pv']],
  ['persistentvolumeclaims', 'PersistentVolumeClaim', true, ['pvc']],
] as const;

const GROUPS = [
  {
    name: 'apps',
    version: 'v1',
    resources: [
      ['deployments', 'Deployment', true, ['deploy']],
      ['replicasets', 'ReplicaSet', true, ['rs']],
    ] as const,
  },
  {
    name: 'networking.k8s.io',
    version: 'v1',
    resources: [
      ['networkpolicies', 'NetworkPolicy', true, ['netpol']],
      ['ingresses', 'Ingress', true, ['ing']],
    ] as const,
  },
  { name: 'rbac.authorization.k8s.io', version: 'v1', resources: [['roles', 'Role', true, []]] as const },
  { name: 'metrics.k8s.io', version: 'v1beta1', resources: [['nodes', 'NodeMetrics', false, []]] as const },
];

function group(g: (typeof GROUPS)[number]) {
  const v = { groupVersion: `${g.name}/${g.version}`, version: g.version };
  return { name: g.name, versions: [v], preferredVersion: v };
}

function resourceList(groupVersion: string, resources: readonly (readonly [string, string, boolean, readonly string[]])[]) {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion,
    resources: resources.map(([name, kind, namespaced, shortNames]) => ({
      name,
      singularName: kind.toLowerCase(),
      namespaced,
      kind,
      shortNames: [...shortNames],
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    })),
  };
}
