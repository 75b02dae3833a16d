import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DASHBOARD_DIR } from '../gateway/dashboard';
import { startFakeLlm, type FakeLlm } from './support/fake-llm';
import { startTestPlatform, type TestPlatform } from './support/platform';

/**
 * The dashboard, the docs and the GraphQL explorer in a real browser (headless Chromium): sign in,
 * start an orchestration and watch its stages advance live without a reload, cancel a running
 * task from its lane, watch a workflow execution's nodes turn green, a key that may not read a
 * section does not see it, the docs list every surface, the explorer carries the session key.
 * Screenshots go to test-screenshots/ (git-ignored) for a reviewer.
 */

// Run inside the page by page.evaluate.
declare const window: any, document: any, sessionStorage: any;

const SHOTS = path.join(__dirname, '..', '..', 'test-screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let p: TestPlatform;
let fake: FakeLlm;
let browser: Browser;
let page: Page;

const holds = new Map<string, { release: () => void; promise: Promise<void>; reached: boolean }>();
function hold(name: string): string {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  holds.set(name, { release, promise, reached: false });
  return name;
}

beforeAll(async () => {
  assert.ok(existsSync(path.join(DASHBOARD_DIR, 'index.html')), 'the dashboard is built (npm install runs `npm run build:dashboard`)');
  mkdirSync(SHOTS, { recursive: true });
  fake = await startFakeLlm({ models: ['model-default'] });
  fake.reply(async (body) => {
    const prompt = String(body.messages.map((m: any) => m.content).join('\n'));
    for (const [name, h] of holds) {
      if (prompt.includes(`HOLD:${name}`)) {
        h.reached = true;
        await h.promise;
      }
    }
    return JSON.stringify({ summary: 'Done.', files: [{ path: 'notes/result.md', content: '# Result\n\nDone.\n' }] });
  });
  p = await startTestPlatform({ LLM_BASE_URL: fake.url, LLM_MODELS: 'model-default' });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
});
afterAll(async () => {
  for (const h of holds.values()) h.release();
  await browser?.close();
  await p?.stop();
  await fake?.close();
});

/** `fullPage: false` for /docs: Redoc's page is every route long, too tall to render whole in time on a loaded machine. */
const shot = (name: string, fullPage = true) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });
const lane = (stage: string) => page.getByTestId(`stage-lane-${stage}`);

async function signIn(key: string) {
  await page.goto(`${p.url}/dashboard`);
  await page.getByTestId('signin-key').fill(key);
  await page.getByTestId('signin-submit').click();
  await page.getByTestId('nav-agents').or(page.getByTestId('nav-prompts')).first().waitFor();
}

describe('the operations dashboard', () => {
  test('sign in with a key: kept in session storage, never in the URL; the sections it may read', async () => {
    await signIn(p.adminKey);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('platform.apiKey')), p.adminKey);
    assert.ok(!page.url().includes(p.adminKey));
    for (const s of ['agents', 'orchestrations', 'executions', 'prompts', 'metrics']) assert.ok(await page.getByTestId(`nav-${s}`).isVisible(), s);
    await page.getByTestId('agents-table').waitFor();
    await shot('agents');
  });

  test('an orchestration advances live, stage by stage, without a reload', async () => {
    const h = hold('browser-research');
    await page.goto(`${p.url}/dashboard#/orchestrations`);
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
    await page.evaluate(() => ((window as any).__sameDocument = true));
    await page.locator('[data-testid="stage-lane-RESEARCH"][data-status="running"]').waitFor();
    assert.equal(await lane('DESIGN').getAttribute('data-status'), 'pending');
    assert.equal(await lane('MONITOR').getAttribute('data-status'), 'absent');
    await shot('orchestration-running');
    holds.get(h)!.release();
    await page.locator('[data-testid="stage-lane-RESEARCH"][data-status="completed"]').waitFor({ timeout: 15_000 });
    await page.locator('[data-testid="orchestration-detail"][data-status="completed"]').waitFor({ timeout: 15_000 });
    assert.equal(await lane('DESIGN').getAttribute('data-status'), 'completed');
    assert.equal(await page.getByTestId('task-card-guide').getAttribute('data-status'), 'completed');
    assert.equal(await page.evaluate(() => (window as any).__sameDocument), true, 'updated by subscriptions, not by reloading');
    await shot('orchestration-completed');
  });

  test('cancel a running task from its lane; pause and resume', async () => {
    const h = hold('browser-cancel');
    const created = await p.rest('POST', '/v1/control-plane/orchestration/create', {
      body: {
        name: 'To cancel',
        stages: [
          { stage: 'RESEARCH', tasks: [{ id: 'slow', agentId: 'factory-orchestrator', taskType: 'plan-delivery', context: { objective: `HOLD:${h}` } }] },
        ],
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await page.goto(`${p.url}/dashboard#/orchestrations/${created.body.data.orchestrationId}`);
    await page.locator('[data-testid="task-card-slow"][data-status="running"]').waitFor();
    await page.getByTestId('orch-pause').click();
    await page.locator('[data-testid="orchestration-detail"][data-status="paused"]').waitFor();
    await page.getByTestId('orch-resume').click();
    await page.locator('[data-testid="orchestration-detail"][data-status="running"]').waitFor();
    await page.getByTestId('task-cancel-slow').click();
    await page.locator('[data-testid="task-card-slow"][data-status="cancelled"]').waitFor({ timeout: 15_000 });
    await shot('task-cancelled');
    holds.get(h)!.release();
  });

  test('a workflow execution: its nodes turn green as they run', async () => {
    const wf = await p.rest('POST', '/v1/engine/workflows', {
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
    const run = await p.rest('POST', `/v1/engine/workflows/${id}/execute`, { body: { data: { name: 'Ada' }, mode: 'async' } });
    assert.ok([200, 201, 202].includes(run.status), JSON.stringify(run.body));
    await page.goto(`${p.url}/dashboard#/executions/${run.body.data.executionId}`);
    await page.getByTestId('execution-detail').waitFor();
    await page.locator('[data-testid="execution-node-Shape"][data-status="success"]').waitFor({ timeout: 15_000 });
    await page.locator('[data-testid="execution-detail"][data-status="success"]').waitFor();
    assert.equal(await page.getByTestId('execution-node-Start').getAttribute('data-status'), 'success');
    assert.match((await page.getByTestId('execution-node-Shape').textContent()) ?? '', /hello/);
    await shot('execution');
  });

  test('metrics and prompts render; a key that may not read a section does not see it', async () => {
    await page.goto(`${p.url}/dashboard#/metrics`);
    await page.getByTestId('chart-agent-executions').locator('canvas').waitFor();
    await page.getByTestId('system-health').getByText('database').waitFor();
    await shot('metrics');
    await page.goto(`${p.url}/dashboard#/prompts`);
    await page.locator('[data-testid^="prompt-row-"]').first().waitFor();
    const narrow = (await p.createKey({ service: 'promptlib', permissions: ['prompt:read'] })).key;
    await page.getByTestId('sign-out').click();
    await signIn(narrow);
    assert.ok(await page.getByTestId('nav-prompts').isVisible());
    for (const s of ['agents', 'orchestrations', 'executions', 'metrics']) assert.equal(await page.getByTestId(`nav-${s}`).count(), 0, `${s} hidden`);
    await shot('narrow-key');
  });
});

describe('docs and the GraphQL explorer', () => {
  test('/docs lists every surface', async () => {
    await page.goto(`${p.url}/docs`);
    const doc = (await (await fetch(`${p.url}/openapi.json`)).json()) as { tags: { name: string }[] };
    // Exact and visible: a tag's name (Executions) is also part of operations' names in collapsed menus.
    for (const tag of doc.tags) await page.locator(`text="${tag.name}" >> visible=true`).first().waitFor({ timeout: 20_000 });
    await shot('docs', false);
  });

  test('the explorer at /graphql carries the session key and runs a query', async () => {
    await page.goto(`${p.url}/dashboard`);
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
