import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { verifySignature } from '../kernel/webhooks';
import type { InfraError } from './support/answers';
import { startFakeKubernetes, type FakeKubernetes } from './support/fake-kubernetes';
import { localWebhooksEnv } from './support/fixtures';
import type { Answer as DocumentedAnswer } from './support/openapi-client';
import type { operations } from './support/openapi-types';
import { startTestPlatform, type Answer, type TestPlatform } from './support/platform';
import { sleep, until } from './support/until';
import { webhookReceiver, type ReceivedRequest } from './support/webhook-receiver';

/**
 * CLUSTER_DRIVER=kubernetes against a fake Kubernetes API server on loopback: deployments
 * created and replaced through @kubernetes/client-node, rollout status by kubectl's rules —
 * kubectl itself, pointed at the same server, must say the same sentence at every frozen step —,
 * history and undo by kubectl's logic, pod logs (followed too), nodes, metrics and the cluster.
 */

const API = '/infra/api/v1';

/** The 2xx answer the API description documents for an infra operation. */
type Ok<K extends keyof operations> = DocumentedAnswer<operations[K]>;
type Project = Ok<'infraGetProjectsById'>;
type Service = Ok<'infraGetServicesById'>;
type Deployment = Ok<'infraGetDeploymentsById'>;
type Deployments = Ok<'infraGetServicesByIdDeployments'>;
type Alerts = Ok<'infraGetInfrastructureAlerts'>;
/** A registration as created: its secret is shown this once. */
type Registration = Ok<'infraPostWebhooks'> & { secret: string };
/** A log line (the description leaves its fields open). */
interface LogLine {
  timestamp: string;
  level: string;
  message: string;
  pod: string;
}
/** The body of an alert.triggered delivery, with the fields the test reads. */
interface AlertEvent {
  event: string;
  data: { rule: string; severity: string; utilizationPercent: number; thresholdPercent: number };
}
const run = promisify(execFile);
let dir: string;
let k8s: FakeKubernetes;
let p: TestPlatform;
let token: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'fake-k8s-'));
  k8s = await startFakeKubernetes({ dir, deadlineSteps: 3, notReadyNode: true });
  p = await startTestPlatform({
    CLUSTER_DRIVER: 'kubernetes',
    KUBECONFIG: k8s.kubeconfig,
    INFRA_ADMIN_EMAIL: 'ops@infra.test',
    INFRA_ADMIN_PASSWORD: 'ops-password-1',
    INFRA_WATCH_INTERVAL_MS: '20',
    INFRA_ALERT_THRESHOLD_PERCENT: '50',
    ...localWebhooksEnv,
  });
  token = (await p.rest<Ok<'infraPostAuthLogin'>>('POST', `${API}/auth/login`, { key: null, body: { email: 'ops@infra.test', password: 'ops-password-1' } }))
    .body.token;
});
afterAll(async () => {
  await p?.stop();
  await k8s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = <T = InfraError>(method: string, p2: string, body?: unknown): Promise<Answer<T>> => p.rest<T>(method, API + p2, { key: token, body });

/** kubectl's own answer about the fake cluster (stdout, or stderr when it fails). */
async function kubectl(...args: string[]): Promise<string> {
  try {
    const { stdout } = await run('kubectl', ['--kubeconfig', k8s.kubeconfig, ...args], { timeout: 20_000 });
    return stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; code?: unknown };
    if (e.code === 'ENOENT') throw new Error('kubectl is not installed (Debian package kubernetes-client; .ci/run installs it)');
    return String(e.stderr ?? '').trim();
  }
}

/**
 * At each frozen state of the rollout the platform's message (its watcher reads the same API) and
 * kubectl's `rollout status --watch=false` agree; then one controller step. Returns the sentences.
 */
async function agreeUntilDone(ns: string, deploymentId: string): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < 30; i++) {
    const theirs = (await kubectl('rollout', 'status', 'deployment/api', '-n', ns, '--watch=false')).replace(/^error: /, '');
    await until(`the platform to say "${theirs}"`, async () => (await call<Deployment>('GET', `/deployments/${deploymentId}`)).body.message === theirs);
    seen.push(theirs);
    const d = (await call<Deployment>('GET', `/deployments/${deploymentId}`)).body;
    if (d.status !== 'in-progress') return seen;
    k8s.step();
  }
  throw new Error(`the rollout did not finish: ${seen.join(' | ')}`);
}

describe('deployments on Kubernetes', () => {
  let project: { id: string; slug: string };
  let service: { id: string };

  test('create: a Deployment in the project namespace; kubectl and the platform agree on every rollout state', async () => {
    project = (await call<Project>('POST', '/projects', { name: 'Storefront' })).body;
    assert.equal(project.slug, 'storefront');
    const res = await call<Service>('POST', '/services', { project: project.id, name: 'api', image: 'registry.example.com/store/api:1.0.0', replicas: 3 });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    service = res.body;
    const obj = k8s.deployment('storefront', 'api')!;
    assert.equal(obj.spec.template.spec.containers[0].image, 'registry.example.com/store/api:1.0.0');
    assert.equal(obj.spec.replicas, 3);
    assert.equal(obj.spec.strategy.type, 'RollingUpdate');
    assert.equal(obj.metadata.labels['platform/service-id'], service.id);
    const dep = (await call<Deployments>('GET', `/services/${service.id}/deployments`)).body.data[0];
    const sentences = await agreeUntilDone('storefront', dep.deploymentId);
    assert.equal(sentences[0], 'Waiting for deployment spec update to be observed...');
    assert.ok(
      sentences.some((s) => /out of 3 new replicas have been updated/.test(s)),
      sentences.join(' | '),
    );
    assert.equal(sentences.at(-1), 'deployment "api" successfully rolled out');
    const s = (await call<Service>('GET', `/services/${service.id}`)).body;
    assert.deepEqual({ status: s.status, replicas: s.replicas }, { status: 'running', replicas: { desired: 3, ready: 3, available: 3 } });
  });

  test("deploy a new image with recreate; history and undo by kubectl's logic", async () => {
    const res = await call<Deployment>('POST', `/services/${service.id}/deploy`, { image: 'registry.example.com/store/api:1.1.0', strategy: 'recreate' });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(k8s.deployment('storefront', 'api')!.spec.strategy.type, 'Recreate');
    const sentences = await agreeUntilDone('storefront', res.body.deploymentId);
    assert.equal(sentences.at(-1), 'deployment "api" successfully rolled out');
    const history = await kubectl('rollout', 'history', 'deployment/api', '-n', 'storefront');
    assert.match(history, /REVISION/);
    assert.deepEqual(
      history
        .split('\n')
        .map((l) => l.trim().split(/\s+/)[0])
        .filter((w) => /^\d+$/.test(w!)),
      ['1', '2'],
    );

    const back = await call<Deployment>('POST', `/services/${service.id}/rollback`, {});
    assert.equal(back.status, 202, JSON.stringify(back.body));
    assert.equal(back.body.targetImage, 'registry.example.com/store/api:1.0.0');
    const obj = k8s.deployment('storefront', 'api')!;
    assert.equal(obj.spec.template.spec.containers[0].image, 'registry.example.com/store/api:1.0.0');
    assert.equal(obj.spec.template.metadata.labels['pod-template-hash'], undefined, 'undo drops the pod-template-hash label');
    k8s.settle();
    const done = await until('the rollback', async () => {
      const d = (await call<Deployment>('GET', `/deployments/${back.body.deploymentId}`)).body;
      return d.status === 'success' ? d : null;
    });
    assert.equal(done.revision, '3', 'the reused ReplicaSet takes the newest revision, as on Kubernetes');
    assert.deepEqual(
      k8s
        .replicaSets('storefront')
        .map((rs) => rs.metadata.annotations['deployment.kubernetes.io/revision'])
        .sort(),
      ['2', '3'],
    );
    const unknown = await call('POST', `/services/${service.id}/rollback`, { revision: '7' });
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body.details.available, ['2', '3']);
  });

  test('a rollout past its progress deadline fails, as kubectl reports it', async () => {
    const res = await call<Deployment>('POST', `/services/${service.id}/deploy`, { image: 'registry.example.com/store/api:fail-pull' });
    k8s.settle(5);
    const failed = await until('the failure', async () => {
      const d = (await call<Deployment>('GET', `/deployments/${res.body.deploymentId}`)).body;
      return d.status === 'failed' ? d : null;
    });
    assert.equal(failed.message, 'deployment "api" exceeded its progress deadline');
    const theirs = await kubectl('rollout', 'status', 'deployment/api', '-n', 'storefront', '--watch=false');
    assert.equal(theirs.split('\n').at(-1), 'error: deployment "api" exceeded its progress deadline', JSON.stringify(theirs));
    const back = await call<Deployment>('POST', `/services/${service.id}/rollback`, {});
    k8s.settle();
    await until('repaired', async () => (await call<Deployment>('GET', `/deployments/${back.body.deploymentId}`)).body.status === 'success');
  });

  test("logs: the pods' lines with their pod; follow=true streams what the containers print next", async () => {
    k8s.print('storefront', 'api', 'GET /health 200');
    const logs = (await call<{ logs: LogLine[] }>('GET', `/services/${service.id}/logs?lines=50`)).body.logs;
    assert.ok(
      logs.some((l: { message: unknown; pod: string; level: unknown }) => l.message === 'GET /health 200' && /^api-/.test(l.pod) && l.level === 'info'),
      JSON.stringify(logs),
    );
    const abort = new AbortController();
    const res = await fetch(`${p.url}${API}/services/${service.id}/logs?lines=1&follow=true`, {
      headers: { authorization: `Bearer ${token}` },
      signal: abort.signal,
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    let text = '';
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += Buffer.from(value).toString('utf8');
      }
    })().catch(() => undefined);
    await sleep(200);
    k8s.print('storefront', 'api', 'ERROR payment provider timed out');
    await until('the followed line', async () => text.includes('payment provider timed out'));
    abort.abort();
    await reading;
    const line = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LogLine)
      .find((l) => l.message.includes('payment provider'));
    assert.equal(line!.level, 'error');
  });

  test('delete: the Deployment goes too', async () => {
    const s = (await call<Service>('POST', '/services', { project: project.id, name: 'gone', image: 'gone:1' })).body;
    assert.ok(k8s.deployment('storefront', 'gone'));
    k8s.settle();
    await until('running', async () => (await call<Service>('GET', `/services/${s.id}`)).body.status === 'running');
    assert.equal((await call('DELETE', `/services/${s.id}`)).status, 200);
    assert.equal(k8s.deployment('storefront', 'gone'), undefined);
  });
});

describe('a deploy during a rollout on Kubernetes', () => {
  test('supersedes it: the Deployment follows the newest image, kubectl and the platform agree it rolls out', async () => {
    const project = (await call<Project>('POST', '/projects', { name: 'Checkout' })).body;
    const created = await call<Service>('POST', '/services', {
      project: project.id,
      name: 'api',
      image: 'registry.example.com/checkout/api:1.0.0',
      replicas: 3,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const first = (await call<Deployments>('GET', `/services/${created.body.id}/deployments`)).body.data[0];
    assert.equal(first.status, 'in-progress');
    k8s.step();
    const res = await call<Deployment>('POST', `/services/${created.body.id}/deploy`, { image: 'registry.example.com/checkout/api:2.0.0' });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal((await call<Deployment>('GET', `/deployments/${first.deploymentId}`)).body.status, 'superseded');
    assert.equal(k8s.deployment('checkout', 'api')!.spec.template.spec.containers[0].image, 'registry.example.com/checkout/api:2.0.0');
    const sentences = await agreeUntilDone('checkout', res.body.deploymentId);
    assert.equal(sentences.at(-1), 'deployment "api" successfully rolled out');
    const done = (await call<Deployment>('GET', `/deployments/${res.body.deploymentId}`)).body;
    assert.deepEqual({ status: done.status, revision: done.revision }, { status: 'success', revision: '2' });
    assert.equal((await call<Deployment>('GET', `/deployments/${first.deploymentId}`)).body.status, 'superseded', 'the superseded rollout stays superseded');
    const s = (await call<Service>('GET', `/services/${created.body.id}`)).body;
    assert.deepEqual({ image: s.image, status: s.status }, { image: 'registry.example.com/checkout/api:2.0.0', status: 'running' });
  });
});

describe('cluster, nodes and metrics from the API', () => {
  test('nodes: every field from the Node objects; one not ready', async () => {
    const nodes = (await call<Ok<'infraGetInfrastructureNodes'>>('GET', '/infrastructure/nodes')).body.data;
    assert.deepEqual(
      nodes.map((n: { name: string; status: string; type: string; instanceType: string; kubeletVersion: string; capacity: { cpu: string } }) => [
        n.name,
        n.status,
        n.type,
        n.instanceType,
        n.kubeletVersion,
        n.capacity.cpu,
      ]),
      [
        ['node-a', 'Ready', 'control-plane', 'm5.large', 'v1.31.2', '2'],
        ['node-b', 'NotReady', 'worker', 'm5.xlarge', 'v1.31.2', '4'],
      ],
    );
    assert.equal(nodes[0].containerRuntimeVersion, 'containerd://1.7.22');
    assert.equal(nodes[0].osImage, 'Ubuntu 24.04.1 LTS');
    assert.equal(nodes[0].createdAt, '2026-01-01T00:00:00.000Z');
  });

  test('metrics: usage from metrics.k8s.io over allocatable; disk from the kubelet summaries', async () => {
    const m = (await call<Ok<'infraGetInfrastructureMetrics'>>('GET', '/infrastructure/metrics')).body;
    assert.deepEqual(m.cluster.cpu, { used: 1.75, allocatable: 6, utilizationPercent: 29.2 });
    const memAlloc = (8039404 + 16078808) * 1024;
    const memUsed = 2097152 * 1024 + 4 * 1024 ** 3;
    assert.deepEqual(m.cluster.memory, { used: memUsed, allocatable: memAlloc, utilizationPercent: Math.round((memUsed / memAlloc) * 1000) / 10 });
    assert.deepEqual(m.cluster.disk, { used: 40 * 1024 ** 3, allocatable: 200 * 1024 ** 3, utilizationPercent: 20 });
  });

  test('cluster: version, node counts, storage, networking, security; degraded with a node down, and an alert for it', async () => {
    const c = (await call<Ok<'infraGetInfrastructureCluster'>>('GET', '/infrastructure/cluster')).body;
    assert.deepEqual(
      { name: c.name, version: c.version, status: c.status, nodes: c.nodes, storage: c.storage, networking: c.networking },
      {
        name: 'fake',
        version: 'v1.31.2',
        status: 'degraded',
        nodes: { total: 2, ready: 1, notReady: 1 },
        storage: { persistentVolumes: 2, persistentVolumeClaims: 1, totalCapacity: '60.0Gi' },
        networking: { networkPolicies: 1, serviceCount: 1, ingressCount: 0 },
      },
    );
    assert.deepEqual(c.security, { podsecuritystandards: 'baseline', rbacEnabled: true, networkPoliciesEnabled: true, encryptionAtRest: false });
    assert.equal(c.compute.cpuAllocatable, '6');
    const alert = await until('node_not_ready', async () =>
      (await call<Alerts>('GET', '/infrastructure/alerts?open=true')).body.data.find((a: { rule: unknown }) => a.rule === 'node_not_ready'),
    );
    assert.equal(alert.subject, 'node-b');
  });
});

describe('alert.triggered', () => {
  test('CPU over the threshold raises cpu_high once, delivered signed; it resolves when usage falls', async () => {
    const receiver = await webhookReceiver().start();
    const received = receiver.requests as (ReceivedRequest & { body: AlertEvent })[];
    try {
      const url = `${receiver.url}/alerts`;
      const reg = (await call<Registration>('POST', '/webhooks', { url, events: ['alert.triggered'] })).body;
      const open = async () =>
        (await call<Alerts>('GET', '/infrastructure/alerts?open=true')).body.data.filter((a: { rule: unknown }) => a.rule === 'cpu_high');
      assert.deepEqual(await open(), [], 'at 29.2% nothing is raised');
      k8s.setUsage('node-b', { cpu: '3', memory: '4Gi' }); // 3.5 of 6 cores: 58.3%
      const delivered = await until('the alert delivery', async () => received.find((r) => r.body.data.rule === 'cpu_high')).then((r) => ({
        ...r,
        signature: String(r.signature),
      }));
      assert.ok(verifySignature(reg.secret, delivered.raw, delivered.signature));
      assert.deepEqual(
        {
          event: delivered.body.event,
          severity: delivered.body.data.severity,
          utilizationPercent: delivered.body.data.utilizationPercent,
          thresholdPercent: delivered.body.data.thresholdPercent,
        },
        { event: 'alert.triggered', severity: 'warning', utilizationPercent: 58.3, thresholdPercent: 50 },
      );
      assert.equal((await open()).length, 1);
      await sleep(700); // two more checks: still one alert, one delivery
      assert.equal(received.filter((r) => r.body.data.rule === 'cpu_high').length, 1);
      k8s.setUsage('node-b', { cpu: '1250000000n', memory: '4Gi' });
      await until('resolved', async () => (await open()).length === 0);
    } finally {
      await receiver.close();
    }
  });
});
