import assert from 'node:assert/strict';
import type { Client } from 'graphql-ws';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import { chain, fakeLlmEnv, guideTask, start } from './support/fixtures';
import type { Feedback, Gql, V1 } from './support/answers';
import { startTestPlatform, type Answer, type JsonAnswer, type TestPlatform } from './support/platform';
import { startSplitTopology, type SplitTopology } from './support/split';
import { subscribe, wsClient, type Subscription } from './support/subscribe';
import { sleep, until } from './support/until';

/**
 * Subscriptions that never miss: every `…Updated(id)` first sends the entity as it is (a
 * subscriber who comes after the work ended sees how it ended), then every change, never an
 * older version than one already sent; an id the query refuses is the query's error. The list
 * subscriptions first send the list's members as the list reads them (oldest first, `limit` of
 * them), then each changed entity the subscriber may read; an unknown parent is an error. Also
 * across processes, with events on Redis.
 */

/** What the tests read of an entity an event or a query carries (each selects its own fields). */
interface Entity {
  version: number;
  status?: string;
  taskId?: string;
  agentId?: string;
  orchestrationId?: string;
  executionId?: string;
  workflowId?: string;
  deploymentId?: string;
  serviceId?: string;
  id?: string;
  deleted?: boolean;
}
/** One event of a subscription selecting `field`. */
type Event<K extends string> = Gql<Record<K, Entity>>;
/** The error list that ended a subscription (graphql-ws hands over the GraphQL errors). */
type Ended = { message?: string; extensions?: { code?: string } }[] | undefined;

const CP = '/v1/control-plane';
const INFRA = '/infra/api/v1';
const ADMIN = { email: 'root@infra.test', password: 'admin-password-1' };
const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const answer = JSON.stringify({ summary: 'done', files: [{ path: 'docs/x.md', content: '# X\n\n## Overview\n' }] });

let p: TestPlatform;
let fake: FakeLlm;
let root: string;
const clients: Client[] = [];

beforeAll(async () => {
  fake = await startFakeLlm({ models: ['model-default'] });
  fake.reply(() => answer);
  p = await startTestPlatform({
    ...fakeLlmEnv(fake.url),
    INFRA_ADMIN_EMAIL: ADMIN.email,
    INFRA_ADMIN_PASSWORD: ADMIN.password,
    LOCAL_ROLLOUT_STEP_MS: '25',
    INFRA_WATCH_INTERVAL_MS: '20',
    FEEDBACK_LOCAL_SIGNIN: 'true',
  });
  root = ok(await infra<{ token: string }>('POST', '/auth/login', { token: null, body: ADMIN })).token;
});
afterAll(async () => {
  for (const c of clients) await c.dispose();
  await p?.stop();
  await fake?.close();
});
beforeEach(() => fake.delay(0));

function ok<T>(res: JsonAnswer<T>, status = 200): T {
  assert.equal(res.status, status, JSON.stringify(res.body));
  return res.body;
}

function infra<T>(method: string, path: string, o: { token?: string | null; body?: unknown } = {}): Promise<Answer<T>> {
  return p.rest<T>(method, INFRA + path, { key: o.token === undefined ? root : o.token, body: o.body });
}

/** The code of the error that ended `sub`. */
function endCode(sub: Subscription<unknown>): string | undefined {
  return (sub.errors[0] as Ended)?.[0]?.extensions?.code;
}

function client(authorization: string, url = p.url): Client {
  const c = wsClient(url, authorization);
  clients.push(c);
  return c;
}

/** The values `field` carried so far (an event with errors fails the test where it is read). */
function seen<K extends string>(sub: Subscription<Event<K>>, field: K): Entity[] {
  return sub.events.map((e) => {
    assert.equal(e.errors, undefined, JSON.stringify(e.errors));
    return e.data[field];
  });
}

/** The first event, and then proof that nothing else (a duplicate of it) follows. */
async function onlyFirst<K extends string>(sub: Subscription<Event<K>>, field: K): Promise<Entity> {
  await sub.waitFor(1);
  assert.deepEqual(sub.errors, []);
  await sleep(400);
  const values = seen(sub, field);
  assert.equal(values.length, 1, JSON.stringify(values));
  return values[0];
}

async function completedTask(): Promise<string> {
  const created = ok(await p.rest<V1<{ taskId: string }>>('POST', `${CP}/agents/execute`, { body: guideTask({ topic: 'late' }) }), 202).data;
  await until(
    'the task completed',
    async () => ok(await p.rest<V1<{ status: string }>>('GET', `${CP}/agents/tasks/${created.taskId}`)).data.status === 'completed',
  );
  return created.taskId;
}

let seq = 0;
async function runningService(): Promise<{ serviceId: string; deploymentId: string }> {
  const project = ok(await infra<{ id: string }>('POST', '/projects', { body: { name: `Snapshot ${++seq}`, description: 'd' } }), 201);
  const service = ok(
    await infra<{ id: string }>('POST', '/services', { body: { project: project.id, name: `svc-${seq}`, image: 'registry.example.com/team/api:1.0.0' } }),
    201,
  );
  await until('the service running', async () => ok(await infra<{ status: string }>('GET', `/services/${service.id}`)).status === 'running');
  const deployments = ok(await infra<{ data: { deploymentId: string }[] }>('GET', `/services/${service.id}/deployments`));
  return { serviceId: service.id, deploymentId: deployments.data[0]!.deploymentId };
}

async function workflow(name: string): Promise<string> {
  const body = { name, ...chain([start, { name: 'Done', type: 'engine.noOp' }]) };
  return ok(await p.rest<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', { body }), 201).data.workflowId;
}

async function finishedExecution(workflowId: string): Promise<string> {
  const run = ok(await p.rest<V1<{ executionId: string }>>('POST', `/v1/engine/workflows/${workflowId}/execute`, { body: {} })).data;
  await until(
    'the execution done',
    async () => ok(await p.rest<V1<{ status: string }>>('GET', `/v1/engine/executions/${run.executionId}`)).data.status === 'success',
  );
  return run.executionId;
}

/** A feedback person (the admin key signs them in locally) and a project of theirs. */
async function feedbackOwner(): Promise<{ token: string; projectId: string }> {
  const n = ++seq;
  const { token } = ok(
    await p.rest<Feedback<{ token: string }>>('POST', '/feedback/api/v1/auth/local', { body: { email: `snap${n}@example.com`, name: `Snap ${n}` } }),
  ).data;
  const project = await p.graphql<Gql<{ createFeedbackProject: { id: string } }>>(
    `mutation($input: CreateProjectInput!) { createFeedbackProject(input: $input) { id } }`,
    { input: { name: `Snap ${n}`, description: 'd', slug: `snap-${n}-${Date.now()}` } },
    token,
  );
  assert.equal(project.body.errors, undefined, JSON.stringify(project.body.errors));
  return { token, projectId: project.body.data.createFeedbackProject.id };
}

async function featureRequest(owner: { token: string; projectId: string }): Promise<string> {
  const res = await p.graphql<Gql<{ submitFeatureRequest: { id: string } }>>(
    `mutation($id: ID!) { submitFeatureRequest(projectId: $id, input: { title: "Snapshots", description: "First the state, then changes" }) { id } }`,
    { id: owner.projectId },
    owner.token,
  );
  assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
  return res.body.data.submitFeatureRequest.id;
}

describe('a late subscriber receives the final state as its first event', () => {
  test('taskUpdated on a task that already completed: COMPLETED at once, the same as the query, and nothing more', async () => {
    const taskId = await completedTask();
    const selection = 'taskId status version result { filesCreated }';
    const sub = subscribe<Event<'taskUpdated'>>(client(`Bearer ${p.adminKey}`), `subscription($id: ID!) { taskUpdated(taskId: $id) { ${selection} } }`, {
      id: taskId,
    });
    const first = await onlyFirst(sub, 'taskUpdated');
    const row = (await p.graphql<Event<'task'>>(`query($id: ID!) { task(taskId: $id) { ${selection} } }`, { id: taskId })).body.data.task;
    assert.equal(first.status, 'completed');
    assert.deepEqual(first, row);
    assert.ok(first.version > 1, 'the version moved with the task');
  });

  test('orchestrationUpdated on an orchestration that already ended', async () => {
    const created = ok(
      await p.rest<V1<{ orchestrationId: string }>>('POST', `${CP}/orchestration/create`, {
        body: { name: 'late', stages: [{ stage: 'DESIGN', tasks: [guideTask()] }] },
      }),
      201,
    ).data;
    await until('the orchestration ended', async () =>
      ['completed', 'failed'].includes(ok(await p.rest<V1<{ status: string }>>('GET', `${CP}/orchestration/status/${created.orchestrationId}`)).data.status),
    );
    const selection = 'orchestrationId status version progress { overallPercentage }';
    const sub = subscribe<Event<'orchestrationUpdated'>>(
      client(`Bearer ${p.adminKey}`),
      `subscription($id: ID!) { orchestrationUpdated(orchestrationId: $id) { ${selection} } }`,
      {
        id: created.orchestrationId,
      },
    );
    const first = await onlyFirst(sub, 'orchestrationUpdated');
    const row = (
      await p.graphql<Event<'orchestration'>>(`query($id: ID!) { orchestration(orchestrationId: $id) { ${selection} } }`, { id: created.orchestrationId })
    ).body.data.orchestration;
    assert.equal(first.status, 'completed');
    assert.deepEqual(first, row);
  });

  test('executionUpdated on an execution that already succeeded', async () => {
    const executionId = await finishedExecution(await workflow('late'));
    const selection = 'executionId status version progress { nodesCompleted nodesTotal }';
    const sub = subscribe<Event<'executionUpdated'>>(
      client(`Bearer ${p.adminKey}`),
      `subscription($id: ID!) { executionUpdated(executionId: $id) { ${selection} } }`,
      {
        id: executionId,
      },
    );
    const first = await onlyFirst(sub, 'executionUpdated');
    const row = (await p.graphql<Event<'execution'>>(`query($id: ID!) { execution(executionId: $id) { ${selection} } }`, { id: executionId })).body.data
      .execution;
    assert.equal(first.status, 'success');
    assert.deepEqual(first, row);
  });

  test('deploymentUpdated on a rollout that already succeeded', async () => {
    const { deploymentId } = await runningService();
    const selection = 'deploymentId status version progress { ready desired }';
    const sub = subscribe<Event<'deploymentUpdated'>>(
      client(`Bearer ${root}`),
      `subscription($id: ID!) { deploymentUpdated(deploymentId: $id) { ${selection} } }`,
      {
        id: deploymentId,
      },
    );
    const first = await onlyFirst(sub, 'deploymentUpdated');
    const row = (
      await p.graphql<Event<'infraDeployment'>>(`query($id: ID!) { infraDeployment(deploymentId: $id) { ${selection} } }`, { id: deploymentId }, root)
    ).body.data.infraDeployment;
    assert.equal(first.status, 'success');
    assert.deepEqual(first, row);
  });

  test('requestUpdated on a feature request: its state at once', async () => {
    const owner = await feedbackOwner();
    const requestId = await featureRequest(owner);
    const sub = subscribe<Event<'requestUpdated'>>(
      client(`Bearer ${owner.token}`),
      `subscription($id: ID!) { requestUpdated(requestId: $id) { id status version } }`,
      {
        id: requestId,
      },
    );
    const first = await onlyFirst(sub, 'requestUpdated');
    assert.deepEqual(first, { id: requestId, status: 'pending', version: 1 });
  });

  test('an unknown id is the error its query gives, not a silent stream', async () => {
    const cases: [string, string, string][] = [
      [`Bearer ${p.adminKey}`, 'taskUpdated(taskId: $id) { status }', 'resource_not_found'],
      [`Bearer ${p.adminKey}`, 'orchestrationUpdated(orchestrationId: $id) { status }', 'resource_not_found'],
      [`Bearer ${root}`, 'deploymentUpdated(deploymentId: $id) { status }', 'resource_not_found'],
      [`Bearer ${p.adminKey}`, 'executionUpdated(executionId: $id) { status }', 'resource_not_found'],
    ];
    for (const [authorization, field, code] of cases) {
      const sub = subscribe(client(authorization), `subscription($id: ID!) { ${field} }`, { id: UNKNOWN });
      await sub.done;
      assert.deepEqual(sub.events, [], field);
      assert.equal(endCode(sub), code, `${field}: ${JSON.stringify(sub.errors)}`);
    }
  });
});

describe('a subscriber during the work', () => {
  test('requestUpdated: the first state, then one event per change with the next version, ending in the row as read afterwards', async () => {
    const owner = await feedbackOwner();
    const requestId = await featureRequest(owner);
    const selection = 'status votesCount commentsCount version';
    const sub = subscribe<Event<'requestUpdated'>>(
      client(`Bearer ${owner.token}`),
      `subscription($id: ID!) { requestUpdated(requestId: $id) { ${selection} } }`,
      {
        id: requestId,
      },
    );
    await sub.waitFor(1);
    const changes = [
      `mutation($id: ID!) { setFeatureRequestStatus(requestId: $id, status: "approved") { id } }`,
      `mutation($id: ID!) { voteFeatureRequest(requestId: $id, type: "upvote") { totalVotes } }`,
      `mutation($id: ID!) { addFeatureRequestComment(requestId: $id, body: "Yes please") { id } }`,
      `mutation($id: ID!) { setFeatureRequestStatus(requestId: $id, status: "completed") { id } }`,
    ];
    for (const [i, change] of changes.entries()) {
      const res = await p.graphql<Gql<unknown>>(change, { id: requestId }, owner.token);
      assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
      await sub.waitFor(i + 2);
    }
    await sleep(300);
    const values = seen(sub, 'requestUpdated');
    const versions = values.map((v) => v.version);
    assert.deepEqual(
      versions,
      versions.map((_, i) => versions[0] + i),
      `gap-free and increasing: ${JSON.stringify(values)}`,
    );
    const row = (
      await p.graphql<Event<'featureRequest'>>(`query($id: ID!) { featureRequest(requestId: $id) { ${selection} } }`, { id: requestId }, owner.token)
    ).body.data.featureRequest;
    assert.deepEqual(values.at(-1), row);
    assert.deepEqual(row, { status: 'completed', votesCount: 1, commentsCount: 1, version: versions.at(-1) });
  });

  test('taskUpdated while the model answers: the first state, then never an older version or the same answer twice, ending in the row', async () => {
    fake.delay(800);
    const created = ok(await p.rest<V1<{ taskId: string }>>('POST', `${CP}/agents/execute`, { body: guideTask({ topic: 'watched' }) }), 202).data;
    const selection = 'status version progress { percentage currentStep }';
    const sub = subscribe<Event<'taskUpdated'>>(client(`Bearer ${p.adminKey}`), `subscription($id: ID!) { taskUpdated(taskId: $id) { ${selection} } }`, {
      id: created.taskId,
    });
    await sub.until((e) => e.data?.taskUpdated?.status === 'completed', 15_000);
    await sleep(300);
    const values = seen(sub, 'taskUpdated');
    assertOrdered(values);
    assert.ok(values.length >= 2, JSON.stringify(values));
    const row = (await p.graphql<Event<'task'>>(`query($id: ID!) { task(taskId: $id) { ${selection} } }`, { id: created.taskId })).body.data.task;
    assert.deepEqual(values.at(-1), row);
    assert.equal(row.status, 'completed');
  });
});

/**
 * Versions never go back; an answer of the same version (a step announced, not written) differs
 * from the one before it.
 */
function assertOrdered(values: { version: number }[]): void {
  for (let i = 1; i < values.length; i++) {
    assert.ok(values[i]!.version >= values[i - 1]!.version, `version went back at ${i}: ${JSON.stringify(values)}`);
    assert.notDeepEqual(values[i], values[i - 1], `the same answer twice at ${i}: ${JSON.stringify(values)}`);
  }
}

/**
 * A late subscriber to a list: its first events are the list's members as `query` reads them now
 * (the newest `limit`, sent oldest first), each with its version; nothing else came meanwhile.
 */
async function firstState<K extends string>(sub: Subscription<Event<K>>, field: K, rows: Entity[]): Promise<void> {
  assert.ok(rows.length > 0, 'a list with members');
  await sub.waitFor(rows.length);
  assert.deepEqual(sub.errors, []);
  assert.deepEqual(seen(sub, field), [...rows].reverse());
}

describe('list subscriptions', () => {
  test("tasksUpdated(agentId): the agent's latest tasks first, as tasks lists them, then its tasks as they change, not another agent's", async () => {
    await completedTask();
    await completedTask();
    const selection = 'taskId agentId status version';
    const rows = (
      await p.graphql<Gql<{ tasks: { tasks: Entity[] } }>>(
        `query { tasks(agentId: "docs-author", limit: 2, sortBy: "createdAt", sortOrder: "desc") { tasks { ${selection} } } }`,
      )
    ).body.data.tasks.tasks;
    const sub = subscribe<Event<'tasksUpdated'>>(
      client(`Bearer ${p.adminKey}`),
      `subscription { tasksUpdated(agentId: "docs-author", limit: 2) { ${selection} } }`,
    );
    await firstState(sub, 'tasksUpdated', rows);
    const other = ok(
      await p.rest<V1<{ taskId: string }>>('POST', `${CP}/agents/execute`, {
        body: { agentId: 'postmortem-analyst', taskType: 'write-postmortem', context: { incident: 'x', timeline: ['09:00 alert'], severity: 'sev2' } },
      }),
      202,
    ).data;
    const taskId = await completedTask();
    await sub.until((e) => e.data?.tasksUpdated?.taskId === taskId && e.data.tasksUpdated.status === 'completed', 10_000);
    const values = seen(sub, 'tasksUpdated');
    assert.ok(
      values.every((t) => t.agentId === 'docs-author' && t.taskId !== other.taskId),
      JSON.stringify(values),
    );
    assertOrdered(values.filter((t) => t.taskId === taskId));

    const refused = subscribe(client(`Bearer ${p.adminKey}`), `subscription { tasksUpdated(agentId: "no-such-agent") { taskId } }`);
    await refused.done;
    assert.equal(endCode(refused), 'AGENT_NOT_FOUND', JSON.stringify(refused.errors));
  });

  test('orchestrationsUpdated: the latest orchestrations first, then each as it changes, for a reader of orchestrations only', async () => {
    const reader = await p.createKey({ permissions: ['orchestration:read'] });
    const selection = 'orchestrationId status version';
    const rows = (
      await p.graphql<Gql<{ orchestrations: { orchestrations: Entity[] } }>>(`query { orchestrations(limit: 3) { orchestrations { ${selection} } } }`)
    ).body.data.orchestrations.orchestrations;
    const sub = subscribe<Event<'orchestrationsUpdated'>>(client(`Bearer ${reader.key}`), `subscription { orchestrationsUpdated(limit: 3) { ${selection} } }`);
    await firstState(sub, 'orchestrationsUpdated', rows);
    const created = ok(
      await p.rest<V1<{ orchestrationId: string }>>('POST', `${CP}/orchestration/create`, {
        body: { name: 'listed', stages: [{ stage: 'DESIGN', tasks: [guideTask()] }] },
      }),
      201,
    ).data;
    await sub.until(
      (e) => e.data?.orchestrationsUpdated?.orchestrationId === created.orchestrationId && e.data.orchestrationsUpdated.status === 'completed',
      15_000,
    );
    assertOrdered(seen(sub, 'orchestrationsUpdated').filter((o) => o.orchestrationId === created.orchestrationId));

    const stranger = await p.createKey({ permissions: ['agent:read'] });
    const refused = subscribe(client(`Bearer ${stranger.key}`), `subscription { orchestrationsUpdated { orchestrationId } }`);
    await refused.done;
    assert.equal(endCode(refused), 'insufficient_permissions', JSON.stringify(refused.errors));
  });

  test("deploymentsUpdated(serviceId): the service's rollouts first, as it lists them, then its rollouts as they change, not another service's", async () => {
    const watched = await runningService();
    const other = await runningService();
    const selection = 'deploymentId serviceId status version';
    const rows = (
      await p.graphql<Gql<{ infraDeployments: { data: Entity[] } }>>(
        `query($id: ID!) { infraDeployments(serviceId: $id) { data { ${selection} } } }`,
        { id: watched.serviceId },
        root,
      )
    ).body.data.infraDeployments.data;
    assert.deepEqual(
      rows.map((d) => d.deploymentId),
      [watched.deploymentId],
    );
    const sub = subscribe<Event<'deploymentsUpdated'>>(
      client(`Bearer ${root}`),
      `subscription($id: ID) { deploymentsUpdated(serviceId: $id) { ${selection} } }`,
      {
        id: watched.serviceId,
      },
    );
    await firstState(sub, 'deploymentsUpdated', rows);
    const next = ok(
      await infra<{ deploymentId: string }>('POST', `/services/${other.serviceId}/deploy`, { body: { image: 'registry.example.com/team/api:1.0.1' } }),
      202,
    );
    const mine = ok(
      await infra<{ deploymentId: string }>('POST', `/services/${watched.serviceId}/deploy`, { body: { image: 'registry.example.com/team/api:1.0.1' } }),
      202,
    );
    await sub.until((e) => e.data?.deploymentsUpdated?.deploymentId === mine.deploymentId && e.data.deploymentsUpdated.status === 'success', 30_000);
    await until('the other rollout done', async () => ok(await infra<{ status: string }>('GET', `/deployments/${next.deploymentId}`)).status !== 'in-progress');
    const values = seen(sub, 'deploymentsUpdated').slice(rows.length);
    assert.ok(
      values.every((d) => d.serviceId === watched.serviceId && d.deploymentId === mine.deploymentId),
      JSON.stringify(values),
    );
    assertOrdered(values);
  });

  test('an unknown agent, workflow, service or project, or a limit out of range, is an error, not a silent stream', async () => {
    const owner = await feedbackOwner();
    const cases: [string, string, string][] = [
      [`Bearer ${p.adminKey}`, 'tasksUpdated(agentId: "no-such-agent") { taskId }', 'AGENT_NOT_FOUND'],
      [`Bearer ${p.adminKey}`, `executionsUpdated(workflowId: "${UNKNOWN}") { executionId }`, 'WORKFLOW_NOT_FOUND'],
      [`Bearer ${root}`, `deploymentsUpdated(serviceId: "${UNKNOWN}") { deploymentId }`, 'resource_not_found'],
      [`Bearer ${owner.token}`, `requestsUpdated(projectId: "${UNKNOWN}") { id }`, 'resource_not_found'],
      [`Bearer ${p.adminKey}`, 'tasksUpdated(agentId: "docs-author", limit: 0) { taskId }', 'validation_error'],
      [`Bearer ${p.adminKey}`, 'orchestrationsUpdated(limit: 101) { orchestrationId }', 'validation_error'],
    ];
    for (const [authorization, field, code] of cases) {
      const sub = subscribe(client(authorization), `subscription { ${field} }`);
      await sub.done;
      assert.deepEqual(sub.events, [], field);
      assert.equal(endCode(sub), code, `${field}: ${JSON.stringify(sub.errors)}`);
    }
  });
});

describe('list subscriptions of the engine', () => {
  test("executionsUpdated(workflowId): the workflow's executions first, as executions lists them, then as they change, not another workflow's; a deleted one as such", async () => {
    const watched = await workflow('watched');
    const other = await workflow('other');
    const earlier = [await finishedExecution(watched), await finishedExecution(watched)];
    const selection = 'executionId workflowId status version deleted';
    const rows = (
      await p.graphql<Gql<{ executions: { executions: Entity[] } }>>(`query($id: ID!) { executions(workflowId: $id) { executions { ${selection} } } }`, {
        id: watched,
      })
    ).body.data.executions.executions;
    assert.deepEqual(
      rows.map((e) => e.executionId),
      [...earlier].reverse(),
    );
    const sub = subscribe<Event<'executionsUpdated'>>(
      client(`Bearer ${p.adminKey}`),
      `subscription($id: ID) { executionsUpdated(workflowId: $id) { ${selection} } }`,
      {
        id: watched,
      },
    );
    await firstState(sub, 'executionsUpdated', rows);
    await finishedExecution(other);
    const executionId = await finishedExecution(watched);
    await sub.until((e) => e.data?.executionsUpdated?.executionId === executionId && e.data.executionsUpdated.status === 'success', 10_000);
    const values = seen(sub, 'executionsUpdated').slice(rows.length);
    assert.ok(
      values.every((e) => e.workflowId === watched && e.executionId === executionId && e.deleted === false),
      JSON.stringify(values),
    );
    assertOrdered(values);

    // A deleted execution comes once more as last sent, marked deleted, with a newer version.
    ok(await p.rest<V1<unknown>>('DELETE', `/v1/engine/executions/${earlier[0]}`));
    const gone = await sub.until((e) => e.data?.executionsUpdated?.deleted === true, 10_000);
    const before = rows.find((r) => r.executionId === earlier[0])!;
    assert.deepEqual(gone!.data.executionsUpdated, { ...before, deleted: true, version: before.version + 1 });
  });
});

describe('across processes, events on Redis', () => {
  let split: SplitTopology;
  let llm: FakeLlm;

  beforeAll(async () => {
    const redis = process.env.TEST_REDIS_URL;
    if (!redis) throw new Error('TEST_REDIS_URL is not set: the split test needs a Redis');
    llm = await startFakeLlm({ models: ['model-default'] });
    llm.reply(() => answer);
    split = await startSplitTopology({ ...fakeLlmEnv(llm.url), REDIS_URL: redis });
  });
  afterAll(async () => {
    await split?.stop();
    await llm?.close();
  });

  test('taskUpdated at the gateway, the task run by the worker: ordered while it runs, and a late subscriber gets the final state first', async () => {
    llm.delay(1000);
    const created = (await split.call('POST', `${CP}/agents/execute`, guideTask({ topic: 'split' }))) as JsonAnswer<V1<{ taskId: string }>>;
    assert.equal(created.status, 202, JSON.stringify(created.body));
    const taskId = created.body.data.taskId;
    const selection = 'taskId status version';
    const query = `subscription($id: ID!) { taskUpdated(taskId: $id) { ${selection} } }`;
    const during = subscribe<Event<'taskUpdated'>>(client(`Bearer ${split.adminKey}`, split.gatewayUrl), query, { id: taskId });
    await during.until((e) => e.data?.taskUpdated?.status === 'completed', 20_000);
    await sleep(300);
    const values = seen(during, 'taskUpdated');
    assertOrdered(values);

    const late = subscribe<Event<'taskUpdated'>>(client(`Bearer ${split.adminKey}`, split.gatewayUrl), query, { id: taskId });
    const first = await onlyFirst(late, 'taskUpdated');
    const row = (await split.call('GET', `${CP}/agents/tasks/${taskId}`)) as JsonAnswer<V1<{ status: string }>>;
    assert.equal(row.body.data.status, 'completed');
    assert.deepEqual(first, values.at(-1));
    assert.equal(first.status, 'completed');
  });
});
