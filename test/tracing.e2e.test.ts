import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from './support/database';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import { freePort, waitHealthy } from './support/net';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';
import { startSplitTopology, type SplitTopology } from './support/split';
import { until } from './support/until';
import { chain, localWebhooksEnv } from './support/fixtures';
import { webhookReceiver, type WebhookReceiver } from './support/webhook-receiver';

/**
 * Traces end to end, exported over OTLP/HTTP to a local collector: an inbound traceparent is
 * continued by the gateway, its database calls, the task's job in the worker process and the
 * model call (which carries the trace on to the model server); JSON and protobuf encodings; log
 * lines carry the trace id; and without an endpoint nothing is traced at all.
 */

const MAIN = path.join(__dirname, '..', 'main.js');
const TASK = {
  agentId: 'postmortem-analyst',
  taskType: 'write-postmortem',
  context: { incident: 'API outage 2026-11-20', timeline: ['09:00 alert', '09:20 rollback'], severity: 'sev2' },
  execution: { mode: 'sync' },
};
const TRACING = { OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_SERVICE_NAME: 'platform-under-test' };

/** A fresh W3C trace context, as a calling service would send it. */
function caller() {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-01` };
}

async function runTask(baseUrl: string, key: string, traceparent: string, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${baseUrl}/v1/control-plane/agents/execute`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', traceparent },
    body: JSON.stringify({ ...TASK, ...extra }),
  });
  const body = (await res.json()) as any;
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.data.status, 'completed', JSON.stringify(body));
  return body.data;
}

const show = (spans: ReceivedSpan[]) => JSON.stringify(spans.map((s) => `${s.name} ${s.spanId}<-${s.parentSpanId}`));

/** What every exporting topology must show for one traced task request. */
async function assertTaskTrace(receiver: OtlpReceiver, fake: FakeLlm, traceId: string, parentId: string, encoding: ReceivedSpan['encoding']) {
  // The entry span continues the caller's trace: same trace id, the caller's span as parent.
  const entry = await until('the server span of the request', () =>
    receiver.trace(traceId).find((s) => s.kind === SPAN_KIND.server && s.parentSpanId === parentId),
  );
  assert.equal(entry.attributes['http.request.method'] ?? entry.attributes['http.method'], 'POST');
  assert.equal(entry.service, 'platform-under-test');
  assert.equal(entry.encoding, encoding);
  const descends = (s: ReceivedSpan, from: ReceivedSpan) => receiver.ancestors(s).includes(from);

  // The request's statements are its descendants, named by the statement, never with its values.
  const pg = await until('a PostgreSQL span under the request', () =>
    receiver.trace(traceId).find((s) => s.attributes['db.system.name'] === 'postgresql' && descends(s, entry)),
  );
  assert.ok(pg.name.startsWith('pg.query'), pg.name);
  for (const s of receiver.trace(traceId).filter((x) => x.attributes['db.system.name'] === 'postgresql')) {
    assert.ok(!Object.keys(s.attributes).some((k) => k.startsWith('db.query.parameter') || k === 'db.postgresql.values'), JSON.stringify(s.attributes));
  }

  // The task's job runs in a consumer span of the same trace, under the request that enqueued it.
  // Each process exports on its own schedule: the chain up to the request is complete once every link has arrived.
  const job = await until('the job span of the task, under the request', () =>
    receiver.trace(traceId).find((s) => s.name === 'control-plane.task process' && s.kind === SPAN_KIND.consumer && descends(s, entry)),
  );
  assert.equal(job.attributes['job.attempt'], 1);
  assert.equal(job.attributes['messaging.operation.type'], 'process');

  // The model call: a GenAI client span under the job, its cost at the price table's rate.
  const chat = await until('the model call span, under the job', () =>
    receiver.trace(traceId).find((s) => s.attributes['gen_ai.operation.name'] === 'chat' && s.kind === SPAN_KIND.client && descends(s, job)),
  );
  assert.equal(chat.name, 'chat default');
  assert.equal(chat.attributes['gen_ai.request.model'], 'default');
  assert.equal(chat.attributes['gen_ai.provider.name'], 'openai');
  const input = chat.attributes['gen_ai.usage.input_tokens'] as number;
  const output = chat.attributes['gen_ai.usage.output_tokens'] as number;
  assert.ok(input > 0 && output > 0, JSON.stringify(chat.attributes));
  assert.ok(Math.abs((chat.attributes['platform.llm.cost_usd'] as number) - ((input + output) / 1000) * 0.002) < 1e-12, JSON.stringify(chat.attributes));

  // The model server was called with the trace: the outbound request is a descendant of the chat span.
  const sent = fake.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => String(r.headers.traceparent ?? ''));
  const mine = sent.find((tp) => tp.split('-')[1] === traceId);
  assert.ok(mine, `traceparents sent to the model: ${JSON.stringify(sent)}`);
  await until('the outbound span of the model call, under it', () => receiver.trace(traceId).find((s) => s.spanId === mine.split('-')[2] && descends(s, chat)));
}

describe('OTLP/HTTP JSON across processes (gateway, control-plane subgraph, worker)', () => {
  let receiver: OtlpReceiver;
  let fake: FakeLlm;
  let split: SplitTopology;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    fake = await startFakeLlm({ models: ['default'] });
    split = await startSplitTopology({
      ...TRACING,
      LLM_BASE_URL: fake.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
  });
  afterAll(async () => {
    await split?.stop();
    await fake?.close();
    await receiver?.close();
  });

  test('a REST call with a traceparent: gateway, database, the worker’s job and the model call in one trace', async () => {
    const { traceId, parentId, traceparent } = caller();
    await runTask(split.gatewayUrl, split.adminKey, traceparent);
    await assertTaskTrace(receiver, fake, traceId, parentId, 'json');
    // Three processes took part: the gateway, the subgraph it called, and the worker.
    const servers = receiver.trace(traceId).filter((s) => s.kind === SPAN_KIND.server);
    assert.ok(servers.length >= 2, show(servers));
    assert.ok(
      receiver.requests.every((r) => r.path === '/v1/traces' && r.contentType.startsWith('application/json')),
      JSON.stringify(receiver.requests),
    );
  });
});

/** The platform as one process (`all`), its stderr kept: the JSON log lines. */
async function startPlatform(env: Record<string, string>) {
  const db: TestDatabase = await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-tracing-'));
  const adminKey = `cp_live_sk_${randomBytes(24).toString('base64url')}`;
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      BOOTSTRAP_API_KEY: adminKey,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exit;
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitHealthy(url, 60_000);
  } catch (err) {
    await stop();
    throw new Error(`${String(err)}\n${stderr}`);
  }
  const logLines = () =>
    stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { url, adminKey, logLines, stop, exit };
}

describe('OTLP/HTTP protobuf from one process, and the trace id in its logs', () => {
  let receiver: OtlpReceiver;
  let fake: FakeLlm;
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let hooks: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    fake = await startFakeLlm({ models: ['default'] });
    hooks = await webhookReceiver().start();
    platform = await startPlatform({
      ...TRACING,
      ...localWebhooksEnv,
      LLM_BASE_URL: fake.url,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    });
  });
  afterAll(async () => {
    await platform?.stop();
    await fake?.close();
    await receiver?.close();
    await hooks?.close();
  });

  test('the same chain decoded from protobuf; a warning logged during the request carries its trace id', async () => {
    const { traceId, parentId, traceparent } = caller();
    // One failed model answer (retried by the client) makes the provider log a warning inside the trace.
    fake.fail(1, 503);
    await runTask(platform.url, platform.adminKey, traceparent, { webhook: { url: `${hooks.url}/done` } });
    await assertTaskTrace(receiver, fake, traceId, parentId, 'protobuf');
    const warning = platform.logLines().find((l) => l.msg === 'llm endpoint answered an error');
    assert.ok(warning, JSON.stringify(platform.logLines()));
    assert.equal(warning.trace_id, traceId);
    assert.ok(receiver.trace(traceId).some((s) => s.spanId === warning.span_id));
    assert.ok(
      receiver.requests.every((r) => r.contentType === 'application/x-protobuf'),
      JSON.stringify(receiver.requests),
    );

    // The task's webhook: an attempt span with the destination and its answer, whose POST carried the trace on.
    const delivered = await until('the webhook delivery', () => hooks.requests.find((r) => String(r.headers.traceparent ?? '').split('-')[1] === traceId));
    const attempt = await until('the webhook attempt span', () => receiver.trace(traceId).find((s) => s.name === 'webhook attempt'));
    assert.equal(attempt.attributes['server.address'], '127.0.0.1');
    assert.equal(attempt.attributes['server.port'], Number(new URL(hooks.url).port));
    assert.equal(attempt.attributes['http.response.status_code'], 200);
    assert.equal(attempt.attributes['webhook.attempt'], 1);
    assert.equal(attempt.attributes['webhook.delivery_id'], delivered.delivery);
    const post = await until('the webhook POST span', () =>
      receiver.trace(traceId).find((s) => s.spanId === String(delivered.headers.traceparent).split('-')[2]),
    );
    assert.ok(receiver.ancestors(post).includes(attempt), show(receiver.trace(traceId)));
  });

  test('a workflow execution: the job continues the request’s trace, with a span per node run', async () => {
    const { traceId, parentId, traceparent } = caller();
    const headers = { authorization: `Bearer ${platform.adminKey}`, 'content-type': 'application/json' };
    const def = chain([
      { name: 'Start', type: 'engine.manualTrigger', parameters: {}, position: [0, 0] },
      { name: 'Greet', type: 'engine.set', parameters: { values: { greeting: 'Hello {{ $json.name }}' } }, position: [200, 0] },
    ]);
    const created = await fetch(`${platform.url}/v1/engine/workflows`, { method: 'POST', headers, body: JSON.stringify({ name: 'Traced', ...def }) });
    const workflowId = ((await created.json()) as any).data.workflowId as string;
    const res = await fetch(`${platform.url}/v1/engine/workflows/${workflowId}/execute`, {
      method: 'POST',
      headers: { ...headers, traceparent },
      body: JSON.stringify({ data: { name: 'Ada' } }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    const entry = await until('the server span of the request', () =>
      receiver.trace(traceId).find((s) => s.kind === SPAN_KIND.server && s.parentSpanId === parentId),
    );
    const greet = await until('the span of the Greet node run', () => receiver.trace(traceId).find((s) => s.attributes['workflow.node.name'] === 'Greet'));
    assert.equal(greet.name, 'workflow node engine.set');
    assert.equal(greet.attributes['workflow.node.status'], 'success');
    assert.equal(greet.attributes['workflow.node.tries'], 1);
    // The node runs under the execution's job span, which ends (and is exported) after them.
    const job = await until('the execution job span above the node run', () =>
      receiver.ancestors(greet).find((s) => s.kind === SPAN_KIND.consumer && receiver.ancestors(s).includes(entry)),
    );
    assert.match(job.name, / process$/);
  });

  test('spans still buffered when the process drains are exported before it exits', async () => {
    const { traceId, traceparent } = caller();
    const res = await fetch(`${platform.url}/health`, { headers: { traceparent } });
    assert.equal(res.status, 200);
    await platform.stop();
    assert.equal(await platform.exit, 0);
    assert.ok(receiver.trace(traceId).some((s) => s.kind === SPAN_KIND.server));
  });
});

describe('without an endpoint', () => {
  let fake: FakeLlm;
  let platform: Awaited<ReturnType<typeof startPlatform>>;

  beforeAll(async () => {
    fake = await startFakeLlm({ models: ['default'] });
    // Every tracing variable but an endpoint: the SDK is not even loaded.
    platform = await startPlatform({ ...TRACING, LLM_BASE_URL: fake.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
  });
  afterAll(async () => {
    await platform?.stop();
    await fake?.close();
  });

  test('nothing is traced: no traceparent goes out and no log line carries a trace id', async () => {
    const { traceparent } = caller();
    fake.fail(1, 503);
    await runTask(platform.url, platform.adminKey, traceparent);
    const chat = fake.requests.filter((r) => r.path.endsWith('/chat/completions'));
    assert.ok(chat.length >= 2);
    assert.ok(
      chat.every((r) => r.headers.traceparent === undefined),
      JSON.stringify(chat.map((r) => r.headers)),
    );
    const warning = platform.logLines().find((l) => l.msg === 'llm endpoint answered an error');
    assert.ok(warning, JSON.stringify(platform.logLines()));
    assert.ok(platform.logLines().every((l) => !('trace_id' in l)));
  });
});
