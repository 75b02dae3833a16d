import 'reflect-metadata';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from './support/database';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import { fakeLlmEnv } from './support/fixtures';
import type { V1 } from './support/answers';
import type { Execution, ExecutionList } from './support/engine-answers';
import { answerOf } from './support/json';
import { freePort, waitHealthy } from './support/net';
import { until as poll } from './support/until';
import { webhookReceiver } from './support/webhook-receiver';

/**
 * SIGKILL in the middle of everything, then a restart on the same database: a running agent
 * task, a running prompt chain, a workflow execution waiting on a timer, and a webhook delivery
 * whose receiver has not answered yet. Nothing is lost, nothing stays running, and what must
 * happen once happens once. The platform runs as a real process (`node dist/main.js`); a worker
 * silent for WORKER_STALE_AFTER_MS is presumed dead and its jobs taken over.
 */

const MAIN = path.join(__dirname, '..', 'main.js');
const answer = JSON.stringify({ summary: 'done', files: [{ path: 'docs/x.md', content: '# X\n\n## Overview\n' }] });

let db: TestDatabase;
let fake: FakeLlm;
let receiverUrl: string;
let holdMs = 0;
const receiver = webhookReceiver(() => ({ status: 200, body: 'ok', delayMs: holdMs }));
const received = receiver.requests;
const dataDir = mkdtempSync(path.join(tmpdir(), 'resilience-'));
const adminKey = `cp_live_sk_${randomBytes(24).toString('base64url')}`;
const procs: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  fake = await startFakeLlm({ models: ['model-default'] });
  fake.reply(() => answer);
  receiverUrl = `${(await receiver.start()).url}/hook`;
});
afterAll(async () => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  await receiver.close();
  await fake?.close();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startPlatform(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      BOOTSTRAP_API_KEY: adminKey,
      ...fakeLlmEnv(fake.url),
      WORKER_STALE_AFTER_MS: '2000',
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  procs.push(child);
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, 60_000);
  return { url, child };
}

/** Processes start and die here: a longer deadline than `until`'s own, asked less often. */
const until = <T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 30_000) => poll(what, probe, timeoutMs, 100);

/** A task, a chain's execution or a workflow's, in the fields the test reads. */
interface Run {
  status: string;
  error?: { message: string } | null;
}

describe('SIGKILL and restart', () => {
  test('a task, a chain, a waiting execution and a webhook delivery in flight: none lost, none stuck, none run twice', async () => {
    const a = await startPlatform();
    const rest = async <T = unknown>(base: string, method: string, p: string, body?: unknown) => {
      const res = await fetch(base + p, {
        method,
        headers: { authorization: `Bearer ${adminKey}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return answerOf<T>(res);
    };
    // The pieces: two prompts and a chain; a workflow that naps 2 s between two steps.
    for (const [name, template, variable] of [
      ['outline', 'Outline {{topic}}', 'topic'],
      ['expand', 'Expand {{draft}}', 'draft'],
    ] as const) {
      assert.equal((await rest(a.url, 'POST', '/v1/promptlib/prompts', { name, description: name, template, variables: [variable] })).status, 201);
    }
    const chain = await rest(a.url, 'POST', '/v1/promptlib/chains', {
      name: 'article',
      description: 'two steps',
      steps: [
        { order: 1, promptId: 'outline', outputKey: 'outline' },
        { order: 2, promptId: 'expand', outputKey: 'text', inputMapping: { draft: 'step_1.outline' } },
      ],
    });
    assert.equal(chain.status, 201, JSON.stringify(chain.body));
    const wf = await rest<V1<{ workflowId: string }>>(a.url, 'POST', '/v1/engine/workflows', {
      name: 'Patient',
      nodes: [
        { name: 'Start', type: 'engine.manualTrigger' },
        { name: 'Before', type: 'engine.set', parameters: { values: { step: 'before' } } },
        { name: 'Nap', type: 'engine.wait', parameters: { seconds: 2 } },
        { name: 'After', type: 'engine.set', parameters: { values: { step: 'after' } } },
      ],
      connections: { Start: { main: [[{ node: 'Before' }]] }, Before: { main: [[{ node: 'Nap' }]] }, Nap: { main: [[{ node: 'After' }]] } },
    });
    assert.equal(wf.status, 201, JSON.stringify(wf.body));

    // A finished task whose webhook receiver holds the delivery: it is in flight at the kill.
    holdMs = 60_000;
    const hooked = await rest<V1<Run>>(a.url, 'POST', '/v1/control-plane/agents/execute', {
      agentId: 'docs-author',
      taskType: 'write-guide',
      context: { topic: 'hooks', audience: 'ops' },
      webhook: { url: receiverUrl, events: ['task.completed'] },
      execution: { mode: 'sync' },
    });
    assert.equal(hooked.body.data.status, 'completed', JSON.stringify(hooked.body));
    await until('the delivery reached the receiver', async () => received.length === 1);

    // Then work that is running at the kill: a task and a chain mid-model-call, an execution napping.
    fake.delay(60_000);
    const running = await rest<V1<{ taskId: string }>>(a.url, 'POST', '/v1/control-plane/agents/execute', {
      agentId: 'docs-author',
      taskType: 'write-guide',
      context: { topic: 'killed', audience: 'ops' },
    });
    const chainRun = await rest<V1<{ executionId: string }>>(a.url, 'POST', '/v1/promptlib/chains/article/execute', { initialVariables: { topic: 'tides' } });
    assert.equal(chainRun.status, 202, JSON.stringify(chainRun.body));
    const execution = await rest<V1<{ executionId: string }>>(a.url, 'POST', `/v1/engine/workflows/${wf.body.data.workflowId}/execute`, { data: {} });
    const taskId = running.body.data.taskId;
    const chainExecutionId = chainRun.body.data.executionId;
    const executionId = execution.body.data.executionId;
    await until('the task and the chain are mid-call, the execution napping', async () => {
      const t = (await rest<V1<Run>>(a.url, 'GET', `/v1/control-plane/agents/tasks/${taskId}`)).body.data;
      const c = (await rest<V1<Run>>(a.url, 'GET', `/v1/promptlib/chains/executions/${chainExecutionId}`)).body.data;
      const e = (await rest<V1<Run>>(a.url, 'GET', `/v1/engine/executions/${executionId}`)).body.data;
      return t.status === 'running' && c.status === 'running' && e.status === 'waiting' && fake.chatBodies().length >= 3;
    });

    a.child.kill('SIGKILL');
    await new Promise((r) => a.child.once('exit', r));
    fake.delay(0);
    holdMs = 0;

    const b = await startPlatform();
    const get = <T = Run>(p: string) => rest<V1<T>>(b.url, 'GET', p).then((r) => r.body.data);
    const task = await until('the killed task ends', async () => {
      const t = await get(`/v1/control-plane/agents/tasks/${taskId}`);
      return ['completed', 'failed', 'cancelled'].includes(t.status) && t;
    });
    assert.ok(task.status === 'completed' || (task.status === 'failed' && task.error?.message), JSON.stringify(task));
    const chainEnd = await until('the killed chain ends', async () => {
      const c = await get(`/v1/promptlib/chains/executions/${chainExecutionId}`);
      return c.status !== 'running' && c;
    });
    assert.ok(chainEnd.status === 'completed' || (chainEnd.status === 'failed' && chainEnd.error?.message), JSON.stringify(chainEnd));
    const done = await until('the napping execution finishes after the restart', async () => {
      const e = await get<Execution>(`/v1/engine/executions/${executionId}?includeData=true`);
      return e.status !== 'waiting' && e.status !== 'running' && e;
    });
    assert.equal(done.status, 'success', JSON.stringify(done));
    assert.deepEqual(
      done.nodeData.map((n) => n.nodeName),
      ['Start', 'Before', 'Nap', 'After'],
    );
    console.log(
      `after the restart: task ${task.status}, chain ${chainEnd.status}${chainEnd.error ? ` (${chainEnd.error.message})` : ''}, execution ${done.status}`,
    );
    const runs = (await get<ExecutionList>(`/v1/engine/executions?workflowId=${wf.body.data.workflowId}`)).executions;
    assert.equal(runs.length, 1, 'the workflow ran once');

    const delivered = await until('the delivery in flight is delivered', async () => received.length >= 2 && received);
    assert.equal(new Set(delivered.map((r) => r.delivery)).size, 1, 'the same delivery id (receivers can tell a retry)');
    console.log(`the delivery in flight reached the receiver ${delivered.length} times under one id`);
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    try {
      const [delivery] = (await pg.query(`SELECT state FROM platform.webhook_deliveries WHERE id = $1`, [delivered[0]!.delivery])).rows;
      await until(
        'the delivery is recorded as delivered',
        async () => (await pg.query(`SELECT state FROM platform.webhook_deliveries WHERE id = $1`, [delivered[0]!.delivery])).rows[0]?.state === 'delivered',
      );
      assert.ok(delivery);
      const stuck = await until('no job of the killed process stays running', async () => {
        const { rows } = await pg.query(`SELECT count(*)::int AS n FROM platform.jobs WHERE state = 'running'`);
        return rows[0].n === 0 && rows;
      });
      assert.ok(stuck);
      const tasks = (await pg.query(`SELECT count(*)::int AS n FROM control_plane.tasks WHERE id = $1`, [taskId])).rows[0].n;
      assert.equal(tasks, 1);
    } finally {
      await pg.end();
    }
    b.child.kill('SIGTERM');
    assert.equal(await new Promise((r) => b.child.once('exit', r)), 0, 'the restarted platform drains and exits 0');
  });
});
