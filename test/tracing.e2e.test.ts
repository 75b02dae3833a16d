import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import { answerOf, jsonOf } from './support/json';
import { freePort, waitHealthy } from './support/net';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';
import { startPlatformProcess as startPlatform } from './support/platform-process';
import { startSplitTopology, type SplitTopology } from './support/split';
import { until } from './support/until';
import { chain, localWebhooksEnv } from './support/fixtures';
import { subscribe, wsClient } from './support/subscribe';
import { webhookReceiver, type WebhookReceiver } from './support/webhook-receiver';
import type { Gql, V1 } from './support/answers';
import type { JsonAnswer } from './support/platform';

/**
 * Traces end to end, exported over OTLP/HTTP to a local collector: an inbound traceparent is
 * continued by the gateway (a span per GraphQL operation and per subgraph fetch), its database
 * calls, the task's job in the worker process, the agent's run and the model call (which carries
 * the trace on to the model server); orchestration stages and rollout steps; JSON and protobuf
 * encodings; log lines and error answers carry the trace id; tasks, executions and orchestrations
 * keep theirs for the dashboard's trace links; and without an endpoint nothing is traced at all.
 */

const TASK = {
  agentId: 'postmortem-analyst',
  taskType: 'write-postmortem',
  context: { incident: 'API outage 2026-11-20', timeline: ['09:00 alert', '09:20 rollback'], severity: 'sev2' },
  execution: { mode: 'sync' },
};
const TRACING = { OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_SERVICE_NAME: 'platform-under-test' };
const TRACES_UI_URL = 'http://traces.example/trace/{traceId}';

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
  const { status, body } = await answerOf<V1<{ status: string; taskId: string }>>(res);
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.data.status, 'completed', JSON.stringify(body));
  return body.data;
}

/** A request as a client sends it, with its own traceparent when given; the JSON answer. */
async function call<T = unknown>(baseUrl: string, method: string, path: string, o: { key?: string; body?: unknown; traceparent?: string } = {}) {
  const headers: Record<string, string> = {};
  if (o.key) headers.authorization = `Bearer ${o.key}`;
  if (o.traceparent) headers.traceparent = o.traceparent;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const text = await res.text();
  const answer: JsonAnswer<T> = { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  return answer;
}

const graphql = <T = Gql<unknown>>(baseUrl: string, key: string, query: string, traceparent?: string) =>
  call<T>(baseUrl, 'POST', '/graphql', { key, body: { query }, traceparent });

/** Where a trace id would be in an error's details. */
type Traced = { traceId?: unknown } | undefined;

/** An error answer of any surface, in the fields where each keeps its details (`error.details`, `details`, `errors[].extensions.details`). */
interface ErrorAnswer {
  error: { details?: Traced };
  details?: Traced;
  errors?: { extensions: { details?: Traced } }[];
}

/**
 * One error answer of each surface's envelope, with where its details are: the REST envelopes of
 * each service (v1, platform, links, feedback, infra; a path outside every surface) and GraphQL
 * errors, both a resolver's and one Apollo Server words (validation).
 */
const ERROR_ANSWERS: {
  name: string;
  send: (url: string, key: string, traceparent: string) => Promise<JsonAnswer<ErrorAnswer>>;
  /** Where the body keeps its details (a trace id among them, were it leaked). */
  details: (body: ErrorAnswer) => Traced;
}[] = [
  {
    name: 'v1 (an unknown task)',
    send: (url, key, tp) => call(url, 'GET', `/v1/control-plane/agents/tasks/${randomUUID()}`, { key, traceparent: tp }),
    details: (b) => b.error.details,
  },
  {
    name: 'platform',
    send: (url, key, tp) => call(url, 'GET', '/control-plane/api/v1/nothing-here', { key, traceparent: tp }),
    details: (b) => b.error.details,
  },
  { name: 'links', send: (url, key, tp) => call(url, 'GET', '/links/api/nothing-here', { key, traceparent: tp }), details: (b) => b.error.details },
  { name: 'feedback', send: (url, key, tp) => call(url, 'GET', '/feedback/api/v1/nothing-here', { key, traceparent: tp }), details: (b) => b.details },
  { name: 'infra (no credential)', send: (url, _key, tp) => call(url, 'GET', '/infra/api/v1/projects', { traceparent: tp }), details: (b) => b.details },
  { name: 'outside every surface', send: (url, key, tp) => call(url, 'GET', '/nothing-here', { key, traceparent: tp }), details: (b) => b.error.details },
  {
    name: 'GraphQL (a resolver’s error)',
    send: (url, key, tp) => graphql(url, key, `{ task(taskId: "${randomUUID()}") { taskId } }`, tp),
    details: (b) => b.errors?.[0].extensions.details,
  },
  { name: 'GraphQL (validation)', send: (url, key, tp) => graphql(url, key, '{ noSuchField }', tp), details: (b) => b.errors?.[0].extensions.details },
];

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

  // The agent's run: a GenAI invoke_agent span under the job.
  const agent = await until('the agent’s span, under the job', () =>
    receiver.trace(traceId).find((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent' && descends(s, job)),
  );
  assert.equal(agent.name, 'invoke_agent postmortem-analyst');
  assert.equal(agent.attributes['gen_ai.agent.id'], 'postmortem-analyst');
  assert.equal(agent.attributes['platform.task.type'], 'write-postmortem');

  // The model call: a GenAI client span under the agent's run, its cost at the price table's rate.
  const chat = await until('the model call span, under the agent’s run', () =>
    receiver.trace(traceId).find((s) => s.attributes['gen_ai.operation.name'] === 'chat' && s.kind === SPAN_KIND.client && descends(s, agent)),
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

/**
 * The GraphQL spans of one traced request: the HTTP server span (continuing the caller's), the
 * operation's span under it as the conventions name it, the subgraph fetch's client span under
 * that, and `below` (a statement, or a remote subgraph's server span) under the fetch.
 */
async function assertGraphQLChain(receiver: OtlpReceiver, traceId: string, parentId: string, operation: string, subgraph: string) {
  const entry = await until('the server span of the request', () =>
    receiver.trace(traceId).find((s) => s.kind === SPAN_KIND.server && s.parentSpanId === parentId),
  );
  const descends = (s: ReceivedSpan, from: ReceivedSpan) => receiver.ancestors(s).includes(from);
  const op = await until(`the span of ${operation}, under the request`, () => receiver.trace(traceId).find((s) => s.name === operation && descends(s, entry)));
  const [type, name] = operation.split(' ');
  assert.equal(op.kind, SPAN_KIND.internal);
  assert.equal(op.attributes['graphql.operation.type'], type);
  assert.equal(op.attributes['graphql.operation.name'], name);
  const fetched = await until(`the fetch from ${subgraph}, under the operation`, () =>
    receiver.trace(traceId).find((s) => s.name === `subgraph ${subgraph}` && descends(s, op)),
  );
  assert.equal(fetched.kind, SPAN_KIND.client);
  assert.equal(fetched.attributes['subgraph.name'], subgraph);
  return { entry, op, fetched, descends };
}

/** The parent chain of `span` passes through `links` in this order (nearest first). */
function assertChain(receiver: OtlpReceiver, span: ReceivedSpan, links: ReceivedSpan[]) {
  const chain = receiver.ancestors(span);
  const at = links.map((l) => chain.indexOf(l));
  assert.ok(
    at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1]!)),
    `${span.name}: ${show([span, ...chain])} should pass through ${links.map((l) => l.name).join(' <- ')}`,
  );
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

  test('GraphQL to a remote subgraph: the fetch span carries the trace to the subgraph’s process, whose statements are under it', async () => {
    const { traceId, parentId, traceparent } = caller();
    const res = await graphql(split.gatewayUrl, split.adminKey, 'query RecentTasks { tasks(limit: 2) { tasks { taskId } } }', traceparent);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { entry, op, fetched, descends } = await assertGraphQLChain(receiver, traceId, parentId, 'query RecentTasks', 'control-plane');
    // The subgraph's process continued the trace the fetch sent: its server span is under the fetch.
    const remote = await until('the remote subgraph’s server span, under the fetch', () =>
      receiver.trace(traceId).find((s) => s.kind === SPAN_KIND.server && s !== entry && descends(s, fetched)),
    );
    const sql = await until('a statement of the remote subgraph', () =>
      receiver.trace(traceId).find((s) => s.attributes['db.system.name'] === 'postgresql' && descends(s, remote)),
    );
    assertChain(receiver, sql, [remote, fetched, op, entry]);
  });
});

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
      TRACES_UI_URL,
      LOCAL_ROLLOUT_STEP_MS: '25',
      INFRA_WATCH_INTERVAL_MS: '20',
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
    const workflowId = (await jsonOf<{ data: { workflowId: string } }>(created)).data.workflowId;
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

  test('query values never leave in a span: an outbound call with a key in its query, an inbound request with one', async () => {
    const { traceId, traceparent } = caller();
    const headers = { authorization: `Bearer ${platform.adminKey}`, 'content-type': 'application/json' };
    const def = chain([
      { name: 'Start', type: 'engine.manualTrigger', parameters: {}, position: [0, 0] },
      { name: 'Fetch', type: 'engine.httpRequest', parameters: { url: `${hooks.url}/lookup?api_key=s3cret-out&page=2` }, position: [200, 0] },
    ]);
    const created = await fetch(`${platform.url}/v1/engine/workflows`, { method: 'POST', headers, body: JSON.stringify({ name: 'Query key', ...def }) });
    const workflowId = (await jsonOf<{ data: { workflowId: string } }>(created)).data.workflowId;
    const res = await fetch(`${platform.url}/v1/engine/workflows/${workflowId}/execute?token=s3cret-in`, {
      method: 'POST',
      headers: { ...headers, traceparent },
      body: JSON.stringify({ mode: 'sync', data: {} }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.ok(
      hooks.requests.some((r) => r.path === '/lookup?api_key=s3cret-out&page=2'),
      'the server got the key',
    );
    const outbound = await until('the client span of the node’s call', () =>
      receiver.trace(traceId).find((s) => s.kind === SPAN_KIND.client && String(s.attributes['url.full'] ?? '').includes('/lookup')),
    );
    assert.equal(outbound.attributes['url.full'], `${hooks.url}/lookup?api_key=REDACTED&page=REDACTED`);
    const inbound = await until('the server span of the request', () => receiver.trace(traceId).find((s) => s.kind === SPAN_KIND.server));
    assert.ok(JSON.stringify(inbound.attributes).includes('token=REDACTED'), JSON.stringify(inbound.attributes));
    for (const span of receiver.trace(traceId))
      assert.ok(!JSON.stringify(span).includes('s3cret'), `${span.name} holds the key: ${JSON.stringify(span.attributes)}`);
  });

  test('a REST read: HTTP server span, then the GraphQL operation, the subgraph fetch and its SQL, in one parent chain', async () => {
    const task = await runTask(platform.url, platform.adminKey, caller().traceparent);
    const { traceId, parentId, traceparent } = caller();
    const res = await call(platform.url, 'GET', `/v1/control-plane/agents/tasks/${task.taskId}`, { key: platform.adminKey, traceparent });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { entry, op, fetched, descends } = await assertGraphQLChain(receiver, traceId, parentId, 'query GetTask', 'control-plane');
    const sql = await until('a statement under the fetch', () =>
      receiver.trace(traceId).find((s) => s.attributes['db.system.name'] === 'postgresql' && descends(s, fetched)),
    );
    assertChain(receiver, sql, [fetched, op, entry]);
  });

  test('a subscription over graphql-ws: its operation’s span, with the query that authorizes it and its fetch under it', async () => {
    const task = await runTask(platform.url, platform.adminKey, caller().traceparent);
    const client = wsClient(platform.url, `Bearer ${platform.adminKey}`);
    try {
      const sub = subscribe<Gql<{ taskUpdated?: { status: string } }>>(
        client,
        'subscription WatchTask($id: ID!) { taskUpdated(taskId: $id) { taskId status } }',
        { id: task.taskId },
      );
      const first = await sub.until((e) => e.data?.taskUpdated?.status === 'completed');
      assert.ok(first, JSON.stringify(sub.events));
    } finally {
      await client.dispose();
    }
    const op = await until('the subscription’s span', () =>
      receiver.spans.find((s) => s.name === 'subscription WatchTask' && s.attributes['graphql.operation.type'] === 'subscription'),
    );
    assert.equal(op.attributes['graphql.operation.name'], 'WatchTask');
    await until('the authorizing fetch, under it', () =>
      receiver.trace(op.traceId).find((s) => s.name === 'subgraph control-plane' && receiver.ancestors(s).includes(op)),
    );
  });

  test('every error envelope and GraphQL error carries the trace id of its request in details.traceId', async () => {
    for (const answer of ERROR_ANSWERS) {
      const { traceId, traceparent } = caller();
      const res = await answer.send(platform.url, platform.adminKey, traceparent);
      assert.ok(res.status >= 400 || res.body.errors, `${answer.name}: ${JSON.stringify(res.body)}`);
      assert.equal(answer.details(res.body)?.traceId, traceId, `${answer.name}: ${JSON.stringify(res.body)}`);
    }
  });

  test('tasks, executions and orchestrations keep their trace id; the dashboard learns the trace viewer’s address', async () => {
    const config = await call(platform.url, 'GET', '/dashboard/config.json');
    assert.equal(config.status, 200);
    assert.deepEqual(config.body, { tracesUiUrl: TRACES_UI_URL });

    const { traceId, traceparent } = caller();
    const task = await runTask(platform.url, platform.adminKey, traceparent);
    const read = await graphql<Gql<{ task: { traceId: string | null } }>>(platform.url, platform.adminKey, `{ task(taskId: "${task.taskId}") { traceId } }`);
    assert.equal(read.body.data.task.traceId, traceId, JSON.stringify(read.body));

    const workflow = await call<V1<{ workflowId: string }>>(platform.url, 'POST', '/v1/engine/workflows', {
      key: platform.adminKey,
      body: { name: 'Trace kept', ...chain([{ name: 'Start', type: 'engine.manualTrigger', parameters: {}, position: [0, 0] }]) },
    });
    const run = caller();
    for (const mode of ['sync', 'async']) {
      const executed = await call<V1<{ executionId: string }>>(platform.url, 'POST', `/v1/engine/workflows/${workflow.body.data.workflowId}/execute`, {
        key: platform.adminKey,
        body: { mode, data: {} },
        traceparent: run.traceparent,
      });
      assert.ok(executed.status < 300, JSON.stringify(executed.body));
      const id = executed.body.data.executionId;
      const execution = await until(`the ${mode} execution, stored`, async () => {
        const r = await graphql<Gql<{ execution: { status: string; traceId: string | null } | null }>>(
          platform.url,
          platform.adminKey,
          `{ execution(executionId: "${id}") { status traceId } }`,
        );
        return r.body.data?.execution?.status === 'success' ? r.body.data.execution : null;
      });
      assert.equal(execution.traceId, run.traceId, mode);
    }
  });

  test('an orchestration: each stage a span under the request that created it; the orchestration keeps that trace', async () => {
    const { traceId, parentId, traceparent } = caller();
    const created = await call<V1<{ orchestrationId: string }>>(platform.url, 'POST', '/v1/control-plane/orchestration/create', {
      key: platform.adminKey,
      traceparent,
      body: {
        name: 'Traced delivery',
        stages: [{ stage: 'RESEARCH', tasks: [{ agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: 'Ship checkout' } }] }],
      },
    });
    assert.ok(created.status < 300, JSON.stringify(created.body));
    const id = created.body.data.orchestrationId;
    const ended = await until('the orchestration to end', async () => {
      const r = await graphql<Gql<{ orchestration: { status: string; traceId: string | null } | null }>>(
        platform.url,
        platform.adminKey,
        `{ orchestration(orchestrationId: "${id}") { status traceId } }`,
      );
      return ['completed', 'failed'].includes(r.body.data?.orchestration?.status ?? '') ? r.body.data.orchestration : null;
    });
    assert.equal(ended.traceId, traceId);
    const entry = await until('the server span of the request', () =>
      receiver.trace(traceId).find((s) => s.kind === SPAN_KIND.server && s.parentSpanId === parentId),
    );
    const stage = await until('the RESEARCH stage span, under the request', () =>
      receiver.trace(traceId).find((s) => s.name === 'orchestration stage RESEARCH' && receiver.ancestors(s).includes(entry)),
    );
    assert.equal(stage.attributes['orchestration.id'], id);
    assert.equal(stage.attributes['orchestration.stage'], 'RESEARCH');
    assert.equal(stage.attributes['orchestration.stage.position'], 0);
    assert.equal(stage.attributes['orchestration.stage.status'], ended.status);
    // Its task ran as an agent in the same trace.
    await until('the stage’s agent run, in the trace', () =>
      receiver.trace(traceId).find((s) => s.name === 'invoke_agent factory-orchestrator' && s.attributes['orchestration.id'] === id),
    );
  });

  test('a rollout: the change applied in the request, then each step the watcher sees, all in its trace', async () => {
    const key = platform.adminKey;
    const projectRes = await call<{ id: string }>(platform.url, 'POST', '/infra/api/v1/projects', {
      key,
      body: { name: 'Traced shop', visibility: 'internal' },
    });
    assert.equal(projectRes.status, 201, JSON.stringify(projectRes.body));
    const { traceId, parentId, traceparent } = caller();
    const service = await call(platform.url, 'POST', '/infra/api/v1/services', {
      key,
      traceparent,
      body: { project: projectRes.body.id, name: 'api', type: 'backend', image: 'ghcr.io/acme/api:1.0.0', replicas: 2 },
    });
    assert.equal(service.status, 201, JSON.stringify(service.body));
    const entry = await until('the server span of the request', () =>
      receiver.trace(traceId).find((s) => s.kind === SPAN_KIND.server && s.parentSpanId === parentId),
    );
    const applied = await until('the rollout’s apply span, under the request', () =>
      receiver.trace(traceId).find((s) => s.name === 'rollout apply' && receiver.ancestors(s).includes(entry)),
    );
    assert.equal(applied.attributes['service.name'], 'api');
    assert.equal(applied.attributes['deployment.kind'], 'create');
    const last = await until('the rollout’s last step, under the request', () =>
      receiver
        .trace(traceId)
        .find((s) => s.name === 'rollout step' && s.attributes['deployment.status'] === 'success' && receiver.ancestors(s).includes(entry)),
    );
    assert.equal(last.attributes['deployment.id'], applied.attributes['deployment.id']);
    assert.equal(last.attributes['rollout.replicas.ready'], 2);
    assert.equal(last.attributes['container.image.name'], 'ghcr.io/acme/api:1.0.0');
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

  test('error answers carry no trace id, rows keep none, and the dashboard has no trace viewer', async () => {
    for (const answer of ERROR_ANSWERS) {
      const res = await answer.send(platform.url, platform.adminKey, caller().traceparent);
      const details = answer.details(res.body);
      assert.ok(details === undefined || (typeof details === 'object' && !('traceId' in details)), `${answer.name}: ${JSON.stringify(res.body)}`);
    }
    const task = await runTask(platform.url, platform.adminKey, caller().traceparent);
    const read = await graphql<Gql<{ task: { traceId: string | null } }>>(platform.url, platform.adminKey, `{ task(taskId: "${task.taskId}") { traceId } }`);
    assert.equal(read.body.data.task.traceId, null, JSON.stringify(read.body));
    assert.deepEqual((await call(platform.url, 'GET', '/dashboard/config.json')).body, { tracesUiUrl: null });
  });
});
