import assert from 'node:assert/strict';
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { verifySignature } from '../kernel/webhooks';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import { fakeLlmEnv, guideTask } from './support/fixtures';
import { Client as PgClient } from 'pg';
import { testClock } from './support/clock';
import { createTestDatabase } from './support/database';
import type { ErrorBody, Gql, Platform, V1 } from './support/answers';
import { startTestPlatform, type TestPlatform, type JsonAnswer } from './support/platform';
import { subscribe, wsClient } from './support/subscribe';
import { sleep, until } from './support/until';
import { webhookReceiver } from './support/webhook-receiver';

/**
 * Orchestrations and gates end to end: REST (main and alternate layout), GraphQL subscription,
 * signed webhooks, against a real PostgreSQL and a fake OpenAI-compatible server whose answers
 * decide what each agent's task writes (and so which gate criteria its outputs meet).
 */

/** A task of an orchestration's stage (with includeTaskDetails). */
interface OrchestrationTask {
  key: string;
  status: string;
  taskId?: string;
  progress: number;
  startedAt: string;
  completedAt: string;
}

interface OrchestrationStage {
  stage: string;
  status: string;
  tasksTotal: number;
  tasksCompleted: number;
  gateValidation: { enabled: boolean; exitGatePassed?: boolean; missingCriteria: string[]; outputs: string[] };
  tasks: OrchestrationTask[];
}

/** An orchestration as created and as its status reads. */
interface Orchestration {
  orchestrationId: string;
  status: string;
  currentStage: string;
  createdAt: string;
  estimatedCompletionAt?: string;
  stages: OrchestrationStage[];
  progress: { overallPercentage: number; stagesCompleted: number; stagesTotal: number };
  result: { success: boolean; stagesCompleted: number; tasksCompleted: number; outputs: Record<string, unknown> };
  duration: number;
  completedAt?: string;
  failedAt?: string;
  pausedAt?: string;
  error: { code: string; details: { gate: unknown; failed_criteria: { criterion: string }[]; task: string; stage: string; execution_id: string } };
}

/** An orchestration as the alternate layout spells it. */
interface AltWorkflow {
  workflow_id: string;
  status: string;
  forge_validation: boolean;
  stages: { stage: string; agents: { agent_id: string; task_type: string }[]; exit_gate_passed: boolean }[];
  progress: { overall_percentage: number };
  result: { outputs: Record<string, unknown> };
  error?: unknown;
}

interface GateCheck {
  stage: string;
  gateType: string;
  passed: boolean;
  missingCriteria?: string[];
  criteria: unknown[];
  validatedAt: string;
}

interface OrchestrationList {
  orchestrations: unknown[];
  pagination: { limit: number };
}

interface Cancelled {
  status: string;
  tasksCancelled: number;
  reason: string;
  cancelledAt: string;
}

/** What the subscription asks of an orchestration. */
interface OrchestrationUpdate {
  orchestrationId: string;
  status: string;
  currentStage: string;
  progress: { stagesCompleted: number; overallPercentage: number };
  stages: { stage: string; status: string; tasks: { status: string }[] }[];
}

/** A `/v1` answer whose error details are `D`, as the test reads them. */

type WithDetails<T, D> = V1<T> & { error: ErrorBody & { details: D } };

/** What a refused creation's details hold, each test reading its own. */
interface CreateRefusal {
  field: string;
  missing: string[];
  errors: { field: string; message: string; type: string; task: string; dependency: string; cycle: string[] }[];
}

const ORCH = '/v1/control-plane/orchestration';
const SECRET = 'orchestration-webhook-secret';

let fake: FakeLlm;
let p: TestPlatform;
let receiver: Receiver;
const clients: Client[] = [];

// ---- the fake LLM: answers per agent, and holds answers on request --------------------------

const holds = new Map<string, { promise: Promise<void>; release: () => void; reached: boolean }>();
/** A task whose context mentions `HOLD:<name>` waits in the model call until release(name). */
function hold(name: string) {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  holds.set(name, { promise, release, reached: false });
  return name;
}
const release = (name: string) => holds.get(name)?.release();
const reached = (name: string) => holds.get(name)?.reached === true;

const files = (...list: [string, string][]) => list.map(([path, content]) => ({ path, content }));

function answerFor(agentId: string, prompt: string): string {
  switch (agentId) {
    case 'factory-orchestrator':
      return JSON.stringify({
        summary: 'Delivery plan for the objective.',
        files: files(['plans/checkout.md', '# Objective\nShip checkout.\n\n## Stages\n- RESEARCH\n- DESIGN\n- IMPLEMENT\n']),
      });
    case 'workflow-architect':
      return JSON.stringify({
        summary: 'Checkout workflow.',
        files: files([
          'workflows/checkout.json',
          JSON.stringify({ name: 'checkout', nodes: [{ name: 'Start', type: 'engine.manualTrigger', parameters: {} }], connections: {} }),
        ]),
      });
    case 'docs-author':
      return JSON.stringify({ summary: 'A guide.', files: files(['docs/guide.md', '# Guide\n\nHow to check out.\n']) });
    case 'backend-engineer': {
      const code = files(['src/checkout.ts', 'export const checkout = () => true;\n']);
      const tests = prompt.includes('NO-TESTS') ? [] : files(['src/checkout.test.ts', "import { checkout } from './checkout';\n"]);
      return JSON.stringify({ summary: 'Checkout endpoint.', files: [...code, ...tests] });
    }
    default:
      return JSON.stringify({ summary: `Work of ${agentId}.` });
  }
}

// ---- a local webhook receiver that verifies signatures ---------------------------------------

/** An orchestration webhook's JSON body, in the fields the tests read. */
interface OrchestrationEvent {
  event: string;
  orchestrationId: string;
  stage?: string;
  result: { success?: boolean; gateValidation: { exitGatePassed: boolean }; outputs: Record<string, unknown> };
  error: { code: string };
}

interface Delivery {
  event: string;
  body: OrchestrationEvent;
  signatureValid: boolean;
  headers: http.IncomingHttpHeaders;
}
interface Receiver {
  url: string;
  readonly deliveries: Delivery[];
  close(): Promise<void>;
}

/** The shared receiver, its requests read as deliveries signed (or not) with this file's secret. */
async function startReceiver(): Promise<Receiver> {
  const r = await webhookReceiver(() => 204).start();
  return {
    url: `${r.url}/hooks`,
    get deliveries() {
      return r.requests.map((q) => ({
        event: q.event,
        body: q.body as OrchestrationEvent,
        signatureValid: verifySignature(SECRET, q.raw, q.signature ?? ''),
        headers: q.headers,
      }));
    },
    close: () => r.close(),
  };
}

// ---- helpers ---------------------------------------------------------------------------------

/** Orchestrations wait on stages of model calls: a longer deadline than `until`'s own. */
const waitFor = <T>(what: string, probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 20_000) =>
  until(what, probe, timeoutMs, 50);

async function status(id: string, details = false, platform = p) {
  const res = await platform.rest<V1<Orchestration>>('GET', `${ORCH}/status/${id}${details ? '?includeTaskDetails=true' : ''}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

const untilStatus = (id: string, wanted: string, platform = p) =>
  waitFor(`orchestration ${id} ${wanted}`, async () => {
    const s = await status(id, true, platform);
    if (s.status !== wanted && ['completed', 'failed', 'cancelled'].includes(s.status)) {
      throw new Error(`orchestration ended ${s.status}, expected ${wanted}: ${JSON.stringify(s.error ?? s)}`);
    }
    return s.status === wanted ? s : null;
  });

async function create(body: unknown, platform = p) {
  const res = await platform.rest<V1<Orchestration>>('POST', `${ORCH}/create`, { body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

const research = (extra: Record<string, unknown> = {}) => ({
  stage: 'RESEARCH',
  tasks: [{ agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: 'Ship checkout' }, ...extra }],
  gateValidation: {},
});

function assertError(res: JsonAnswer<V1<unknown>>, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.success, false);
  assert.equal(res.body.error.code, code, JSON.stringify(res.body));
  assert.match(res.body.meta.requestId, /^req_/);
}

function ws(platform: TestPlatform, key: string): Client {
  const c = wsClient(platform.url, `Bearer ${key}`);
  clients.push(c);
  return c;
}

async function query(url: string, sql: string, params: unknown[]) {
  const client = new PgClient({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  fake = await startFakeLlm({ models: ['model-default'] });
  fake.reply(async (body) => {
    const prompt = String(body.messages.map((m: { content: unknown }) => m.content).join('\n'));
    const agentId = /\(([a-z]+(?:-[a-z]+)*)\), the /.exec(prompt)?.[1] ?? 'unknown';
    for (const [name, h] of holds) {
      if (prompt.includes(`HOLD:${name}`)) {
        h.reached = true;
        await h.promise;
      }
    }
    if (prompt.includes('FAIL-TASK')) return { status: 400, content: 'the model refuses' };
    return answerFor(agentId, prompt);
  });
  receiver = await startReceiver();
  p = await startTestPlatform(fakeLlmEnv(fake.url));
});

afterAll(async () => {
  for (const c of clients) await c.dispose();
  for (const h of holds.values()) h.release();
  await p?.stop();
  await receiver?.close();
  await fake?.close();
});

describe('gates', () => {
  test('GET /orchestration/gates: the catalogue, entry of each stage = exit of the one before', async () => {
    const res = await p.rest<V1<{ stages: { stage: string; entry: unknown[]; exit: { name: string }[] }[] }>>('GET', `${ORCH}/gates`);
    assert.equal(res.status, 200);
    const stages = res.body.data.stages;
    assert.deepEqual(
      stages.map((s: { stage: unknown }) => s.stage),
      ['RESEARCH', 'DESIGN', 'IMPLEMENT', 'VERIFY', 'DEPLOY', 'MONITOR'],
    );
    assert.deepEqual(stages[0].entry, []);
    for (let i = 1; i < stages.length; i++) assert.deepEqual(stages[i].entry, stages[i - 1].exit);
    const implement = stages[2].exit;
    assert.deepEqual(
      implement.find((k: { name: unknown }) => k.name === 'tests'),
      {
        name: 'tests',
        required: true,
        description: 'The tests written with the implementation',
        evidence: ['testFiles'],
      },
    );
  });

  test('POST /orchestration/validate-gate: passed, and failed still success with missingCriteria', async () => {
    const ok = await p.rest<V1<GateCheck>>('POST', `${ORCH}/validate-gate`, {
      body: { stage: 'IMPLEMENT', gateType: 'exit', outputs: { implementation: 'src/api.ts', tests: ['src/api.test.ts'] } },
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.success, true);
    assert.equal(ok.body.data.passed, true);
    assert.equal(ok.body.data.missingCriteria, undefined);
    assert.deepEqual(ok.body.data.criteria[0], { name: 'implementation', required: true, met: true });
    assert.match(ok.body.data.validatedAt, /^\d{4}-\d\d-\d\dT/);

    const bad = await p.rest<V1<GateCheck>>('POST', `${ORCH}/validate-gate`, { body: { stage: 'DESIGN', gateType: 'entry', outputs: { risks: 'x' } } });
    assert.equal(bad.status, 200);
    assert.equal(bad.body.success, true);
    assert.deepEqual(
      { stage: bad.body.data.stage, gateType: bad.body.data.gateType, passed: bad.body.data.passed, missing: bad.body.data.missingCriteria },
      { stage: 'DESIGN', gateType: 'entry', passed: false, missing: ['researchFindings'] },
    );
  });

  test('validate-gate errors: unknown stage, bad gate type, missing outputs; permission orchestration:read', async () => {
    assertError(
      await p.rest<V1<never>>('POST', `${ORCH}/validate-gate`, { body: { stage: 'TESTING', gateType: 'exit', outputs: {} } }),
      400,
      'validation_error',
    );
    const gateType = await p.rest<WithDetails<never, { errors: { field: string }[] }>>('POST', `${ORCH}/validate-gate`, {
      body: { stage: 'DESIGN', gateType: 'middle', outputs: {} },
    });
    assertError(gateType, 400, 'validation_error');
    assert.ok(
      gateType.body.error.details.errors.some((e: { field: string }) => e.field.endsWith('gateType')),
      JSON.stringify(gateType.body),
    );
    const missing = await p.rest<V1<never>>('POST', `${ORCH}/validate-gate`, { body: { stage: 'DESIGN', gateType: 'exit' } });
    assertError(missing, 400, 'validation_error');
    assert.match(JSON.stringify(missing.body.error.details.errors), /outputs/);

    const reader = await p.createKey({ permissions: ['orchestration:read'] });
    const writerOnly = await p.createKey({ permissions: ['agent:execute'] });
    assert.equal((await p.rest('POST', `${ORCH}/validate-gate`, { key: reader.key, body: { stage: 'DESIGN', gateType: 'exit', outputs: {} } })).status, 200);
    assertError(
      await p.rest<V1<never>>('POST', `${ORCH}/validate-gate`, { key: writerOnly.key, body: { stage: 'DESIGN', gateType: 'exit', outputs: {} } }),
      403,
      'insufficient_permissions',
    );
    assertError(
      await p.rest<V1<never>>('POST', `${ORCH}/validate-gate`, { key: null, body: { stage: 'DESIGN', gateType: 'exit', outputs: {} } }),
      401,
      'missing_authorization',
    );
  });
});

describe('POST /v1/control-plane/orchestration/create: validation', () => {
  const post = (body: unknown, key?: string) => p.rest<WithDetails<Orchestration, CreateRefusal>>('POST', `${ORCH}/create`, { body, key });

  test('stages: known names, in delivery order, each once', async () => {
    const unknown = await post({ name: 'x', stages: [{ stage: 'TESTING', tasks: [research().tasks[0]] }] });
    assertError(unknown, 400, 'validation_error');
    assert.deepEqual(unknown.body.error.details.errors, [
      { field: 'stages[0].stage', message: 'must be one of RESEARCH, DESIGN, IMPLEMENT, VERIFY, DEPLOY, MONITOR' },
    ]);

    const order = await post({ name: 'x', stages: [{ ...research(), stage: 'DESIGN' }, research()] });
    assertError(order, 400, 'validation_error');
    assert.equal(order.body.error.details.errors[0].field, 'stages[1].stage');
    assert.match(order.body.error.details.errors[0].message, /RESEARCH must come before DESIGN/);

    const twice = await post({ name: 'x', stages: [research(), research()] });
    assertError(twice, 400, 'validation_error');
    assert.match(twice.body.error.details.errors[0].message, /more than once/);

    assertError(await post({ name: 'x', stages: [] }), 400, 'validation_error');
    assertError(await post({ name: 'x', stages: [{ stage: 'RESEARCH', tasks: [] }] }), 400, 'validation_error');
    assertError(await post({ stages: [research()] }), 400, 'validation_error');
  });

  test('tasks: known agents and task types, complete context', async () => {
    const agent = await post({ name: 'x', stages: [research({ agentId: 'nobody' })] });
    assertError(agent, 404, 'AGENT_NOT_FOUND');
    assert.equal(agent.body.error.details.field, 'stages[0].tasks[0]');
    assertError(await post({ name: 'x', stages: [research({ taskType: 'dance' })] }), 400, 'INVALID_TASK_TYPE');
    const context = await post({ name: 'x', stages: [research({ context: {} })] });
    assertError(context, 422, 'CONTEXT_VALIDATION_FAILED');
    assert.deepEqual(context.body.error.details.missing, ['objective']);
  });

  test('dependencies: missing and circular ones are 422 workflow_validation_failed', async () => {
    const plan = { agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: 'o' } };
    const missing = await post({
      name: 'x',
      stages: [
        research(),
        {
          stage: 'DESIGN',
          tasks: [
            { ...plan, id: 'a', dependencies: ['nothing-here'] },
            { ...plan, id: 'b', dependencies: ['stage:VERIFY'] },
          ],
        },
      ],
    });
    assertError(missing, 422, 'workflow_validation_failed');
    assert.deepEqual(
      missing.body.error.details.errors.map((e: { type: unknown; task: unknown; dependency: unknown }) => [e.type, e.task, e.dependency]),
      [
        ['missing_dependency', 'a', 'nothing-here'],
        ['missing_dependency', 'b', 'stage:VERIFY'],
      ],
    );

    const circular = await post({
      name: 'x',
      stages: [
        {
          stage: 'RESEARCH',
          parallel: true,
          tasks: [
            { ...plan, id: 'a', dependencies: ['b'] },
            { ...plan, id: 'b', dependencies: ['a'] },
          ],
        },
        { stage: 'DESIGN', tasks: [{ ...plan, id: 'c', dependencies: ['stage:DESIGN'] }] },
      ],
    });
    assertError(circular, 422, 'workflow_validation_failed');
    const types = circular.body.error.details.errors.map((e: { type: unknown }) => e.type);
    assert.deepEqual(types, ['circular_dependency', 'circular_dependency']);
    assert.deepEqual(circular.body.error.details.errors.find((e: { cycle: unknown }) => e.cycle)?.cycle.length, 3);

    // In a stage that is not parallel each task also waits for the one before it.
    const order = await post({
      name: 'x',
      stages: [
        {
          stage: 'RESEARCH',
          tasks: [
            { ...plan, id: 'first', dependencies: ['second'] },
            { ...plan, id: 'second' },
          ],
        },
      ],
    });
    assertError(order, 422, 'workflow_validation_failed');
    assert.equal(order.body.error.details.errors[0].type, 'circular_dependency');

    // A task of an earlier stage and an earlier stage are fine.
    const ok = await post({
      name: 'deps ok',
      stages: [research({ id: 'plan' }), { stage: 'DESIGN', tasks: [{ ...plan, dependencies: ['plan', 'stage:RESEARCH'] }] }],
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    await untilStatus(ok.body.data.orchestrationId, 'completed');
  });

  test('webhook, permissions', async () => {
    assertError(await post({ name: 'x', stages: [research()], webhook: { url: receiver.url, events: ['task.completed'] } }), 400, 'WEBHOOK_INVALID');
    assertError(await post({ name: 'x', stages: [research()], webhook: { url: 'ftp://example.com/x' } }), 400, 'WEBHOOK_INVALID');
    const reader = await p.createKey({ permissions: ['orchestration:read'] });
    assertError(await post({ name: 'x', stages: [research()] }, reader.key), 403, 'insufficient_permissions');
    assertError(await p.rest<V1<never>>('GET', `${ORCH}/status/00000000-0000-4000-8000-000000000000`), 404, 'resource_not_found');
    assertError(await p.rest<V1<never>>('GET', `${ORCH}/status/not-an-id`), 404, 'resource_not_found');
  });
});

describe('an orchestration run', () => {
  test('three stages: tasks in order and in parallel, dependencies, outputs handed on, exit gates, webhooks, list', async () => {
    const before = receiver.deliveries.length;
    // The workflow's model call is held until the notes, which do not depend on it, have ended.
    const flowHeld = hold('flow-1');
    const writer = await p.createKey({ permissions: ['orchestration:write', 'orchestration:read'] });
    const created = await p.rest<V1<Orchestration>>('POST', `${ORCH}/create`, {
      key: writer.key,
      body: {
        name: 'Checkout',
        description: 'Research, design and build checkout',
        stages: [
          research(),
          {
            stage: 'DESIGN',
            parallel: true,
            gateValidation: { exit: { required: ['design'] } },
            tasks: [
              { id: 'flow', agentId: 'workflow-architect', taskType: 'design-workflow', context: { goal: `checkout HOLD:${flowHeld}`, trigger: 'webhook' } },
              { id: 'guide', agentId: 'docs-author', taskType: 'write-guide', context: { topic: 'checkout', audience: 'developers' }, dependencies: ['flow'] },
              { id: 'notes', agentId: 'docs-author', taskType: 'write-guide', context: { topic: 'notes', audience: 'ops' }, dependencies: [] },
            ],
          },
          {
            stage: 'IMPLEMENT',
            gateValidation: {},
            tasks: [
              {
                agentId: 'backend-engineer',
                taskType: 'implement-endpoint',
                context: { specification: 'POST /checkout', language: 'typescript' },
                dependencies: ['stage:DESIGN'],
              },
            ],
          },
        ],
        webhook: { url: receiver.url, secret: SECRET },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const c = created.body.data;
    assert.match(c.orchestrationId, /^[0-9a-f-]{36}$/);
    assert.equal(c.status, 'running');
    assert.equal(c.currentStage, 'RESEARCH');
    assert.deepEqual(c.stages, [
      { stage: 'RESEARCH', status: 'running', tasksTotal: 1, tasksCompleted: 0 },
      { stage: 'DESIGN', status: 'pending', tasksTotal: 3, tasksCompleted: 0 },
      { stage: 'IMPLEMENT', status: 'pending', tasksTotal: 1, tasksCompleted: 0 },
    ]);
    assert.ok(new Date(c.estimatedCompletionAt!) > new Date(c.createdAt));

    await waitFor('the workflow task in its model call', () => reached(flowHeld));
    await waitFor('the notes to complete while the workflow runs', async () => {
      const design = (await status(c.orchestrationId, true)).stages[1].tasks as { key: string; status: string }[];
      return design.find((t) => t.key === 'notes')?.status === 'completed';
    });
    release(flowHeld);
    const done = await untilStatus(c.orchestrationId, 'completed');
    assert.equal(done.progress.overallPercentage, 100);
    assert.deepEqual([done.progress.stagesCompleted, done.progress.stagesTotal], [3, 3]);
    assert.equal(done.result.success, true);
    assert.equal(done.result.stagesCompleted, 3);
    assert.equal(done.result.tasksCompleted, 5);
    for (const key of ['planPath', 'workflowPath', 'documentationPath', 'entryPoint', 'testFiles', 'filesCreated']) assert.ok(key in done.result.outputs, key);
    assert.ok(typeof done.duration === 'number' && done.completedAt);
    assert.equal(done.estimatedCompletionAt, undefined);
    for (const s of done.stages) {
      assert.equal(s.status, 'completed');
      assert.equal(s.gateValidation.exitGatePassed, true);
      assert.ok(s.tasks.every((t) => t.status === 'completed' && t.taskId && t.progress === 100));
    }
    assert.ok(done.stages[1].gateValidation.outputs.includes('workflowPath'));

    // Dependencies: the guide started after the workflow completed; the notes did not wait.
    const design = done.stages[1].tasks;
    const byKey = Object.fromEntries(design.map((t): [string, OrchestrationTask] => [t.key, t]));
    assert.ok(new Date(byKey.guide.startedAt) >= new Date(byKey.flow.completedAt));
    assert.ok(new Date(byKey.notes.startedAt) < new Date(byKey.flow.completedAt));

    // Each stage's tasks got the outputs of the stages before it.
    const rows = await p.platform.kernel.db.query(`SELECT agent_id, stage, forge, created_by_key FROM control_plane.tasks WHERE orchestration_id = $1`, [
      c.orchestrationId,
    ]);
    assert.equal(rows.length, 5);
    assert.ok(
      rows.every((r: { created_by_key: unknown }) => r.created_by_key === writer.id),
      'the tasks run on behalf of the key that created the orchestration',
    );
    const implement = rows.find((r: { stage: unknown }) => r.stage === 'IMPLEMENT');
    assert.equal(implement.forge.outputs.planPath, 'plans/checkout.md');
    assert.equal(implement.forge.outputs.workflowPath, 'workflows/checkout.json');
    assert.deepEqual(rows.find((r: { stage: unknown }) => r.stage === 'RESEARCH').forge.outputs, {});

    // Webhooks: signed, one per stage and one for the end.
    const mine = await waitFor('4 webhooks', () => {
      const list = receiver.deliveries.slice(before).filter((d) => d.body.orchestrationId === c.orchestrationId);
      return list.length >= 4 ? list : null;
    });
    // Deliveries are independent jobs: their arrival order is not guaranteed.
    assert.deepEqual(mine.map((d) => `${d.event} ${d.body.stage ?? ''}`.trim()).sort(), [
      'orchestration.completed',
      'orchestration.stage_completed DESIGN',
      'orchestration.stage_completed IMPLEMENT',
      'orchestration.stage_completed RESEARCH',
    ]);
    assert.ok(
      mine.every((d) => d.signatureValid),
      'every delivery carries a valid X-SVC-Signature',
    );
    const completed = mine.find((d) => d.event === 'orchestration.completed')!;
    assert.equal(completed.body.event, 'orchestration.completed');
    assert.equal(completed.body.result.success, true);
    assert.equal(completed.headers['x-svc-delivery']?.length, 36);
    const research1 = mine.find((d) => d.body.stage === 'RESEARCH')!;
    assert.equal(research1.body.result.gateValidation.exitGatePassed, true);
    assert.ok(research1.body.result.outputs.planPath);

    // The list: progress is a plain number; filters by status and current stage; pagination.
    const list = await p.rest<V1<OrchestrationList>>('GET', `${ORCH}/list?status=completed&stage=IMPLEMENT&limit=1`, { key: writer.key });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data.orchestrations[0], {
      orchestrationId: c.orchestrationId,
      name: 'Checkout',
      status: 'completed',
      currentStage: 'IMPLEMENT',
      progress: 100,
      createdAt: c.createdAt,
    });
    assert.equal(list.body.data.pagination.limit, 1);
    assert.equal((await p.rest<V1<OrchestrationList>>('GET', `${ORCH}/list?status=paused`)).body.data.orchestrations.length, 0);
    assertError(await p.rest<V1<never>>('GET', `${ORCH}/list?status=sleeping`), 400, 'validation_error');
    assertError(await p.rest<V1<never>>('GET', `${ORCH}/list?limit=500`), 400, 'validation_error');

    // Without includeTaskDetails, no tasks.
    assert.equal((await status(c.orchestrationId)).stages[0].tasks, undefined);
  });

  test('a failed exit gate fails the orchestration with forge_gate_failure and orchestration.failed', async () => {
    const before = receiver.deliveries.length;
    const c = await create({
      name: 'Untested',
      stages: [
        {
          stage: 'IMPLEMENT',
          gateValidation: {},
          tasks: [{ agentId: 'backend-engineer', taskType: 'implement-endpoint', context: { specification: 'NO-TESTS endpoint', language: 'typescript' } }],
        },
        { stage: 'VERIFY', tasks: [guideTask()] },
      ],
      webhook: { url: receiver.url, secret: SECRET, events: ['orchestration.failed'] },
    });
    const failed = await untilStatus(c.orchestrationId, 'failed');
    assert.equal(failed.error.code, 'forge_gate_failure');
    assert.deepEqual(failed.error.details.gate, { stage: 'IMPLEMENT', gateType: 'exit' });
    assert.deepEqual(failed.error.details.failed_criteria, [{ criterion: 'tests', required: true, actual: [] }]);
    assert.equal(failed.stages[0].status, 'failed');
    assert.equal(failed.stages[0].gateValidation.exitGatePassed, false);
    assert.deepEqual(failed.stages[0].gateValidation.missingCriteria, ['tests']);
    assert.equal(failed.stages[1].status, 'pending');
    assert.ok(failed.failedAt);
    const hook = await waitFor('orchestration.failed', () => receiver.deliveries.slice(before).find((d) => d.body.orchestrationId === c.orchestrationId));
    assert.equal(hook.event, 'orchestration.failed');
    assert.equal(hook.signatureValid, true);
    assert.equal(hook.body.error.code, 'forge_gate_failure');
    assertError(await p.rest<V1<never>>('POST', `${ORCH}/${c.orchestrationId}/resume`), 409, 'conflict');
  });

  test('an exit gate names its own required outputs', async () => {
    const c = await create({ name: 'threat model', stages: [{ ...research(), gateValidation: { exit: { required: ['threatModel'] } } }] });
    const failed = await untilStatus(c.orchestrationId, 'failed');
    assert.deepEqual(failed.stages[0].gateValidation.missingCriteria, ['threatModel']);
    assert.equal(failed.error.details.failed_criteria[0].criterion, 'threatModel');
  });

  test('a failed task fails its stage and the orchestration (agent_execution_failed); its running sibling is cancelled', async () => {
    const h = hold('sibling-1');
    const c = await create({
      name: 'doomed',
      stages: [
        {
          stage: 'RESEARCH',
          parallel: true,
          tasks: [
            { id: 'slow', agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: `HOLD:${h}` } },
            { id: 'bad', agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: 'FAIL-TASK' } },
          ],
        },
      ],
    });
    const failed = await untilStatus(c.orchestrationId, 'failed');
    release(h);
    assert.equal(failed.error.code, 'agent_execution_failed');
    assert.equal(failed.error.details.task, 'bad');
    assert.equal(failed.error.details.stage, 'RESEARCH');
    assert.match(failed.error.details.execution_id, /^[0-9a-f-]{36}$/);
    assert.equal(failed.stages[0].status, 'failed');
    const slow = await waitFor('the sibling to be cancelled', async () => {
      const s = await status(c.orchestrationId, true);
      const t = s.stages[0].tasks.find((x: { key: unknown }) => x.key === 'slow')!;
      return t.status === 'cancelled' ? t : null;
    });
    assert.ok(slow.taskId);
  });

  test('a stage without gateValidation is not gated', async () => {
    const c = await create({
      name: 'ungated',
      stages: [
        {
          stage: 'IMPLEMENT',
          tasks: [{ agentId: 'backend-engineer', taskType: 'implement-endpoint', context: { specification: 'NO-TESTS', language: 'go' } }],
        },
      ],
    });
    const done = await untilStatus(c.orchestrationId, 'completed');
    assert.equal(done.stages[0].gateValidation.enabled, false);
    assert.equal(done.stages[0].gateValidation.exitGatePassed, undefined);
  });
});

describe('pause, resume, cancel', () => {
  test('pause: the running task finishes, nothing new starts; resume: it goes on to completion', async () => {
    const h = hold('pause-1');
    const c = await create({
      name: 'pausable',
      stages: [research({ context: { objective: `HOLD:${h}` } }), { stage: 'DESIGN', tasks: [guideTask()] }],
    });
    await waitFor('the first task in the model', () => reached(h));
    const paused = await p.rest<V1<{ pausedAt: string }>>('POST', `${ORCH}/${c.orchestrationId}/pause`, { body: { reason: 'code freeze' } });
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    assert.deepEqual(
      { ...paused.body.data, pausedAt: typeof paused.body.data.pausedAt },
      { orchestrationId: c.orchestrationId, status: 'paused', pausedAt: 'string', reason: 'code freeze', currentStage: 'RESEARCH' },
    );
    assertError(await p.rest<V1<never>>('POST', `${ORCH}/${c.orchestrationId}/pause`), 409, 'conflict');

    release(h);
    const finished = await waitFor('the running task to finish while paused', async () => {
      const s = await status(c.orchestrationId, true);
      return s.stages[0].tasks[0].status === 'completed' ? s : null;
    });
    await sleep(500);
    const still = await status(c.orchestrationId, true);
    assert.equal(still.status, 'paused');
    assert.equal(finished.stages[0].tasksCompleted, 1);
    assert.equal(still.stages[1].status, 'pending');
    assert.equal(still.stages[1].tasks[0].taskId, undefined, 'no task started while paused');

    const resumed = await p.rest<V1<{ status: string; resumedAt: string }>>('POST', `${ORCH}/${c.orchestrationId}/resume`);
    assert.equal(resumed.status, 200);
    assert.equal(resumed.body.data.status, 'running');
    assert.ok(resumed.body.data.resumedAt);
    const done = await untilStatus(c.orchestrationId, 'completed');
    assert.equal(done.result.tasksCompleted, 2);
    assert.ok(done.pausedAt);
  });

  test('cancel: running tasks are cancelled (tasksCancelled), pending ones never start', async () => {
    const h = hold('cancel-1');
    const c = await create({
      name: 'cancellable',
      stages: [
        {
          stage: 'RESEARCH',
          parallel: true,
          tasks: [
            { id: 'one', agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: `HOLD:${h} one` } },
            { id: 'two', agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: `HOLD:${h} two` } },
          ],
        },
        { stage: 'DESIGN', tasks: [guideTask()] },
      ],
    });
    await waitFor('both tasks running', async () =>
      (await status(c.orchestrationId, true)).stages[0].tasks.every((t: { status: unknown }) => t.status === 'running'),
    );
    const cancelled = await p.rest<V1<Cancelled>>('POST', `${ORCH}/${c.orchestrationId}/cancel`, { body: { reason: 'scope changed' } });
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(cancelled.body.data.status, 'cancelled');
    assert.equal(cancelled.body.data.tasksCancelled, 2);
    assert.equal(cancelled.body.data.reason, 'scope changed');
    assert.ok(cancelled.body.data.cancelledAt);
    release(h);

    const s = await status(c.orchestrationId, true);
    assert.equal(s.status, 'cancelled');
    assert.equal(s.stages[0].status, 'cancelled');
    assert.deepEqual(
      s.stages[0].tasks.map((t: { status: unknown }) => t.status),
      ['cancelled', 'cancelled'],
    );
    assert.equal(s.stages[1].tasks[0].status, 'pending');
    const tasks = await p.platform.kernel.db.query(`SELECT status FROM control_plane.tasks WHERE orchestration_id = $1`, [c.orchestrationId]);
    assert.deepEqual(
      tasks.map((t: { status: unknown }) => t.status),
      ['cancelled', 'cancelled'],
    );
    assertError(await p.rest<V1<never>>('POST', `${ORCH}/${c.orchestrationId}/cancel`), 409, 'conflict');
    assertError(await p.rest<V1<never>>('POST', `${ORCH}/${c.orchestrationId}/resume`), 409, 'conflict');
  });

  test('cancel with cancelRunningTasks false lets the running task finish; a paused one can be cancelled', async () => {
    const h = hold('cancel-2');
    const c = await create({ name: 'let it finish', stages: [research({ context: { objective: `HOLD:${h}` } })] });
    await waitFor('the task in the model', () => reached(h));
    await p.rest('POST', `${ORCH}/${c.orchestrationId}/pause`);
    const res = await p.rest<V1<Cancelled>>('POST', `${ORCH}/${c.orchestrationId}/cancel`, { body: { cancelRunningTasks: false } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.tasksCancelled, 0);
    release(h);
    const s = await waitFor('the task to complete', async () => {
      const x = await status(c.orchestrationId, true);
      return x.stages[0].tasks[0].status === 'completed' ? x : null;
    });
    assert.equal(s.status, 'cancelled');
  });
});

describe('orchestrationUpdated over graphql-ws', () => {
  test('emits the whole orchestration on every change, with the same arguments and authorization as the query', async () => {
    const h = hold('sub-1');
    const c = await create({
      name: 'watched',
      stages: [research({ context: { objective: `HOLD:${h}` } }), { stage: 'DESIGN', tasks: [guideTask()] }],
    });
    const reader = await p.createKey({ permissions: ['orchestration:read'] });
    const sub = subscribe<Gql<{ orchestrationUpdated: OrchestrationUpdate }>>(
      ws(p, reader.key),
      `subscription($id: ID!) { orchestrationUpdated(orchestrationId: $id, includeTaskDetails: true) {
            orchestrationId status currentStage progress { stagesCompleted overallPercentage } stages { stage status tasks { status } } } }`,
      { id: c.orchestrationId },
    );
    const { events, errors } = sub;
    await sleep(300);
    release(h);
    await sub.until((v) => v.data?.orchestrationUpdated?.status === 'completed', 15_000);
    assert.deepEqual(errors, []);
    const seen = events.map((e) => e.data.orchestrationUpdated);
    assert.ok(seen.length >= 2, JSON.stringify(seen));
    assert.ok(seen.every((o) => o.orchestrationId === c.orchestrationId && Array.isArray(o.stages[0].tasks)));
    const last = seen.at(-1)!;
    assert.equal(last.status, 'completed');
    assert.equal(last.progress.overallPercentage, 100);
    assert.ok(
      seen.some((o) => o.currentStage === 'DESIGN' && o.status === 'running'),
      'a progress change between the stages was emitted',
    );

    const stranger = await p.createKey({ permissions: ['agent:read'] });
    const refusal = subscribe(ws(p, stranger.key), `subscription($id: ID!) { orchestrationUpdated(orchestrationId: $id) { status } }`, {
      id: c.orchestrationId,
    });
    await refusal.done;
    const refused = refusal.errors[0] as NonNullable<Gql<never>['errors']>;
    assert.equal(refused[0].extensions.code, 'insufficient_permissions');
  });
});

describe('alternate layout: /control-plane/api/v1/orchestration/workflows', () => {
  test('agents grouped by stage run as an orchestration; forge_validation gates every stage', async () => {
    const res = await p.rest<Platform<AltWorkflow>>('POST', '/control-plane/api/v1/orchestration/workflows', {
      body: {
        name: 'alt workflow',
        forge_validation: true,
        agents: [
          { agent_id: 'backend-engineer', stage: 'IMPLEMENT', context: { specification: 'GET /orders', language: 'typescript' } },
          { agent_id: 'factory-orchestrator', stage: 'RESEARCH', context: { objective: 'orders' } },
        ],
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const w = res.body.data;
    assert.match(res.body.metadata.request_id, /^req_/);
    assert.equal(w.status, 'running');
    assert.equal(w.forge_validation, true);
    assert.deepEqual(
      w.stages.map((s: { stage: string; agents: { agent_id: unknown; task_type: unknown }[] }) => [
        s.stage,
        s.agents.map((a: { agent_id: unknown; task_type: unknown }) => [a.agent_id, a.task_type]),
      ]),
      [
        ['RESEARCH', [['factory-orchestrator', 'plan-delivery']]],
        ['IMPLEMENT', [['backend-engineer', 'implement-endpoint']]],
      ],
    );
    const done = await waitFor('the workflow to complete', async () => {
      const r = await p.rest<Platform<AltWorkflow>>('GET', `/control-plane/api/v1/orchestration/workflows/${w.workflow_id}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      if (r.body.data.status === 'failed') throw new Error(JSON.stringify(r.body.data.error));
      return r.body.data.status === 'completed' ? r.body.data : null;
    });
    assert.equal(done.progress.overall_percentage, 100);
    assert.ok(done.stages.every((s: { exit_gate_passed: unknown }) => s.exit_gate_passed === true));
    assert.ok('entryPoint' in done.result.outputs, 'outputs keep their own keys');

    const missing = await p.rest<Platform<never>>('POST', '/control-plane/api/v1/orchestration/workflows', {
      body: { name: 'x', agents: [{ agent_id: 'factory-orchestrator', stage: 'LAUNCH' }] },
    });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.details.errors![0].field, 'agents[0].stage');
    const unknown = await p.rest<Platform<never>>('GET', '/control-plane/api/v1/orchestration/workflows/00000000-0000-4000-8000-000000000000');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'resource_not_found');
  });
});

describe('a restart mid-orchestration', () => {
  test('a new process on the same database carries the orchestration to its end', async () => {
    const database = await createTestDatabase();
    const env = { ...fakeLlmEnv(fake.url), INTERNAL_SECRET: randomBytes(32).toString('hex') };
    // The first process's drain grace (10 s) passes on this clock, moved on once the drain waits on it.
    const clock = testClock();
    const first = await startTestPlatform(env, { database, clock });
    let firstStopped = false;
    const before = receiver.deliveries.length;
    const h = hold('restart-1');
    let c: { orchestrationId: string };
    try {
      c = await create(
        {
          name: 'survivor',
          stages: [
            research({ context: { objective: `HOLD:${h}` } }),
            {
              stage: 'DESIGN',
              gateValidation: {},
              tasks: [{ agentId: 'workflow-architect', taskType: 'design-workflow', context: { goal: 'g', trigger: 'webhook' } }],
            },
          ],
          webhook: { url: receiver.url, secret: SECRET },
        },
        first,
      );
      await waitFor('the first task in the model', () => reached(h));
      // The process stops while the task is in the model: after the drain grace its job is handed
      // back, and the orchestration's rows say RESEARCH is running.
      const stopping = first.stop({ keepDatabase: true }).then(() => (firstStopped = true));
      await until(
        'the first process to stop',
        () => {
          if (clock.sleeping() > 0) clock.advance(1_000);
          return firstStopped;
        },
        30_000,
        50,
      );
      await stopping;
      release(h);
      const [row] = await query(database.url, `SELECT status, current_stage FROM control_plane.orchestrations WHERE orchestration_id = $1`, [
        c.orchestrationId,
      ]);
      assert.deepEqual(row, { status: 'running', current_stage: 'RESEARCH' });
    } finally {
      if (!firstStopped) {
        release(h);
        await first.stop({ keepDatabase: true });
      }
    }

    const second = await startTestPlatform(env, { database });
    try {
      const done = await untilStatus(c.orchestrationId, 'completed', second);
      assert.deepEqual(
        done.stages.map((s: { status: unknown }) => s.status),
        ['completed', 'completed'],
      );
      assert.equal(done.result.tasksCompleted, 2);
      const hooks = await waitFor('webhooks after the restart', () => {
        const list = receiver.deliveries.slice(before).filter((d) => d.body.orchestrationId === c.orchestrationId);
        return list.some((d) => d.event === 'orchestration.completed') ? list : null;
      });
      assert.ok(hooks.every((d) => d.signatureValid));
    } finally {
      await second.stop();
      await database.drop();
    }
  });
});
