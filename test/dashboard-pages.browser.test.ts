import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startBrowserPlatform, type BrowserPlatform } from './support/browser';
import type { Feedback, Gql, V1 } from './support/answers';
import type { TestPlatform } from './support/platform';
import { until } from './support/until';

/**
 * The dashboard's feature-request board, infrastructure pages, live lists and link chart in a real
 * browser (headless Chromium): a request created through the API shows on its project's board and
 * its vote count changes live; an API key is told it may not vote, and a person's session opened
 * from the page votes and files; a deployment's replicas move while its logs are followed; the
 * Agents and workflow lists take their list subscriptions' events; a link's visits are charted.
 * No page logs an error. Screenshots go to test-screenshots/ (git-ignored) for a reviewer.
 */

// Run inside the page by page.evaluate.
declare const window: { __sameDocument?: boolean };

let b: BrowserPlatform;
let p: TestPlatform;
let page: Page;
const hold = (name: string) => b.hold(name);
const shot = (name: string) => b.shot(name);

beforeAll(async () => {
  // The local cluster's rollouts step once a second (replicas come up one by one), followed every 100 ms.
  b = await startBrowserPlatform({ FEEDBACK_LOCAL_SIGNIN: 'true', LOCAL_ROLLOUT_STEP_MS: '1000', INFRA_WATCH_INTERVAL_MS: '100' });
  ({ p, page } = b);
  await b.signIn(p.adminKey);
});
afterEach(() => b.noPageErrors());
afterAll(async () => {
  await b?.stop();
});

/** A GraphQL operation that must succeed: its data, read as the shape its selection asks for `T`. */
async function op<T>(query: string, variables: Record<string, unknown> = {}, key?: string | null): Promise<T> {
  const res = await p.graphql<Gql<T>>(query, variables, key);
  assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
  return res.body.data;
}

/** A person's feature-request session, minted by the admin key (FEEDBACK_LOCAL_SIGNIN). */
async function person(email: string, name: string): Promise<string> {
  return (
    await op<{ signInLocally: { token: string } }>('mutation($e: String!, $n: String) { signInLocally(email: $e, name: $n) { token } }', { e: email, n: name })
  ).signInLocally.token;
}

/** Marks the page so that a reload would be seen (the mark goes with the document). */
const markDocument = () => page.evaluate(() => (window.__sameDocument = true));
const sameDocument = () => page.evaluate(() => window.__sameDocument === true);

describe('the dashboard pages of feature requests, infrastructure, lists and links', () => {
  test('feature requests: a request created through the API is on its board, its vote count changes live; an API key may not vote, a person may', async () => {
    const ann = await person('ann@example.com', 'Ann');
    const project = (
      await op<{ createFeedbackProject: { id: string } }>(
        'mutation { createFeedbackProject(input: {name: "Rocket", description: "A launcher", slug: "rocket"}) { id } }',
        {},
        ann,
      )
    ).createFeedbackProject;
    type Submitted = { submitFeatureRequest: { id: string; status: string } };
    const submit = 'mutation($p: ID!, $t: String!) { submitFeatureRequest(projectId: $p, input: {title: $t, description: "Please"}) { id status } }';
    const dark = (await op<Submitted>(submit, { p: project.id, t: 'Dark mode' }, ann)).submitFeatureRequest;
    const pending = (await op<Submitted>(submit, { p: project.id, t: 'Offline maps' }, ann)).submitFeatureRequest;
    assert.equal(dark.status, 'pending', 'the project requires approval');
    await op('mutation($id: ID!) { setFeatureRequestStatus(requestId: $id, status: "approved") { status } }', { id: dark.id }, ann);

    await page.getByTestId('nav-feedback').click();
    await page.getByTestId('feedback-project-rocket').waitFor();
    await shot('feedback-projects');
    await page.getByTestId('feedback-project-rocket').getByRole('link').click();
    const card = page.getByTestId(`feedback-request-${dark.id}`);
    await page.getByTestId('feedback-column-approved').getByTestId(`feedback-request-${dark.id}`).waitFor();
    await page.getByTestId('feedback-column-pending').getByTestId(`feedback-request-${pending.id}`).waitFor();
    assert.equal(await page.getByTestId(`feedback-votes-${dark.id}`).textContent(), '0');
    // The API key reads; it is told plainly that votes are a person's, and sees no vote button.
    assert.match((await page.getByTestId('feedback-key-only').textContent()) ?? '', /never from an API key/);
    assert.equal(await card.getByTestId(`feedback-upvote-${dark.id}`).count(), 0);
    assert.match((await page.getByTestId('feedback-new-refused').textContent()) ?? '', /signed-in people only/);

    await markDocument();
    const bob = await person('bob@example.com', 'Bob');
    await op('mutation($id: ID!) { voteFeatureRequest(requestId: $id, type: "upvote") { totalVotes } }', { id: dark.id }, bob);
    await page.locator(`[data-testid="feedback-votes-${dark.id}"]:text-is("1")`).waitFor();
    // Approved by its owner elsewhere: the card moves to its column.
    await op('mutation($id: ID!) { setFeatureRequestStatus(requestId: $id, status: "approved") { status } }', { id: pending.id }, ann);
    await page.getByTestId('feedback-column-approved').getByTestId(`feedback-request-${pending.id}`).waitFor();
    assert.equal(await sameDocument(), true, 'updated by subscriptions, not by reloading');
    await shot('feedback-board');

    // A person's session opened from the page: a vote from the board, and a request filed from it.
    await page.getByTestId('feedback-person-email').fill('cy@example.com');
    await page.getByTestId('feedback-person-name').fill('Cy');
    await page.getByTestId('feedback-person-signin').click();
    await page.getByTestId('feedback-person').waitFor();
    await card.getByTestId(`feedback-upvote-${dark.id}`).click();
    await page.locator(`[data-testid="feedback-votes-${dark.id}"]:text-is("2")`).waitFor();
    await card.getByTestId(`feedback-upvote-${dark.id}`).click();
    assert.match((await card.getByTestId(`feedback-vote-error-${dark.id}`).textContent()) ?? '', /already/);
    // The refused second vote answered 409 (the browser logs it): nothing else.
    for (const e of b.consoleErrors.splice(0)) assert.match(e, /status of 409 .*\/graphql\)$/);
    await page.getByTestId('feedback-new-title').fill('Widgets');
    await page.getByTestId('feedback-new-description').fill('On the home screen');
    await page.getByTestId('feedback-new-submit').click();
    await page.getByTestId('feedback-column-pending').getByText('Widgets').waitFor();
    const listed = await op<{ featureRequests: { requests: { title: string; status: string }[] } }>(
      'query($p: ID!) { featureRequests(projectId: $p) { requests { title status } } }',
      { p: project.id },
    );
    assert.deepEqual(
      listed.featureRequests.requests.find((r: { title: string }) => r.title === 'Widgets'),
      { title: 'Widgets', status: 'pending' },
    );
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByTestId('feedback-key-only').waitFor();
  });

  test('feature requests: a request filed through REST appears on the open board without a reload, and its votes follow', async () => {
    const cleo = await person('cleo@example.com', 'Cleo');
    const project = (
      await op<{ createFeedbackProject: { id: string } }>(
        'mutation { createFeedbackProject(input: {name: "Comet", description: "Live board", slug: "comet"}) { id } }',
        {},
        cleo,
      )
    ).createFeedbackProject;
    await op('mutation($id: ID!) { updateFeedbackProject(id: $id, input: {settings: {requireApproval: false}}) { id } }', { id: project.id }, cleo);
    await page.goto(`${p.url}/dashboard/feedback/${project.id}`);
    await page.getByTestId('feedback-board').waitFor();
    await page.getByTestId('feedback-column-approved').getByText('None.').waitFor();
    await markDocument();
    // The board is never read again: what shows next came by its subscription.
    const filed = await p.rest<Feedback<{ id: string }>>('POST', `/feedback/api/v1/projects/${project.id}/requests`, {
      key: cleo,
      body: { title: 'Comet tails', description: 'Filed elsewhere' },
    });
    assert.equal(filed.status, 201, JSON.stringify(filed.body));
    const id: string = filed.body.data.id;
    await page.getByTestId('feedback-column-approved').getByTestId(`feedback-request-${id}`).waitFor();
    assert.equal(await page.getByTestId(`feedback-votes-${id}`).textContent(), '0');
    assert.equal((await p.rest('POST', `/feedback/api/v1/requests/${id}/vote`, { key: cleo, body: { type: 'upvote' } })).status, 200);
    await page.locator(`[data-testid="feedback-votes-${id}"]`, { hasText: /^1$/ }).waitFor();
    assert.equal(await sameDocument(), true, 'updated by the subscription, not by reloading');
    await shot('feedback-board-live');
    // Deleted elsewhere: it leaves the open board.
    assert.equal((await p.rest('DELETE', `/feedback/api/v1/requests/${id}`, { key: cleo })).status, 200);
    await page.getByTestId(`feedback-request-${id}`).waitFor({ state: 'detached' });
    await page.getByTestId('feedback-column-approved').getByText('None.').waitFor();
    assert.equal(await sameDocument(), true, 'taken off by the subscription, not by reloading');
  });

  test("infrastructure: a deployment's replicas come up live, its logs are followed, the service's figures follow", async () => {
    const project = (await op<{ createInfraProject: { id: string } }>('mutation { createInfraProject(input: {name: "Shop", visibility: "internal"}) { id } }'))
      .createInfraProject;
    const service = (
      await op<{ createInfraService: { id: string } }>(
        'mutation($p: ID!) { createInfraService(input: {project: $p, name: "api", image: "ghcr.io/acme/api:1.0.0", replicas: 1}) { id } }',
        {
          p: project.id,
        },
      )
    ).createInfraService;
    // The creation's rollout is over before the page opens: the deploy below is the one watched moving.
    await until(
      'the creation rollout to finish',
      async () => {
        const d = await op<{ infraDeployments: { data: { status: string }[] } }>('query($s: ID!) { infraDeployments(serviceId: $s) { data { status } } }', {
          s: service.id,
        });
        return d.infraDeployments.data[0]?.status === 'success' || null;
      },
      30_000,
    );
    await page.getByTestId('nav-infra').click();
    await page.getByTestId('infra-service-row-api').waitFor();
    await shot('infra-services');
    await page.getByTestId('infra-service-row-api').getByRole('link').click();
    await page.getByTestId('infra-service').waitFor();
    await page.locator('[data-testid="infra-logs"][data-state="following"]').waitFor();
    await page.locator('[data-testid^="infra-deployment-"][data-status="success"]').first().waitFor({ timeout: 30_000 });
    await markDocument();
    await page.getByTestId('infra-deploy-image').fill('ghcr.io/acme/api:1.1.0');
    await page.getByTestId('infra-deploy-replicas').fill('3');
    await page.getByTestId('infra-deploy-submit').click();
    // The new rollout is on the page at once (the mutation's answer), first in the list.
    const shown = page.locator('[data-testid^="infra-deployment-"][data-status]', { hasText: 'ghcr.io/acme/api:1.1.0' }).first();
    await shown.waitFor();
    const rollout = { deploymentId: (await shown.getAttribute('data-testid'))!.replace('infra-deployment-', '') };
    const read = await op<{ infraDeployment: { serviceId: string; targetImage: string } }>(
      'query($id: ID!) { infraDeployment(deploymentId: $id) { serviceId targetImage } }',
      { id: rollout.deploymentId },
    );
    assert.deepEqual(read.infraDeployment, { serviceId: service.id, targetImage: 'ghcr.io/acme/api:1.1.0' });
    const card = page.getByTestId(`infra-deployment-${rollout.deploymentId}`);
    // Replicas come up one step at a time: seen part way, then done.
    await page.locator(`[data-testid="infra-deployment-${rollout.deploymentId}"][data-status="in-progress"]`).waitFor();
    await page.locator(`[data-testid="infra-deployment-${rollout.deploymentId}"][data-status="in-progress"][data-ready="2"]`).waitFor({ timeout: 30_000 });
    await shot('infra-rollout');
    await page.locator(`[data-testid="infra-deployment-${rollout.deploymentId}"][data-status="success"]`).waitFor({ timeout: 30_000 });
    assert.equal(await page.getByTestId(`infra-deployment-progress-${rollout.deploymentId}`).getAttribute('data-value'), '100');
    assert.match((await card.textContent()) ?? '', /ready 3\/3/);
    await page.locator('[data-testid="infra-ready"]:text-is("3")').waitFor();
    // Followed, not read again: the new replicas' lines arrived on the open stream.
    await page.getByTestId('infra-logs').getByText('replica 3 of 3 ready').waitFor();
    assert.equal(await sameDocument(), true, 'updated by a subscription and the followed stream, not by reloading');
    await shot('infra-service');
    // A bad image is the API's own refusal, shown as it is.
    await page.getByTestId('infra-deploy-image').fill('not an image');
    await page.getByTestId('infra-deploy-submit').click();
    assert.match((await page.getByTestId('infra-deploy-error').textContent()) ?? '', /image/i);
    for (const e of b.consoleErrors.splice(0)) assert.match(e, /status of 400 .*\/graphql\)$/);
  });

  test("lists follow their list subscriptions: an agent's latest tasks and a workflow's executions, no reload", async () => {
    const h = hold('agent-list');
    await page.getByTestId('nav-agents').click();
    await page.getByTestId('agent-row-docs-author').click();
    await page.getByTestId('agent-tasks').waitFor();
    await markDocument();
    const started = await p.rest<V1<{ taskId: string }>>('POST', '/v1/control-plane/agents/execute', {
      body: { agentId: 'docs-author', taskType: 'write-guide', context: { topic: `HOLD:${h}`, audience: 'developers' } },
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const row = page.getByTestId(`agent-task-${started.body.data.taskId}`);
    // A task created after the list was read arrives in it, then turns completed in place.
    await row.waitFor({ timeout: 15_000 });
    b.holds.get(h)!.release();
    await page.locator(`[data-testid="agent-task-${started.body.data.taskId}"][data-status="completed"]`).waitFor({ timeout: 30_000 });
    assert.equal(await sameDocument(), true);

    const wf = await p.rest<V1<{ workflowId?: string; id?: string }>>('POST', '/v1/engine/workflows', {
      body: {
        name: 'Listed runs',
        nodes: [
          { name: 'Start', type: 'engine.manualTrigger' },
          { name: 'Pause', type: 'engine.wait', parameters: { seconds: 1 } },
        ],
        connections: { Start: { main: [[{ node: 'Pause', type: 'main', index: 0 }]] } },
      },
    });
    assert.equal(wf.status, 201, JSON.stringify(wf.body));
    const id = wf.body.data.workflowId ?? wf.body.data.id;
    await page.goto(`${p.url}/dashboard/workflows/${id}`);
    await page.getByText('Never run.').waitFor();
    await markDocument();
    const run = await p.rest<V1<{ executionId: string }>>('POST', `/v1/engine/workflows/${id}/execute`, { body: { mode: 'async' } });
    assert.ok([200, 201, 202].includes(run.status), JSON.stringify(run.body));
    const executionId = run.body.data.executionId;
    await page.locator(`[data-testid="workflow-execution-${executionId}"][data-status="success"]`).waitFor({ timeout: 30_000 });
    assert.equal(await sameDocument(), true);
    await page.getByTestId('nav-executions').click();
    await page.locator(`[data-testid="execution-row-${executionId}"][data-status="success"]`).waitFor();
  });

  test('a task that finishes right after the page opened shows COMPLETED without a reload', async () => {
    const h = hold('agent-race');
    const started = await p.rest<V1<{ taskId: string }>>('POST', '/v1/control-plane/agents/execute', {
      body: { agentId: 'docs-author', taskType: 'write-guide', context: { topic: `HOLD:${h}`, audience: 'developers' } },
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const { taskId } = started.body.data;
    await page.getByTestId('nav-agents').click();
    await page.getByTestId('agent-row-docs-author').click();
    await markDocument();
    // Finished while the list is read and its subscription set up: the list's first state has it done.
    b.holds.get(h)!.release();
    await until('the task completed', async () => {
      const res = await p.rest<V1<{ status: string }>>('GET', `/v1/control-plane/agents/tasks/${taskId}`);
      return res.body.data.status === 'completed';
    });
    await page.locator(`[data-testid="agent-task-${taskId}"][data-status="completed"]`).waitFor({ timeout: 30_000 });
    assert.equal(await sameDocument(), true, 'updated by the subscription, not by reloading');
  });

  test('short links: visits per day charted', async () => {
    const key = (await p.createKey({ service: 'links', permissions: ['link:read', 'link:write'] })).key;
    const made = await p.rest('POST', '/links/api/links', { key, body: { url: 'https://example.com/charted', custom_slug: 'charted' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`${p.url}/links/charted`, { redirect: 'manual' })).status, 302);
    // Links are a key's own: the page shows the links of the key signed in.
    await page.getByTestId('sign-out').click();
    await page.getByTestId('signin-key').fill(key);
    await page.getByTestId('signin-submit').click();
    await page.getByTestId('nav-links').click();
    await page.getByTestId('link-row-charted').waitFor();
    await page.locator('[data-testid="link-visits-chart"][data-slug="charted"][data-total="3"]').waitFor();
    await page.getByTestId('link-visits-chart').locator('canvas').waitFor();
    // The key of another service: the probes of the sections it may not read answered 403 (the browser logs each).
    for (const e of b.consoleErrors.splice(0)) assert.match(e, /status of 403 .*\/graphql\)$/);
    await shot('links');
  });
});
