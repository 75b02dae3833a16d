import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { startBrowserPlatform, type BrowserPlatform } from './support/browser';
import { startOtlpReceiver, type OtlpReceiver } from './support/otlp-receiver';
import type { TestPlatform } from './support/platform';
import { startPlatformProcess } from './support/platform-process';

/**
 * The Audit trail page and the trace links in a real browser (headless Chromium): a change just
 * made is listed with who made it and on what, the operation filter keeps only its entries, and
 * with TRACES_UI_URL set a task's page links to the viewer's page of the task's trace (a platform
 * of its own process, as tracing needs, exporting to a local OTLP receiver). No page logs an
 * error; screenshots go to test-screenshots/.
 */

const TRACES_UI_URL = 'http://traces.example/trace/{traceId}';

let receiver: OtlpReceiver;
let b: BrowserPlatform;
let p: TestPlatform;
let page: Page;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  b = await startBrowserPlatform();
  ({ p, page } = b);
  await b.signIn(p.adminKey);
});
afterEach(() => b.noPageErrors());
afterAll(async () => {
  await b?.stop();
  await receiver?.close();
});

test('the audit trail lists a change just made, by whom and on what; the operation filter keeps only its entries', async () => {
  const key = await p.createKey({ name: 'audited-in-browser', permissions: ['agent:read'] });
  const link = await p.rest('POST', '/links/api/links', { body: { url: 'https://example.com/audited', custom_slug: 'audited-browser' } });
  assert.equal(link.status, 201, JSON.stringify(link.body));

  await page.getByTestId('nav-audit').click();
  const table = page.getByTestId('audit-table');
  const keyRow = table.locator('tr', { hasText: key.id });
  await keyRow.waitFor();
  assert.match((await keyRow.textContent()) ?? '', /createApiKey/);
  await table.getByText('createLink').first().waitFor();
  await b.shot('audit');

  await page.getByTestId('audit-operation').fill('createApiKey');
  await table.getByText('createLink').waitFor({ state: 'detached' });
  const operations = await table.locator('tbody tr code').allTextContents();
  assert.ok(operations.length > 0, 'the filtered list is not empty');
  assert.deepEqual([...new Set(operations)], ['createApiKey']);
  await keyRow.waitFor();
  await b.shot('audit-filtered');

  await page.getByTestId('audit-operation').fill('noSuchOperation');
  await page.getByText('No entries').waitFor();
});

test("with TRACES_UI_URL set, a task's page links to its trace", async () => {
  const traced = await startPlatformProcess({
    LLM_BASE_URL: b.fake.url,
    LLM_MODELS: 'model-default',
    TRACES_UI_URL,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  try {
    const traceId = randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
    const res = await fetch(`${traced.url}/v1/control-plane/agents/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${traced.adminKey}`, 'content-type': 'application/json', traceparent },
      body: JSON.stringify({
        agentId: 'postmortem-analyst',
        taskType: 'write-postmortem',
        context: { incident: 'API outage', timeline: ['09:00 alert'], severity: 'sev2' },
        execution: { mode: 'sync' },
      }),
    });
    const body = (await res.json()) as { data: { taskId: string; status: string } };
    assert.equal(res.status, 200, JSON.stringify(body));
    await page.goto(`${traced.url}/dashboard`);
    await page.getByTestId('signin-key').fill(traced.adminKey);
    await page.getByTestId('signin-submit').click();
    await page.getByTestId('nav-agents').waitFor();
    await page.goto(`${traced.url}/dashboard/tasks/${body.data.taskId}`);
    const trace = page.getByTestId('trace-link');
    await trace.waitFor();
    assert.equal(await trace.getAttribute('href'), TRACES_UI_URL.replace('{traceId}', traceId));
    assert.equal(await trace.getAttribute('target'), '_blank');
    await b.shot('task-trace-link');
  } finally {
    // The page leaves the platform before it stops: its requests would fail once it is gone.
    await page.goto('about:blank');
    await traced.stop();
  }
});
