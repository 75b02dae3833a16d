import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { SHOTS, startBrowserPlatform, type BrowserPlatform } from './support/browser';
import type { V1 } from './support/answers';
import { N8N_EXPORT } from './support/n8n-export';
import type { TestPlatform } from './support/platform';

/**
 * The dashboard, the docs and the GraphQL explorer in a real browser (headless Chromium): sign in,
 * start an orchestration and watch its stages advance live without a reload, cancel a running
 * task from its lane, watch a workflow execution's nodes turn green, a key that may not read a
 * section does not see it, the docs list every surface, the explorer carries the session key.
 * Screenshots go to test-screenshots/ (git-ignored) for a reviewer.
 */

// Run inside the page by page.evaluate; only what those callbacks touch (no DOM lib in this project).
declare const window: { __sameDocument?: boolean };
declare const document: { body: { innerText: string } };
declare const sessionStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };

let b: BrowserPlatform;
let p: TestPlatform;
let page: Page;
const hold = (name: string) => b.hold(name);
const release = (name: string) => b.holds.get(name)!.release();
const shot = (name: string, fullPage?: boolean) => b.shot(name, fullPage);
const signIn = (key: string) => b.signIn(key);
// The dashboard's pages log no error (a failed request, a React warning, an exception).
const noPageErrors = () => b.noPageErrors();

beforeAll(async () => {
  b = await startBrowserPlatform();
  ({ p, page } = b);
});
afterAll(async () => {
  await b?.stop();
});

const lane = (stage: string) => page.getByTestId(`stage-lane-${stage}`);

describe('the operations dashboard', () => {
  afterEach(noPageErrors);
  test('real URLs: a client route answers the app, a missing file 404, paths out of the directory never 500', async () => {
    for (const route of ['/dashboard/', '/dashboard/tasks/some-task', '/dashboard/workflows/a/b']) {
      const res = await fetch(p.url + route);
      assert.equal(res.status, 200, route);
      assert.match(await res.text(), /<div id="root">/, route);
    }
    for (const file of ['/dashboard/x.js', '/dashboard/assets/none.css']) assert.equal((await fetch(p.url + file)).status, 404, file);
    for (const odd of ['/dashboard/..%2fpackage.json', '/dashboard/%00']) assert.ok((await fetch(p.url + odd)).status < 500, odd);
    const icon = await fetch(`${p.url}/dashboard/favicon.svg`);
    assert.equal(icon.status, 200);
    assert.match(icon.headers.get('content-type') ?? '', /image\/svg\+xml/);
    await page.goto(`${p.url}/dashboard/agents`);
    assert.equal(await page.locator('link[rel="icon"]').getAttribute('href'), '/dashboard/favicon.svg');
    assert.match((await page.getByTestId('signin-first-key').textContent()) ?? '', /data\/bootstrap-key/);
    await shot('sign-in');
  });

  test('sign in with a key: kept in session storage, never in the URL; the sections it may read', async () => {
    await signIn(p.adminKey);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('platform.apiKey')), p.adminKey);
    assert.ok(!page.url().includes(p.adminKey));
    for (const s of ['agents', 'orchestrations', 'workflows', 'executions', 'prompts', 'metrics', 'links'])
      assert.ok(await page.getByTestId(`nav-${s}`).isVisible(), s);
    await page.getByTestId('agents-table').waitFor();
    await shot('agents');
  });

  test('a task started from its form (labelled inputs) turns completed on its page without a reload', async () => {
    await page.goto(`${p.url}/dashboard/agents`);
    assert.equal(await page.getByTestId('agent-success-docs-author').textContent(), '—', 'no runs yet: no 0 %');
    await page.getByTestId('agent-row-docs-author').click();
    const form = page.getByTestId('start-task');
    await form.waitFor();
    await page.getByTestId('task-type').click();
    await page.getByRole('option', { name: /guide/i }).first().click();
    const topic = page.getByTestId('task-input-topic');
    await topic.fill('Checkout');
    await page.getByTestId('task-input-audience').fill('developers');
    assert.equal(
      await form
        .locator('label')
        .filter({ hasText: /^Topic\b/ })
        .count(),
      1,
      'a label for a person',
    );
    assert.ok((await page.getByTestId('task-type-help').textContent())!.length > 20, 'help from the task type');
    await shot('start-task');
    await page.evaluate(() => (window.__sameDocument = true));
    await page.getByTestId('task-start').click();
    await page.getByTestId('task-detail').waitFor();
    assert.match(page.url(), /\/dashboard\/tasks\/[^/]+$/);
    await page.locator('[data-testid="task-detail"][data-status="completed"]').waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate(() => window.__sameDocument), true, 'updated by the subscription, not a reload');
    assert.equal(await page.getByTestId('task-progress').getAttribute('data-value'), '100');
    assert.match((await page.getByTestId('task-output').textContent()) ?? '', /Done\./);
    await page.getByTestId('task-tab-files').click();
    await page.getByTestId('task-file-notes/result.md').locator('h1', { hasText: 'Result' }).waitFor();
    await shot('task');
    await page.getByTestId('task-tab-log').click();
    const log = (await page.getByTestId('task-log').locator('tr').allTextContents()).join('\n');
    assert.match(log, /Queued[\s\S]*Started[\s\S]*Wrote 1 file[\s\S]*Completed in/, log);
  });

  test('an orchestration advances live, stage by stage, without a reload', async () => {
    const h = hold('browser-research');
    await page.goto(`${p.url}/dashboard/orchestrations`);
    await page.getByTestId('orchestration-input').fill(
      JSON.stringify({
        name: 'Browser-watched',
        stages: [
          { stage: 'RESEARCH', tasks: [{ id: 'plan', agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: `HOLD:${h}` } }] },
          {
            stage: 'DESIGN',
            tasks: [{ id: 'guide', agentId: 'docs-author', taskType: 'write-guide', context: { topic: 'checkout', audience: 'developers' } }],
          },
        ],
      }),
    );
    await page.getByTestId('orchestration-create').click();
    await page.getByTestId('orchestration-detail').waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    await page.locator('[data-testid="stage-lane-RESEARCH"][data-status="running"]').waitFor();
    assert.equal(await lane('DESIGN').getAttribute('data-status'), 'pending');
    assert.equal(await lane('MONITOR').getAttribute('data-status'), 'absent');
    await shot('orchestration-running');
    release(h);
    await page.locator('[data-testid="stage-lane-RESEARCH"][data-status="completed"]').waitFor({ timeout: 15_000 });
    await page.locator('[data-testid="orchestration-detail"][data-status="completed"]').waitFor({ timeout: 15_000 });
    assert.equal(await lane('DESIGN').getAttribute('data-status'), 'completed');
    assert.equal(await page.getByTestId('task-card-guide').getAttribute('data-status'), 'completed');
    assert.equal(await page.evaluate(() => window.__sameDocument), true, 'updated by subscriptions, not by reloading');
    await shot('orchestration-completed');
  });

  test("a list follows its items: an orchestration's row turns completed without a reload", async () => {
    const h = hold('browser-list');
    const created = await p.rest<V1<{ orchestrationId: string }>>('POST', '/v1/control-plane/orchestration/create', {
      body: {
        name: 'Listed',
        stages: [
          { stage: 'RESEARCH', tasks: [{ id: 'plan', agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: `HOLD:${h}` } }] },
        ],
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const row = page.getByTestId(`orchestration-row-${created.body.data.orchestrationId}`);
    await page.goto(`${p.url}/dashboard/orchestrations`);
    await row.locator('[data-status="running"]').waitFor();
    await page.evaluate(() => (window.__sameDocument = true));
    release(h);
    await row.locator('[data-status="completed"]').waitFor({ timeout: 15_000 });
    assert.equal(await page.evaluate(() => window.__sameDocument), true, 'updated by a subscription, not by reloading');
  });

  test('cancel a running task from its lane; pause and resume', async () => {
    const h = hold('browser-cancel');
    const created = await p.rest<V1<{ orchestrationId: string }>>('POST', '/v1/control-plane/orchestration/create', {
      body: {
        name: 'To cancel',
        stages: [
          { stage: 'RESEARCH', tasks: [{ id: 'slow', agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: `HOLD:${h}` } }] },
        ],
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await page.goto(`${p.url}/dashboard/orchestrations/${created.body.data.orchestrationId}`);
    await page.locator('[data-testid="task-card-slow"][data-status="running"]').waitFor();
    await page.getByTestId('orch-pause').click();
    await page.locator('[data-testid="orchestration-detail"][data-status="paused"]').waitFor();
    await page.getByTestId('orch-resume').click();
    await page.locator('[data-testid="orchestration-detail"][data-status="running"]').waitFor();
    await page.getByTestId('task-cancel-slow').click();
    await page.locator('[data-testid="task-card-slow"][data-status="cancelled"]').waitFor({ timeout: 15_000 });
    await shot('task-cancelled');
    release(h);
  });

  test("the creation form's sample creates as it is; a lane's task opens its task page", async () => {
    await page.goto(`${p.url}/dashboard/orchestrations`);
    await page.getByTestId('orchestration-create').click();
    await page.getByTestId('orchestration-detail').waitFor();
    assert.equal(await page.getByTestId('orchestration-error').count(), 0);
    await page.getByTestId('task-link-plan').click();
    await page.getByTestId('task-detail').waitFor();
    assert.match((await page.getByTestId('task-detail').textContent()) ?? '', /factory-orchestrator · plan-delivery/);
    await page.locator('[data-testid="task-detail"][data-status="completed"]').waitFor({ timeout: 30_000 });
  });

  test('a workflow execution: its nodes turn green as they run', async () => {
    const wf = await p.rest<V1<{ workflowId: string; id?: string }>>('POST', '/v1/engine/workflows', {
      body: {
        name: 'Browser flow',
        nodes: [
          { name: 'Start', type: 'engine.manualTrigger' },
          { name: 'Pause', type: 'engine.wait', parameters: { seconds: 1 } },
          { name: 'Shape', type: 'engine.set', parameters: { values: { greeting: 'hello' } } },
        ],
        connections: { Start: { main: [[{ node: 'Pause', type: 'main', index: 0 }]] }, Pause: { main: [[{ node: 'Shape', type: 'main', index: 0 }]] } },
      },
    });
    assert.equal(wf.status, 201, JSON.stringify(wf.body));
    const id = wf.body.data.workflowId ?? wf.body.data.id;
    await page.goto(`${p.url}/dashboard/workflows/${id}`);
    await page.getByTestId('graph-node-Pause').waitFor();
    assert.match((await page.getByTestId('workflow-executions').textContent()) ?? '', /^$/, 'never run');
    await page.getByTestId('workflow-run-input').fill('{"name": "Ada"}');
    await page.getByTestId('workflow-run').click();
    await page.getByTestId('execution-detail').waitFor();
    await page.locator('[data-testid="graph-node-Start"][data-status="success"]').waitFor();
    assert.notEqual(await page.getByTestId('graph-node-Shape').getAttribute('data-status'), 'success', 'not yet: Pause waits a second');
    await page.locator('[data-testid="graph-node-Shape"][data-status="success"]').waitFor({ timeout: 15_000 });
    await page.locator('[data-testid="execution-node-Shape"][data-status="success"]').waitFor();
    await page.locator('[data-testid="execution-detail"][data-status="success"]').waitFor();
    assert.equal(await page.getByTestId('execution-node-Start').getAttribute('data-status'), 'success');
    assert.match((await page.getByTestId('execution-node-Shape').textContent()) ?? '', /hello/);
    // Input and output of a node: a table, or JSON.
    await page.getByTestId('execution-io-Shape').click();
    const shape = page.getByTestId('execution-node-Shape');
    await shape.locator('th', { hasText: 'greeting' }).first().waitFor();
    await shape.locator('td', { hasText: 'Ada' }).first().waitFor();
    await shape.getByText('JSON').last().click();
    await shape.locator('pre', { hasText: '"greeting": "hello"' }).waitFor();
    await shot('execution');
  });

  test('an n8n export imported from a file: previewed with its sticky note, drawn at its positions with the note kept, activated', async () => {
    await page.goto(`${p.url}/dashboard/workflows`);
    await page.getByTestId('workflow-import').waitFor();
    const file = path.join(SHOTS, 'order-intake.json');
    writeFileSync(file, JSON.stringify(N8N_EXPORT));
    const chooser = page.waitForEvent('filechooser');
    await page.getByTestId('workflow-import-file').click();
    await (await chooser).setFiles(file);
    const preview = page.getByTestId('workflow-import-preview');
    await preview.getByTestId('graph-node-Big order?').waitFor();
    const sticky = N8N_EXPORT.nodes.find((n) => n.type === 'n8n-nodes-base.stickyNote')!;
    await preview.getByTestId(`graph-note-${sticky.name}`).waitFor();
    await shot('workflow-import');
    await page.getByTestId('workflow-import-submit').click();
    await page.getByTestId('workflow-detail').waitFor();
    assert.match(page.url(), /\/dashboard\/workflows\/[^/]+$/);
    const graph = page.getByTestId('workflow-graph');
    for (const n of N8N_EXPORT.nodes.filter((x) => x.type !== 'n8n-nodes-base.stickyNote')) await graph.getByTestId(`graph-node-${n.name}`).waitFor();
    // The note was kept with the workflow: drawn from what the platform stored, its markdown rendered, left of and below the trigger as in n8n.
    const note = graph.getByTestId(`graph-note-${sticky.name}`);
    await note.waitFor();
    assert.equal(await note.locator('h2').textContent(), 'Orders over 100 are high priority');
    const noteBox = (await note.boundingBox())!;
    const trigger = (await graph.getByTestId('graph-node-Webhook').boundingBox())!;
    assert.ok(noteBox.y > trigger.y && noteBox.width > 100, JSON.stringify({ noteBox, trigger }));
    // n8n's positions: High priority (y -100) above Normal priority (y 100), both right of the IF.
    const high = (await graph.getByTestId('graph-node-High priority').boundingBox())!;
    const normal = (await graph.getByTestId('graph-node-Normal priority').boundingBox())!;
    const branch = (await graph.getByTestId('graph-node-Big order?').boundingBox())!;
    assert.ok(high.y < normal.y && high.x > branch.x, JSON.stringify({ high, normal, branch }));
    assert.equal((await graph.locator('.react-flow__edge').count()) > 5, true, 'connections drawn');
    assert.equal(await page.getByTestId('workflow-active').textContent(), 'inactive');
    await page.getByTestId('workflow-activate').click();
    await page.locator('[data-testid="workflow-detail"][data-active="true"]').waitFor();
    // Its triggers as registered: a webhook URL and a schedule.
    const wfId = page.url().split('/').pop()!;
    const hook = await p.rest('POST', `/v1/control-plane/workflows/${wfId}/webhooks`, {
      body: { path: '/dash/orders', method: 'POST', authentication: { type: 'none' } },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const cron = await p.rest('POST', `/v1/control-plane/workflows/${wfId}/schedule`, { body: { cron: '0 9 * * 1-5', timezone: 'Europe/Paris' } });
    assert.equal(cron.status, 201, JSON.stringify(cron.body));
    await page.reload();
    const triggers = page.getByTestId('workflow-triggers');
    await triggers.getByText(`${p.url}/webhook/dash/orders`).waitFor();
    await triggers.getByText('0 9 * * 1-5').waitFor();
    assert.match((await triggers.textContent()) ?? '', /Europe\/Paris/);
    await shot('workflow');
    await page.getByRole('link', { name: 'Workflows', exact: true }).click();
    await page.getByTestId('workflows-table').getByText(N8N_EXPORT.name).waitFor();
    assert.match((await page.getByTestId('workflows-table').textContent()) ?? '', /never/, 'a never-run workflow listed');
  });

  test("prompts: the user's apart from the agents', every version's template, a diff of two, a test run", async () => {
    const made = await p.rest('POST', '/v1/promptlib/prompts', {
      body: { name: 'release-notes', description: 'Release notes', template: 'Write release notes for {{version}}.\nKeep it short.', variables: ['version'] },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const changed = await p.rest('PUT', '/v1/promptlib/prompts/release-notes', {
      body: { template: 'Write release notes for {{version}}.\nGroup them by feature.', createNewVersion: true },
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    await page.goto(`${p.url}/dashboard/prompts`);
    await page.getByTestId('prompts-own').getByTestId('prompt-row-release-notes').waitFor();
    assert.equal(await page.getByTestId('prompts-own').locator('[data-testid^="prompt-row-incident-commander"]').count(), 0);
    assert.ok((await page.getByTestId('prompts-agents').locator('[data-testid^="prompt-row-incident-commander"]').count()) > 0, 'seeded agent prompts apart');
    await page.getByTestId('prompt-row-release-notes').getByRole('link').click();
    await page.getByTestId('prompt-version-1').getByText('Keep it short.').waitFor();
    await page.getByTestId('prompt-version-2').getByText('Group them by feature.').waitFor();
    const diff = page.getByTestId('prompt-diff-lines');
    assert.match((await diff.locator('[data-change="removed"]').textContent()) ?? '', /^- Keep it short\.$/);
    assert.match((await diff.locator('[data-change="added"]').textContent()) ?? '', /^\+ Group them by feature\.$/);
    await page.getByTestId('prompt-test').locator('textarea').fill('{"version": "2.1"}');
    await page.getByTestId('prompt-test-run').click();
    await page
      .getByTestId('prompt-test-output')
      .getByText(/Done\./)
      .waitFor();
    await shot('prompt');
  });

  test('short links: one created from the form is listed', async () => {
    await page.goto(`${p.url}/dashboard/links`);
    await page.getByTestId('link-url').fill('https://example.com/dashboard-made');
    await page.getByTestId('link-slug').fill('from-dashboard');
    await page.getByTestId('link-submit').click();
    await page.getByTestId('link-row-from-dashboard').getByText('https://example.com/dashboard-made').waitFor();
    const res = await fetch(`${p.url}/links/from-dashboard`, { redirect: 'manual' });
    assert.equal(res.headers.get('location'), 'https://example.com/dashboard-made');
  });

  test('metrics and prompts render; a key that may not read a section does not see it', async () => {
    await page.goto(`${p.url}/dashboard/metrics`);
    await page.getByTestId('chart-agent-executions').locator('canvas').waitFor();
    await page.getByTestId('system-health').getByText('database').waitFor();
    // Units on the figures; costs are an estimate from the price table.
    await page
      .getByTestId('metrics-cost')
      .getByText(/^\$\d+\.\d\d$/)
      .waitFor();
    assert.match((await page.getByTestId('metrics-cost').textContent()) ?? '', /estimate \(price table\)/);
    assert.match((await page.getByTestId('chart-costs').textContent()) ?? '', /estimate \(price table\)/);
    assert.match((await page.getByTestId('metrics-figures').textContent()) ?? '', /Agent tasks\d+unit: count/);
    assert.match((await page.getByTestId('system-health').textContent()) ?? '', /CPU [\d.]+ %/);
    await shot('metrics');
    await page.goto(`${p.url}/dashboard/prompts`);
    await page.locator('[data-testid^="prompt-row-"]').first().waitFor();
    const narrow = (await p.createKey({ service: 'promptlib', permissions: ['prompt:read'] })).key;
    await page.getByTestId('sign-out').click();
    await signIn(narrow);
    assert.ok(await page.getByTestId('nav-prompts').isVisible());
    // The sign-in check and the probes of the sections the key may not read answered 403 (the browser logs each): nothing else.
    const refused = b.consoleErrors.splice(0);
    for (const e of refused) assert.match(e, /status of 403 .*\/graphql\)$/);
    for (const s of ['agents', 'orchestrations', 'workflows', 'executions', 'metrics', 'links'])
      assert.equal(await page.getByTestId(`nav-${s}`).count(), 0, `${s} hidden`);
    await shot('narrow-key');
  });
});

describe('docs and the GraphQL explorer', () => {
  // Redoc and GraphiQL are not ours: their pages' messages are not checked.
  beforeEach(() => void b.consoleErrors.splice(0));
  test('/docs lists every surface', async () => {
    await page.goto(`${p.url}/docs`);
    const doc = (await (await fetch(`${p.url}/openapi.json`)).json()) as { tags: { name: string }[] };
    // Each tag's name as a whole visible line (innerText holds only rendered text): a tag's name
    // (Executions) is also part of operations' names in collapsed menus. One check of the page per
    // second — a locator per tag over Redoc's large page took 40 s.
    const names = doc.tags.map((t) => t.name);
    await page.waitForFunction(
      (wanted) => {
        const lines = new Set(document.body.innerText.split('\n').map((l: string) => l.trim()));
        return wanted.every((n) => lines.has(n));
      },
      names,
      { polling: 1000, timeout: 60_000 },
    );
    await shot('docs', false);
  });

  test('the explorer at /graphql carries the session key and runs a query', async () => {
    await page.goto(`${p.url}/openapi.json`);
    await page.evaluate((k) => sessionStorage.setItem('platform.apiKey', k), p.adminKey);
    await page.goto(`${p.url}/graphql`);
    await page.locator('.graphiql-container').waitFor({ timeout: 20_000 });
    await page
      .getByText('Headers')
      .first()
      .click()
      .catch(() => undefined);
    const headers = await page.evaluate(() => document.body.innerText);
    assert.ok(headers.includes(`Bearer ${p.adminKey}`), 'the headers editor holds the session key');
    await shot('explorer');
  });
});
