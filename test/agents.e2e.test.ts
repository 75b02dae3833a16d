import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { JOB } from '../kernel/topics';
import type { ControlPlaneBuilt } from '../subgraphs/control-plane';
import { taskStore, type NewTask } from '../subgraphs/control-plane/tasks';
import { gateCriteria } from '../subgraphs/control-plane/gates';
import { seedAgentPrompts } from '../subgraphs/control-plane/agents';
import { startFakeLlm, type ChatBody, type FakeLlm } from './support/fake-llm';
import { fakeLlmEnv, guideTask } from './support/fixtures';
import type { ErrorBody, Gql, Platform, V1 } from './support/answers';
import { startTestPlatform, type Answer, type TestPlatform } from './support/platform';
import { untilValue } from './support/until';

/** A catalogue entry as these tests read it. */
interface Agent {
  agentId: string;
  name: string;
  domain: string;
  forgeStage: string;
  version: string;
  capabilities: string[];
  inputs: { required: string[]; optional: string[] };
  outputs: Record<string, unknown>;
  averageDuration: number;
  successRate: number;
  totalExecutions: number;
}

/** What the documentation agents write. */
interface DocOutput {
  documentationPath: string;
  quality: unknown;
  sections: string[];
  summary: string;
  notes: string[];
}

/** An agent task as these tests read it; `O` is the output its agent writes. */
interface AgentTask<O = DocOutput> {
  taskId: string;
  agentId: string;
  taskType: string;
  status: string;
  priority: string;
  estimatedDuration: number;
  progress: { percentage: number; currentStep: string; stepsCompleted: number; stepsTotal: number };
  startedAt?: string;
  completedAt?: string | null;
  failedAt?: string;
  duration?: number;
  error?: { code: string; details: Record<string, unknown> };
  result: { output: O; filesCreated: string[]; filesModified: string[]; linesWritten: number; promptId: string; promptVersion: number; model: string };
}

interface TaskList {
  tasks: { taskId: string; completedAt: string | null; duration: number }[];
  pagination: { total: number; limit: number; offset: number; hasMore: boolean };
}

/** The details of a refused execution, each case reading its own. */
interface RefusalDetails {
  [key: string]: unknown;
  errors: { field: string; message: string }[];
  invalid: { field: string }[];
}
type Refused = V1<never> & { error: ErrorBody & { details: RefusalDetails } };

/**
 * The agent catalogue and agent tasks through the main layout (/v1/control-plane), GraphQL and
 * the alternate layout, against a real PostgreSQL and a local OpenAI-compatible fake.
 */

const CP = '/v1/control-plane';
let p: TestPlatform;
let fake: FakeLlm;

/** What a good model answers: the main file the prompt names, with every expected section, an example and a valid link. */
function goodAnswer(body: ChatBody): string {
  const prompt: string = body.messages.at(-1)!.content;
  const main = /The main file is (\S+)/.exec(prompt)![1]!;
  const sections = /The main file has these sections, as headings: ([^\n]+)\./.exec(prompt)?.[1]?.split(', ') ?? ['Overview'];
  const doc = [
    `# Guide`,
    '',
    'See the [reference](reference.md).',
    ...sections.flatMap((s) => ['', `## ${s}`, '', `About ${s.toLowerCase()}.`, '', '```sh', 'curl -s localhost:4000/health', '```']),
  ].join('\n');
  const dir = main.includes('/') ? main.slice(0, main.lastIndexOf('/') + 1) : '';
  return JSON.stringify({
    summary: 'Wrote the guide and its reference page.',
    files: [
      { path: main, content: `${doc}\n`, action: 'create' },
      { path: `${dir}reference.md`, content: '# Reference\n\nThe endpoints.\n', action: 'create' },
    ],
  });
}

/** The required criteria of a gate, from the gate catalogue. */
const required = (stage: 'DESIGN', gateType: 'entry' | 'exit') =>
  gateCriteria(stage, gateType)
    .filter((c) => c.required)
    .map((c) => c.name);

/** The task once it has ended (completed, failed or cancelled). */
const waitFor = (taskId: string) =>
  untilValue(
    `task ${taskId} to end`,
    async () => {
      const res = await p.rest<V1<AgentTask>>('GET', `${CP}/agents/tasks/${taskId}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data;
    },
    (t) => ['completed', 'failed', 'cancelled'].includes(t.status),
    { timeoutMs: 10_000, everyMs: 30 },
  );

const guide = (extra: Record<string, unknown> = {}) => guideTask({ topic: 'Signing webhooks', audience: 'backend developers' }, extra);

beforeAll(async () => {
  fake = await startFakeLlm({ models: ['model-default', 'model-b'] });
  p = await startTestPlatform(fakeLlmEnv(fake.url, 'model-default,model-b'));
});
afterAll(async () => {
  await p?.stop();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  fake.reply(goodAnswer);
});

describe('GET /v1/control-plane/agents/{agentId}', () => {
  test('the catalogue: 20 agents in 7 domains, each with its metadata', async () => {
    const res = await p.rest<V1<{ agents: Agent[] }>>('GET', `${CP}/agents`);
    assert.equal(res.status, 200);
    const agents = res.body.data.agents;
    assert.equal(agents.length, 20);
    assert.deepEqual([...new Set(agents.map((a: { domain: unknown }) => a.domain))].sort(), [
      'automation',
      'devops',
      'documentation',
      'engineering',
      'incident',
      'orchestration',
      'prompts',
    ]);
    for (const a of agents) {
      assert.ok(a.capabilities.length >= 2 && a.capabilities.includes('custom'), a.agentId);
      assert.ok(['RESEARCH', 'DESIGN', 'IMPLEMENT', 'VERIFY', 'DEPLOY', 'MONITOR'].includes(a.forgeStage));
      assert.ok(a.inputs.required.length >= 1 && Array.isArray(a.inputs.optional));
      assert.equal(typeof a.outputs.summary, 'string');
    }
    const byDomain = await p.rest<V1<{ agents: Agent[] }>>('GET', `${CP}/agents?domain=incident`);
    assert.deepEqual(
      byDomain.body.data.agents.map((a: { agentId: unknown }) => a.agentId),
      ['incident-commander', 'triage-responder', 'postmortem-analyst'],
    );
  });

  test('one agent, with figures from its real task history', async () => {
    const fresh = await p.rest<V1<Agent>>('GET', `${CP}/agents/runbook-writer`);
    assert.equal(fresh.status, 200);
    const a = fresh.body.data;
    assert.equal(a.name, 'Runbook Writer');
    assert.equal(a.domain, 'documentation');
    assert.equal(a.forgeStage, 'MONITOR');
    assert.equal(a.version, '1.0.0');
    assert.deepEqual(a.capabilities, ['write-runbook', 'custom']);
    assert.deepEqual(a.inputs, { required: ['service', 'scenario'], optional: ['alerts', 'dashboards', 'escalation'] });
    assert.ok(a.outputs.documentationPath && a.outputs.quality);
    assert.equal(a.averageDuration, 0, 'a number: 0 without history');
    assert.equal(a.successRate, 0, 'a number: 0 without history');
    assert.equal(a.totalExecutions, 0);

    const ok = await p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, {
      body: { agentId: 'runbook-writer', taskType: 'write-runbook', context: { service: 'api', scenario: 'database failover' }, execution: { mode: 'sync' } },
    });
    assert.equal(ok.body.data.status, 'completed');
    fake.reply(() => ({ status: 500 }));
    const ko = await p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, {
      body: { agentId: 'runbook-writer', taskType: 'write-runbook', context: { service: 'api', scenario: 'disk full' }, execution: { mode: 'sync' } },
    });
    assert.equal(ko.body.data.status, 'failed');
    const after = (await p.rest<V1<Agent>>('GET', `${CP}/agents/runbook-writer`)).body.data;
    assert.equal(after.totalExecutions, 2);
    assert.equal(after.successRate, 50);
    assert.equal(after.averageDuration, ok.body.data.duration);
  });

  test('unknown agent: 404 AGENT_NOT_FOUND; agent:read is required', async () => {
    const res = await p.rest<V1<never>>('GET', `${CP}/agents/nobody`);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'AGENT_NOT_FOUND');
    assert.match(res.body.meta.requestId, /^req_/);
    const executor = await p.createKey({ permissions: ['agent:execute'] });
    const denied = await p.rest<V1<never>>('GET', `${CP}/agents/docs-author`, { key: executor.key });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'insufficient_permissions');
    assert.equal((await p.rest('GET', `${CP}/agents/docs-author`, { key: null })).status, 401);
  });
});

describe('POST /v1/control-plane/agents/execute', () => {
  test('async: 202 queued with an estimate, then the task runs through the prompt library and the model', async () => {
    const res = await p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, { body: guide() });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const d = res.body.data;
    assert.deepEqual(Object.keys(d).sort(), ['agentId', 'createdAt', 'estimatedDuration', 'status', 'taskId', 'taskType']);
    assert.equal(d.status, 'queued');
    assert.equal(typeof d.estimatedDuration, 'number');

    const t = await waitFor(d.taskId);
    assert.equal(t.status, 'completed', JSON.stringify(t));
    assert.deepEqual(t.progress, { percentage: 100, currentStep: 'completed', stepsCompleted: 3, stepsTotal: 3 });
    assert.ok(t.startedAt && t.completedAt && typeof t.duration === 'number');
    const out = t.result.output;
    assert.equal(out.documentationPath, 'docs/guides/signing-webhooks.md');
    assert.deepEqual(out.quality, { completeness: 1, examplesIncluded: true, crossReferencesValid: true });
    assert.deepEqual(out.sections.slice(0, 2), ['Guide', 'Overview']);
    assert.equal(out.summary, 'Wrote the guide and its reference page.');
    assert.deepEqual(t.result.filesCreated, ['docs/guides/signing-webhooks.md', 'docs/guides/reference.md']);
    assert.deepEqual(t.result.filesModified, []);
    assert.ok(t.result.linesWritten > 20);
    assert.equal(t.result.promptId, 'docs-author-write-guide');
    assert.equal(t.result.model, 'model-default');

    // The model was asked with the rendered prompt: the task's context and the JSON contract.
    const [asked] = fake.chatBodies();
    const prompt = asked.messages[0].content;
    assert.match(prompt, /Signing webhooks/);
    assert.match(prompt, /backend developers/);
    assert.match(prompt, /^keys: summary, files$/m);
    assert.match(prompt, /- outline \(optional\): \(not provided\)/);

    const files = await p.rest<V1<{ artifacts: { path: string; kind: string; content: string }[] }>>('GET', `${CP}/agents/tasks/${d.taskId}/artifacts`);
    assert.equal(files.body.data.artifacts.length, 2);
    const main = files.body.data.artifacts.find((a: { path: unknown }) => a.path === out.documentationPath)!;
    assert.equal(main.kind, 'created');
    assert.match(main.content, /## Troubleshooting/);

    // The overview's polling alias answers the same task.
    const alias = await p.rest<V1<AgentTask>>('GET', `/v1/control-plane/tasks/${d.taskId}`);
    assert.equal(alias.status, 200);
    assert.deepEqual(alias.body.data, t);
  });

  test('sync: the finished task in the answer; a failed task is still a success envelope', async () => {
    const ok = await p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, { body: guide({ execution: { mode: 'sync', priority: 'high', timeout: 60 } }) });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.data.status, 'completed');
    assert.equal(ok.body.data.priority, 'high');
    assert.ok(ok.body.data.result.filesCreated.length);

    fake.reply(() => ({ status: 503 }));
    const ko = await p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, { body: guide({ execution: { mode: 'sync' } }) });
    assert.equal(ko.status, 200);
    assert.equal(ko.body.success, true);
    assert.equal(ko.body.data.status, 'failed');
    assert.equal(ko.body.data.error!.code, 'upstream_error');
    assert.ok(ko.body.data.failedAt);
    const got = await p.rest<V1<AgentTask>>('GET', `${CP}/agents/tasks/${ko.body.data.taskId}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.success, true);
    assert.equal(got.body.data.error!.code, 'upstream_error');
  });

  test('an answer without files still ends with the main file; update-docs modifies the file it names', async () => {
    fake.reply(() => 'Just prose, no JSON.');
    const t = (
      await p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, {
        body: {
          agentId: 'docs-author',
          taskType: 'update-docs',
          context: { docPath: 'docs/setup.md', changes: 'PORT defaults to 4000' },
          execution: { mode: 'sync' },
        },
      })
    ).body.data;
    assert.equal(t.status, 'completed');
    assert.deepEqual(t.result.filesModified, ['docs/setup.md']);
    assert.deepEqual(t.result.filesCreated, []);
    assert.equal(t.result.linesWritten, 1);
    assert.match(t.result.output.notes[0], /not JSON/);
  });

  test('domain outputs are measured on the files (devops manifests, schedules, pipeline audits, gate reviews)', async () => {
    fake.reply(() =>
      JSON.stringify({ summary: 's', files: [{ path: 'deploy/api/deployment.yaml', content: 'kind: Deployment\nmetadata: {name: api\n', action: 'create' }] }),
    );
    const manifest = (
      await p.rest<V1<AgentTask<{ manifestPath: string; validation: { valid: boolean } }>>>('POST', `${CP}/agents/execute`, {
        body: { agentId: 'platform-deployer', taskType: 'write-manifest', context: { service: 'api', image: 'api:1' }, execution: { mode: 'sync' } },
      })
    ).body.data;
    assert.equal(manifest.result.output.manifestPath, 'deploy/api/deployment.yaml');
    assert.equal(manifest.result.output.validation.valid, false);

    fake.reply(() => JSON.stringify({ summary: 's', files: [{ path: 'schedules/optimization.md', content: '# Proposed\n\ncron: 7 2 * * *\n' }] }));
    const schedules = (
      await p.rest<V1<AgentTask<{ schedules: { name: string; valid: boolean }[]; conflicts: { a: string; b: string }[] }>>>('POST', `${CP}/agents/execute`, {
        body: {
          agentId: 'schedule-optimizer',
          taskType: 'optimize-schedules',
          context: {
            schedules: [
              { name: 'backup', cron: '0 2 * * *' },
              { name: 'report', cron: '0 */2 * * *' },
              { name: 'broken', cron: 'every day' },
            ],
          },
          execution: { mode: 'sync' },
        },
      })
    ).body.data.result.output;
    assert.deepEqual(
      schedules.schedules.map((s: { name: unknown; valid: unknown }) => [s.name, s.valid]),
      [
        ['backup', true],
        ['report', true],
        ['broken', false],
        ['proposed-1', true],
      ],
    );
    assert.deepEqual(
      schedules.conflicts.map((c: { a: unknown; b: unknown }) => [c.a, c.b]),
      [['backup', 'report']],
    );

    fake.reply(() => 'report');
    const audit = (
      await p.rest<V1<AgentTask<{ findings: { rule: string }[] }>>>('POST', `${CP}/agents/execute`, {
        body: {
          agentId: 'pipeline-auditor',
          taskType: 'audit-pipeline',
          context: { pipeline: 'on: push\njobs:\n  b:\n    steps:\n      - uses: actions/checkout@v4\n      - run: echo ${{ secrets.TOKEN }}\n' },
          execution: { mode: 'sync' },
        },
      })
    ).body.data.result.output;
    assert.deepEqual(audit.findings.map((f: { rule: unknown }) => f.rule).sort(), ['default-token-permissions', 'secret-in-log', 'unpinned-action']);

    const gate = (
      await p.rest<V1<AgentTask<{ recommendation: string; gate: { missingCriteria: string[] } }>>>('POST', `${CP}/agents/execute`, {
        body: {
          agentId: 'forge-gatekeeper',
          taskType: 'review-gate',
          context: { stage: 'DESIGN', gateType: 'exit', outputs: {} },
          execution: { mode: 'sync' },
        },
      })
    ).body.data.result.output;
    assert.equal(gate.recommendation, 'hold');
    assert.deepEqual(gate.gate.missingCriteria, required('DESIGN', 'exit'));
  });

  test('validation before anything is stored', async () => {
    const count = async () => (await p.platform.kernel.db.query(`SELECT count(*)::int AS n FROM control_plane.tasks`))[0].n;
    const before = await count();
    const cases: [unknown, number, string, (d: RefusalDetails) => void][] = [
      [{ taskType: 'write-guide', context: {} }, 400, 'validation_error', (d) => assert.match(`${d.errors[0].field} ${d.errors[0].message}`, /agentId/)],
      [{ ...guide(), agentId: 'nobody' }, 404, 'AGENT_NOT_FOUND', (d) => assert.equal(d.agentId, 'nobody')],
      [
        { ...guide(), taskType: 'write-poem' },
        400,
        'INVALID_TASK_TYPE',
        (d) => assert.deepEqual(d.supportedTaskTypes, ['write-guide', 'api-reference', 'update-docs', 'custom']),
      ],
      [{ ...guide(), context: { topic: 'x', audience: '  ' } }, 422, 'CONTEXT_VALIDATION_FAILED', (d) => assert.deepEqual(d.missing, ['audience'])],
      [
        { agentId: 'forge-gatekeeper', taskType: 'review-gate', context: { stage: 'LAUNCH', gateType: 'exit' } },
        422,
        'CONTEXT_VALIDATION_FAILED',
        (d) =>
          assert.deepEqual(
            d.invalid.map((i: { field: unknown }) => i.field),
            ['stage'],
          ),
      ],
      [guide({ execution: { timeout: 4 } }), 400, 'validation_error', (d) => assert.equal(d.errors[0].field, 'execution.timeout')],
      [guide({ execution: { timeout: 3601 } }), 400, 'validation_error', (d) => assert.equal(d.errors[0].field, 'execution.timeout')],
      [guide({ execution: { priority: 'urgent' } }), 400, 'validation_error', (d) => assert.equal(d.errors[0].field, 'execution.priority')],
      [guide({ forge: { validateGates: true } }), 400, 'validation_error', (d) => assert.equal(d.errors[0].field, 'forge.stage')],
      [guide({ webhook: { url: 'ftp://example.com/hook' } }), 400, 'WEBHOOK_INVALID', (d) => assert.equal(d.field, 'webhook.url')],
      [
        guide({ webhook: { url: 'https://example.com/hook', events: ['task.exploded'] } }),
        400,
        'validation_error',
        (d) => assert.equal(d.errors[0].field, 'webhook.events'),
      ],
      [guide({ config: { temperature: 3 } }), 400, 'invalid_agent_configuration', (d) => assert.equal(d.valid_range, '0.0-1.0')],
      [guide({ config: { model: 'gpt-99' } }), 400, 'invalid_agent_configuration', (d) => assert.equal(d.field, 'config.model')],
    ];
    for (const [body, status, code, check] of cases) {
      const res = await p.rest<Refused>('POST', `${CP}/agents/execute`, { body });
      assert.equal(res.status, status, `${JSON.stringify(body)} -> ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, code);
      check(res.body.error.details);
    }
    assert.equal(await count(), before);
  });

  test('https webhooks only, unless WEBHOOK_ALLOW_HTTP (checked at execute, before storing)', async () => {
    // This platform allows http (tests); the policy itself is kernel/outbound.ts's, proven there.
    const res = await p.rest<V1<never>>('POST', `${CP}/agents/execute`, { body: guide({ webhook: { url: 'not a url' } }) });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'WEBHOOK_INVALID');
  });

  test('forge.validateGates: an unmet entry gate fails the task with GATE_VALIDATION_FAILED', async () => {
    const needed = required('DESIGN', 'entry');
    assert.ok(needed.length > 0);
    const res = await p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, {
      body: guide({ forge: { stage: 'DESIGN', validateGates: true, outputs: { unrelated: 'x' } }, execution: { mode: 'sync' } }),
    });
    const t = res.body.data;
    assert.equal(t.status, 'failed');
    assert.equal(t.error!.code, 'GATE_VALIDATION_FAILED');
    assert.equal(t.error!.details.stage, 'DESIGN');
    assert.deepEqual(t.error!.details.missingOutputs, needed);
    assert.ok(t.startedAt, 'the task ran and moved to failed');
    assert.equal(fake.chatBodies().length, 0, 'the model was not called');

    const outputs = Object.fromEntries(needed.map((n) => [n, `the ${n}`]));
    const passed = (
      await p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, {
        body: guide({ forge: { stage: 'DESIGN', validateGates: true, outputs }, execution: { mode: 'sync' } }),
      })
    ).body.data;
    assert.equal(passed.status, 'completed');
    assert.equal(passed.progress.stepsTotal, 4);
    const prompt = fake.chatBodies()[0].messages[0].content;
    assert.match(prompt, /Delivery stage: DESIGN/);
    assert.ok(prompt.includes(`the ${needed[0]}`), 'earlier stages’ outputs reach the prompt');
  });

  test('a prompt change in the prompt library reaches the agents at once, and survives a re-seed', async () => {
    const id = 'incident-commander-status-update';
    fake.reply(() => 'ok');
    const upd = await p.rest('PUT', `/v1/promptlib/prompts/${id}`, {
      body: { template: 'Status of {{incident}}: {{status}}. Respond with JSON.\nkeys: summary, files', createNewVersion: true },
    });
    assert.equal(upd.status, 200, JSON.stringify(upd.body));
    const t = (
      await p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, {
        body: { agentId: 'incident-commander', taskType: 'status-update', context: { incident: 'INC-7', status: 'mitigated' }, execution: { mode: 'sync' } },
      })
    ).body.data;
    assert.equal(t.status, 'completed');
    assert.equal(t.result.promptVersion, 2);
    assert.equal(fake.chatBodies()[0].messages[0].content, 'Status of INC-7: mitigated. Respond with JSON.\nkeys: summary, files');

    assert.deepEqual(await seedAgentPrompts(p.platform.kernel.operations, p.platform.kernel.logger), []);
    const prompt = await p.rest<V1<{ version: number; template: string }>>('GET', `/v1/promptlib/prompts/${id}`);
    assert.equal(prompt.body.data.version, 2);
    assert.match(prompt.body.data.template, /^Status of/);
  });
  test('start-up seeding looks the agent prompts up in one operation, and creates only the missing ones', async () => {
    const real = p.platform.kernel.operations;
    const calls: string[] = [];
    const counting = {
      execute: (query: string, variables?: Record<string, unknown>) => {
        calls.push(/(query|mutation) (\w+)/.exec(query)![2]!);
        return real.execute(query, variables);
      },
    } as typeof real;
    assert.deepEqual(await seedAgentPrompts(counting, p.platform.kernel.logger), []);
    assert.deepEqual(calls, ['SeedPromptsExisting'], 'a restart with every prompt present makes one look-up');

    await p.platform.kernel.db.query(`DELETE FROM promptlib.prompts WHERE prompt_id IN ('docs-author-write-guide', 'incident-commander-coordinate-incident')`);
    calls.length = 0;
    const created = await seedAgentPrompts(counting, p.platform.kernel.logger);
    assert.deepEqual(created.sort(), ['docs-author-write-guide', 'incident-commander-coordinate-incident']);
    assert.equal(calls[0], 'SeedPromptsExisting');
    assert.equal(calls.filter((c) => c === 'SeedPromptsExisting').length, 1);
    assert.equal(calls.length, 1 + 2 * 2, 'one create and one activation per missing prompt');
    const back = await p.rest<V1<{ status: string }>>('GET', '/v1/promptlib/prompts/docs-author-write-guide');
    assert.equal(back.body.data.status, 'active');
  });

  test('a key runs at most its tier’s concurrent executions: 429 RATE_LIMIT_EXCEEDED with Retry-After', async () => {
    fake.delay(3000);
    const k = await p.createKey({ permissions: ['agent:execute', 'agent:read'], tier: 'free' });
    // Concurrent requests cannot overshoot the limit: exactly two of four get in.
    const burst = await Promise.all([1, 2, 3, 4].map(() => p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, { key: k.key, body: guide() })));
    assert.deepEqual(burst.map((r) => r.status).sort(), [202, 202, 429, 429]);
    const [first, second] = burst.filter((r) => r.status === 202) as [Answer<V1<AgentTask>>, Answer<V1<AgentTask>>];
    const third = burst.find((r) => r.status === 429)!;
    assert.equal(third.status, 429, JSON.stringify(third.body));
    assert.equal(third.body.error.code, 'RATE_LIMIT_EXCEEDED');
    assert.deepEqual({ ...third.body.error.details, retryAfter: 0 }, { limit: 2, window: 'concurrent', retryAfter: 0, tier: 'free', active: 2 });
    assert.equal(third.headers.get('retry-after'), String(third.body.error.details.retryAfter));
    // Other keys are not affected; a cancelled task frees its slot.
    const other = await p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, { body: guide() });
    assert.equal(other.status, 202);
    await p.rest('POST', `${CP}/agents/tasks/${other.body.data.taskId}/cancel`);
    assert.equal((await p.rest('POST', `${CP}/agents/tasks/${first.body.data.taskId}/cancel`, { key: k.key })).status, 200);
    const fourth = await p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, { key: k.key, body: guide() });
    assert.equal(fourth.status, 202);
    for (const r of [second, fourth]) await p.rest('POST', `${CP}/agents/tasks/${r.body.data.taskId}/cancel`, { key: k.key });
  });
  /** A task for taskStore.insertQueued, its job due in an hour (no worker starts it meanwhile): `fields` over plain defaults. */
  const newTask = (fields: Partial<Omit<NewTask, 'id' | 'job'>> = {}): NewTask => {
    const id = randomUUID();
    const queue = (p.platform.services['control-plane'] as ControlPlaneBuilt).agentQueue;
    return {
      id,
      agent_id: 'docs-author',
      task_type: 'write-guide',
      priority: 'normal',
      mode: 'async',
      timeout_seconds: 60,
      context: { topic: id },
      forge: null,
      model_config: null,
      webhook_url: null,
      webhook_events: null,
      webhook_secret_enc: null,
      created_by_key: null,
      orchestration_id: null,
      stage: null,
      estimated_duration: 1,
      limit: null,
      ...fields,
      job: queue.jobSpec(JOB.task, { taskId: id, notifyStart: false }, { key: `${JOB.task}:${id}`, runAt: new Date(Date.now() + 3_600_000) }),
    };
  };
  test('creations made together are one statement: each key gets its tasks in order up to its limit, the others none and no job', async () => {
    const [a, b] = [await p.createKey({ tier: 'free' }), await p.createKey({ tier: 'free' })];
    const row = (key: string | null, limit: number | null): NewTask =>
      newTask({
        created_by_key: key,
        limit,
        ...(key && {
          webhook_url: 'https://hooks.example.com/tasks',
          webhook_events: ['task.completed', 'task.failed'],
          webhook_secret_enc: Buffer.from(`secret of a task of ${key}`),
        }),
      });
    const rows = [row(a.id, 2), row(a.id, 2), row(b.id, 2), row(a.id, 2), row(null, null), row(a.id, 2)];
    const created = await taskStore.insertQueued(p.platform.kernel.db, rows);
    assert.deepEqual(
      created.map((c) => [c.task?.id ?? null, c.activeBefore]),
      [
        [rows[0]!.id, 0],
        [rows[1]!.id, 1],
        [rows[2]!.id, 0],
        [null, 2],
        [rows[4]!.id, null],
        [null, 3],
      ],
    );
    // Each answer is its own task's row as stored (the answers are matched to the tasks by their order).
    for (const c of created) if (c.task) assert.deepEqual(c.task, await taskStore.byId(p.platform.kernel.db, c.task.id));
    const stored = await p.platform.kernel.db.query(
      `SELECT t.id, t.status, t.webhook_events, t.webhook_secret_enc, j.state, j.data->>'taskId' AS job_task FROM control_plane.tasks t JOIN platform.jobs j ON j.id = t.job_id
        WHERE t.id = ANY($1::uuid[]) ORDER BY t.created_at, t.id`,
      [rows.map((r) => r.id)],
    );
    assert.deepEqual(stored.map((r: { id: unknown }) => r.id).sort(), [rows[0]!.id, rows[1]!.id, rows[2]!.id, rows[4]!.id].sort());
    for (const r of stored) {
      const given = rows.find((x) => x.id === r.id)!;
      assert.deepEqual([r.status, r.state, r.job_task], ['queued', 'queued', r.id]);
      assert.deepEqual([r.webhook_events, r.webhook_secret_enc], [given.webhook_events, given.webhook_secret_enc]);
    }
    const refused = [rows[3]!, rows[5]!].map((r) => `${JOB.task}:${r.id}`);
    assert.equal((await p.platform.kernel.db.query(`SELECT count(*)::int AS n FROM platform.jobs WHERE key = ANY($1)`, [refused]))[0].n, 0);
    for (const r of created) if (r.task) await p.rest('POST', `${CP}/agents/tasks/${r.task.id}/cancel`);
  });
  test('a created task is answered as it is stored: the statement returns only what the database set, the rest is what was written', async () => {
    const task = newTask({
      priority: 'high',
      mode: 'sync',
      timeout_seconds: 90,
      context: { topic: 'Webhooks', audience: 'operators', nested: { list: [1, 'two', null, 2.5], flag: true } },
      forge: { stage: 'DESIGN', validateGates: false, outputs: { spec: { pages: 3 } } },
      model_config: { model: 'gpt-4o-mini', temperature: 0.3, maxTokens: 900 },
      webhook_url: 'https://hooks.example.com/tasks',
      webhook_events: ['task.failed'],
      webhook_secret_enc: Buffer.from('sealed'),
      stage: 'DESIGN',
      estimated_duration: 12.345,
    });
    const [created] = await taskStore.insertQueued(p.platform.kernel.db, [task]);
    assert.ok(created?.task);
    assert.deepEqual(created.task, await taskStore.byId(p.platform.kernel.db, task.id));
    await p.rest('POST', `${CP}/agents/tasks/${task.id}/cancel`);
  });
});

describe('GET /v1/control-plane/agents/tasks', () => {
  test('filters, sorts and pages', async () => {
    fake.reply(goodAnswer);
    const run = (body: unknown) => p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, { body: { ...(body as object), execution: { mode: 'sync' } } });
    const ids: string[] = [];
    for (const topic of ['a', 'b', 'c'])
      ids.push((await run({ agentId: 'api-documenter', taskType: 'changelog', context: { version: `1.${topic}`, changes: topic } })).body.data.taskId);
    fake.reply(() => ({ status: 500 }));
    ids.push((await run({ agentId: 'api-documenter', taskType: 'changelog', context: { version: '2.0', changes: 'x' } })).body.data.taskId);

    const page1 = await p.rest<V1<TaskList>>('GET', `${CP}/agents/tasks?agentId=api-documenter&limit=2&sortOrder=asc`);
    assert.equal(page1.status, 200);
    assert.deepEqual(page1.body.data.pagination, { total: 4, limit: 2, offset: 0, hasMore: true });
    assert.deepEqual(
      page1.body.data.tasks.map((t: { taskId: unknown }) => t.taskId),
      ids.slice(0, 2),
    );
    assert.deepEqual(Object.keys(page1.body.data.tasks[0]).sort(), ['agentId', 'completedAt', 'createdAt', 'duration', 'status', 'taskId', 'taskType']);
    const page2 = await p.rest<V1<TaskList>>('GET', `${CP}/agents/tasks?agentId=api-documenter&limit=2&offset=2&sortOrder=asc`);
    assert.deepEqual(
      page2.body.data.tasks.map((t: { taskId: unknown }) => t.taskId),
      ids.slice(2),
    );
    assert.equal(page2.body.data.pagination.hasMore, false);

    const newest = await p.rest<V1<TaskList>>('GET', `${CP}/agents/tasks?agentId=api-documenter`);
    assert.deepEqual(
      newest.body.data.tasks.map((t: { taskId: unknown }) => t.taskId),
      [...ids].reverse(),
    );
    const failed = await p.rest<V1<TaskList>>('GET', `${CP}/agents/tasks?agentId=api-documenter&status=failed`);
    assert.deepEqual(
      failed.body.data.tasks.map((t: { taskId: unknown }) => t.taskId),
      [ids[3]],
    );
    assert.equal(failed.body.data.tasks[0].completedAt, null);

    const byCompletion = (await p.rest<V1<TaskList>>('GET', `${CP}/agents/tasks?agentId=api-documenter&sortBy=completedAt&sortOrder=desc`)).body.data.tasks;
    assert.deepEqual(
      byCompletion.map((t: { taskId: unknown }) => t.taskId),
      [ids[2], ids[1], ids[0], ids[3]],
      'unfinished last',
    );
    const byDuration = (await p.rest<V1<TaskList>>('GET', `${CP}/agents/tasks?agentId=api-documenter&sortBy=duration&sortOrder=asc`)).body.data.tasks;
    const durations = byDuration.map((t: { duration: number }) => t.duration);
    assert.deepEqual(
      durations,
      [...durations].sort((a: number, b: number) => a - b),
    );

    for (const [q, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['offset=-1', 'offset'],
      ['sortBy=name', 'sortBy'],
      ['sortOrder=up', 'sortOrder'],
      ['status=done', 'status'],
    ]) {
      const bad = await p.rest<V1<never>>('GET', `${CP}/agents/tasks?${q}`);
      assert.equal(bad.status, 400, q);
      assert.equal(bad.body.error.details.errors![0].field, field);
    }
  });

  test('unknown task: 404 resource_not_found; cancelling a finished task: 409', async () => {
    const missing = await p.rest<V1<never>>('GET', `${CP}/agents/tasks/00000000-0000-4000-8000-000000000000`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'resource_not_found');
    assert.equal((await p.rest('GET', `${CP}/agents/tasks/not-a-uuid`)).status, 404);
    const done = (await p.rest<V1<AgentTask>>('POST', `${CP}/agents/execute`, { body: guide({ execution: { mode: 'sync' } }) })).body.data;
    const again = await p.rest<V1<never>>('POST', `${CP}/agents/tasks/${done.taskId}/cancel`, { body: { reason: 'too late' } });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'conflict');
    assert.equal(again.body.error.details.status, 'completed');
  });
});

describe('POST /control-plane/api/v1/agents/{agent_id}/execute (alternate layout)', () => {
  test('runs the agent synchronously on a free-form input with the model config', async () => {
    const res = await p.rest<
      Platform<{
        execution_id: string;
        agent_id: string;
        status: string;
        output: { entryPoint: string; files_created: string[] };
        metrics: { duration_ms: number; tokens_used: number };
      }>
    >('POST', '/control-plane/api/v1/agents/backend-engineer/execute', {
      body: { input: 'Add a health endpoint', config: { temperature: 0.3, max_tokens: 256 } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const d = res.body.data;
    assert.match(d.execution_id, /^[0-9a-f-]{36}$/);
    assert.equal(d.agent_id, 'backend-engineer');
    assert.equal(d.status, 'completed');
    assert.equal(d.output.entryPoint, 'src/requests/add-a-health-endpoint.md');
    assert.deepEqual(d.output.files_created, ['src/requests/add-a-health-endpoint.md', 'src/requests/reference.md']);
    assert.ok(d.metrics.duration_ms >= 0 && d.metrics.tokens_used > 0);
    assert.match(res.body.metadata.request_id, /^req_/);
    const asked = fake.chatBodies()[0];
    assert.equal(asked.temperature, 0.3);
    assert.equal(asked.max_tokens ?? asked.max_completion_tokens, 256);
    assert.match(asked.messages[0].content, /Add a health endpoint/);
    // The same task through the main layout.
    assert.equal((await p.rest<V1<AgentTask>>('GET', `${CP}/agents/tasks/${d.execution_id}`)).body.data.taskType, 'custom');
  });

  test('errors in the platform envelope', async () => {
    const unknown = await p.rest<Platform<never>>('POST', '/control-plane/api/v1/agents/nobody/execute', { body: { input: 'x' } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'AGENT_NOT_FOUND');
    assert.ok(unknown.body.metadata.request_id);
    const noInput = await p.rest<Platform<never>>('POST', '/control-plane/api/v1/agents/docs-author/execute', { body: { config: {} } });
    assert.equal(noInput.status, 400);
    assert.equal(noInput.body.error.details.errors![0].field, 'input');
    const badConfig = await p.rest<Platform<never>>('POST', '/control-plane/api/v1/agents/docs-author/execute', {
      body: { input: 'x', config: { max_tokens: 0 } },
    });
    assert.equal(badConfig.status, 400);
    assert.equal(badConfig.body.error.code, 'invalid_agent_configuration');
  });
});

describe('GraphQL', () => {
  test('executeTask, task with artifacts, tasks — with the same permissions', async () => {
    const exec = await p.graphql<
      Gql<{ executeTask: { taskId: string; status: string; result: { filesCreated: string[] }; artifacts: { path: string; kind: string; lines: number }[] } }>
    >(`mutation($input: ExecuteTaskInput!) { executeTask(input: $input) { taskId status result { filesCreated } artifacts { path kind lines } } }`, {
      input: guide({ execution: { mode: 'sync' } }),
    });
    assert.deepEqual(exec.body.errors, undefined);
    const t = exec.body.data.executeTask;
    assert.equal(t.status, 'completed');
    assert.deepEqual(t.artifacts.map((a: { path: unknown }) => a.path).sort(), [...t.result.filesCreated].sort());
    const reader = await p.createKey({ permissions: ['agent:read'] });
    const read = await p.graphql<
      Gql<{ task: { taskId: string; status: string; result: { model: string; tokensUsed: number }; logs: { at: string; level: string; message: string }[] } }>
    >(`query($id: ID!) { task(taskId: $id) { taskId status result { model tokensUsed } logs { at level message } } }`, { id: t.taskId }, reader.key);
    assert.equal(read.body.data.task.status, 'completed');
    // Its log, oldest first: queued, started, the model's answer, the files, the end.
    const { logs, result } = read.body.data.task;
    assert.deepEqual(
      logs.map((l: { message: string }) => l.message.split(' ')[0]),
      ['Queued', 'Started', result.model, 'Wrote', 'Completed'],
      JSON.stringify(logs),
    );
    assert.ok(logs[2].message.includes(`${result.tokensUsed} token`), logs[2].message);
    assert.ok(logs.every((l: { level: unknown }) => l.level === 'info'));
    assert.deepEqual(
      logs.map((l: { at: unknown }) => l.at),
      [...logs.map((l: { at: unknown }) => l.at)].sort(),
    );
    const denied = await p.graphql<Gql<never>>(`mutation($id: ID!) { cancelTask(taskId: $id) { status } }`, { id: t.taskId }, reader.key);
    assert.equal(denied.body.errors![0].extensions.code, 'insufficient_permissions');
  });
});
