import 'reflect-metadata';
import assert from 'node:assert/strict';
import type { Gql, V1 } from './support/answers';
import { startTestPlatform, type TestPlatform } from './support/platform';

/**
 * Links in answers are absolute, usable from another machine: PUBLIC_URL when set, else the
 * scheme and host the caller used, where X-Forwarded-Proto/Host count only with TRUST_PROXY.
 */

const platforms: TestPlatform[] = [];
afterAll(async () => {
  for (const p of platforms) await p.stop();
});

async function withHook(env: Record<string, string>): Promise<{ p: TestPlatform; workflowId: string }> {
  const p = await startTestPlatform(env);
  platforms.push(p);
  const wf = await p.rest<V1<{ workflowId: string }>>('POST', '/v1/engine/workflows', {
    body: {
      name: 'Linked',
      nodes: [
        { name: 'Hook', type: 'engine.webhook' },
        { name: 'Done', type: 'engine.noOp' },
      ],
      connections: { Hook: { main: [[{ node: 'Done' }]] } },
    },
  });
  assert.equal(wf.status, 201, JSON.stringify(wf.body));
  const workflowId = wf.body.data.workflowId;
  const hook = await p.rest('POST', '/v1/engine/webhooks', { body: { workflowId, path: '/linked', method: 'POST' } });
  assert.equal(hook.status, 201, JSON.stringify(hook.body));
  assert.equal((await p.rest('POST', `/v1/engine/workflows/${workflowId}/activate`)).status, 200);
  return { p, workflowId };
}

const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'automation.example.org' };

describe('absolute URLs', () => {
  test('PUBLIC_URL is the base of every link, whatever address the request used', async () => {
    const { p, workflowId } = await withHook({ PUBLIC_URL: 'https://platform.example.com/' });
    const w = (await p.rest<V1<{ webhookUrl: string | null }>>('GET', `/v1/engine/workflows/${workflowId}`, { headers: forwarded })).body.data;
    assert.equal(w.webhookUrl, 'https://platform.example.com/webhook/linked');
    const run = await p.rest<V1<{ executionId: string; engineExecutionUrl: string }>>('POST', '/v1/control-plane/workflows/trigger', {
      body: { workflowId, payload: {} },
    });
    assert.equal(run.status, 202, JSON.stringify(run.body));
    assert.equal(run.body.data.engineExecutionUrl, `https://platform.example.com/v1/engine/executions/${run.body.data.executionId}`);
  });

  test("without PUBLIC_URL: the request's own scheme and host; X-Forwarded-* ignored unless TRUST_PROXY", async () => {
    const { p, workflowId } = await withHook({});
    const direct = (await p.rest<V1<{ webhookUrl: string | null }>>('GET', `/v1/engine/workflows/${workflowId}`, { headers: forwarded })).body.data;
    assert.equal(direct.webhookUrl, `${p.url}/webhook/linked`, 'forwarded headers are not believed without TRUST_PROXY');

    const proxied = await withHook({ TRUST_PROXY: 'true' });
    const behind = (await proxied.p.rest<V1<{ webhookUrl: string | null }>>('GET', `/v1/engine/workflows/${proxied.workflowId}`, { headers: forwarded })).body
      .data;
    assert.equal(behind.webhookUrl, 'https://automation.example.org/webhook/linked');
    const gql = await proxied.p.graphql<Gql<{ workflow: { webhookUrl: string | null } }>>(`query($id: ID!) { workflow(workflowId: $id) { webhookUrl } }`, {
      id: proxied.workflowId,
    });
    assert.equal(gql.body.data.workflow.webhookUrl, `${proxied.p.url}/webhook/linked`, 'GraphQL links follow the request too');
  });
});
