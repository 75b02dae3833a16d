import assert from 'node:assert/strict';
import { AppError } from '../../../kernel/errors';
import { compile, validateDefinition, chooseStart, WorkflowExecutor } from '../executor';
import { ExpressionEngine } from '../expressions';
import { importWorkflow } from './import';
import type { WebhookReply, WorkflowNode } from '../nodes';

type ImportedNode = WorkflowNode & { notes?: string };
import { CODE_LIMITS, Sandbox } from '../sandbox';
import { N8N_EXPORT } from '../../../test/support/n8n-export';
import { disposeHarness, runWorkflow } from '../../../test/support/n8n-harness';

const expressionSandbox = new Sandbox({ memoryMb: 32, timeoutMs: 1000, poolSize: 2 });
const codeSandbox = new Sandbox({ ...CODE_LIMITS, poolSize: 1 });
const executor = new WorkflowExecutor(new ExpressionEngine(expressionSandbox));
afterAll(() => {
  expressionSandbox.dispose();
  codeSandbox.dispose();
  disposeHarness();
});

async function runWebhook(def: ReturnType<typeof validateDefinition>, body: Record<string, unknown>) {
  const compiled = compile(def);
  const replies: WebhookReply[] = [];
  const outcome = await executor.run({
    compiled,
    execution: { id: 'e', mode: 'webhook', resumeUrl: '' },
    workflow: { id: 'w', name: 'Order intake', active: true },
    input: [{ json: { headers: {}, query: {}, body } }],
    startNode: chooseStart(compiled, 'webhook'),
    signal: new AbortController().signal,
    services: { codeSandbox, fetch: async () => assert.fail('no fetch'), runWorkflow: async () => assert.fail('no sub-workflow') },
    hooks: { reply: (r) => void replies.push(r) },
  });
  return { outcome, replies };
}

describe('n8n import', () => {
  test('an n8n export keeps its core nodes as n8n wrote them, maps the rest, and keeps ids, type versions, positions and tags', () => {
    const imported = importWorkflow(N8N_EXPORT);
    assert.equal(imported.name, 'Order intake');
    assert.deepEqual(imported.tags, ['orders']);
    assert.deepEqual(imported.settings, { executionOrder: 'v1' }, 'executionTimeout -1 (none) is dropped');
    const nodes = imported.nodes as ImportedNode[];
    assert.deepEqual(
      nodes.map((n) => [n.name, n.type]),
      [
        ['Webhook', 'engine.webhook'],
        ['Big order?', 'n8n-nodes-base.if'],
        ['High priority', 'n8n-nodes-base.set'],
        ['Normal priority', 'n8n-nodes-base.set'],
        ['Merge', 'n8n-nodes-base.merge'],
        ['Label', 'n8n-nodes-base.code'],
        ['Respond', 'n8n-nodes-base.respondToWebhook'],
      ],
      'the sticky note is not a node',
    );
    assert.deepEqual(imported.stickyNotes, [
      { name: 'Sticky Note', content: '## Orders over 100 are high priority', position: [0, 300], width: 240, height: 160, color: 1 },
    ]);
    assert.equal(nodes[0].id, 'a1c9e3f2-0000-4000-8000-000000000001');
    assert.equal(nodes[2].typeVersion, 3.4);
    assert.deepEqual(nodes[2].position, [440, -100]);
    const source = N8N_EXPORT.nodes.find((n) => n.name === 'Big order?')!;
    assert.deepEqual(nodes[1].parameters, source.parameters, "native nodes keep n8n's parameters verbatim");
    assert.deepEqual(nodes[6].parameters, N8N_EXPORT.nodes.find((n) => n.name === 'Respond')!.parameters);
    validateDefinition({ nodes: imported.nodes, connections: imported.connections, settings: imported.settings });
  });

  test('the imported workflow runs like it does in n8n', async () => {
    const imported = importWorkflow(N8N_EXPORT);
    const def = validateDefinition({ nodes: imported.nodes, connections: imported.connections, settings: imported.settings });
    const big = await runWebhook(def, { total: 150 });
    assert.equal(big.outcome.status, 'success');
    assert.deepEqual(big.replies, [{ status: 202, headers: {}, body: { label: 'HIGH', total: 150 } }]);
    const small = await runWebhook(def, { total: 20 });
    assert.deepEqual(small.replies[0]!.body, { label: 'NORMAL', total: 20 });
  });

  const one = (node: Record<string, unknown>) =>
    (importWorkflow({ name: 'x', nodes: [{ name: 'N', position: [0, 0], ...node }], connections: {} }).nodes as ImportedNode[])[0]!;

  test('HTTP Request v4 and v1, Cron and Function are mapped to engine nodes; Wait and Schedule Trigger run natively', () => {
    const http4 = one({
      type: 'n8n-nodes-base.httpRequest',
      typeVersion: 4.2,
      parameters: {
        method: 'POST',
        url: '=https://api.example.com/orders/{{ $json.id }}',
        sendQuery: true,
        queryParameters: { parameters: [{ name: 'expand', value: 'items' }] },
        sendHeaders: true,
        headerParameters: { parameters: [{ name: 'X-Trace', value: '={{ $execution.id }}' }] },
        sendBody: true,
        specifyBody: 'json',
        jsonBody: '{"status":"paid"}',
        options: { timeout: 5000, response: { response: { fullResponse: true, neverError: true } } },
        authentication: 'genericCredentialType',
      },
      credentials: { httpHeaderAuth: { id: '1', name: 'API' } },
    });
    assert.deepEqual(http4.parameters, {
      url: 'https://api.example.com/orders/{{ $json.id }}',
      method: 'POST',
      query: { expand: 'items' },
      headers: { 'X-Trace': '{{ $execution.id }}' },
      body: { status: 'paid' },
      fullResponse: true,
      ignoreHttpErrors: true,
      timeout: 5000,
      authentication: 'httpHeaderAuth',
    });
    // Kept for the save to resolve against the stored credentials (credentials/).
    assert.deepEqual(http4.credentials, { httpHeaderAuth: { id: '1', name: 'API' } });
    assert.equal(http4.notes, undefined);
    const http1 = one({
      type: 'n8n-nodes-base.httpRequest',
      typeVersion: 1,
      parameters: { url: 'https://x.example.com', requestMethod: 'PUT', jsonParameters: true, bodyParametersJson: '={{ JSON.stringify($json) }}' },
    });
    assert.deepEqual(http1.parameters, { url: 'https://x.example.com', method: 'PUT', body: '{{ JSON.stringify($json) }}' });
    const wait = one({ type: 'n8n-nodes-base.wait', typeVersion: 1.1, parameters: { resume: 'timeInterval', amount: 2, unit: 'minutes' } });
    assert.deepEqual([wait.type, wait.parameters], ['n8n-nodes-base.wait', { resume: 'timeInterval', amount: 2, unit: 'minutes' }]);
    const schedule = { rule: { interval: [{ field: 'cronExpression', expression: '0 9 * * 1-5' }] } };
    assert.deepEqual(one({ type: 'n8n-nodes-base.scheduleTrigger', typeVersion: 1.2, parameters: schedule }).parameters, schedule);
    assert.deepEqual(
      one({ type: 'n8n-nodes-base.cron', typeVersion: 1, parameters: { triggerTimes: { item: [{ mode: 'everyWeek', hour: 9, weekday: 1 }] } } }).parameters,
      { cron: '0 9 * * 1' },
    );
    assert.deepEqual(one({ type: 'n8n-nodes-base.function', typeVersion: 1, parameters: { functionCode: 'return items;' } }), {
      name: 'N',
      type: 'engine.code',
      position: [0, 0],
      parameters: { code: 'return items;' },
      typeVersion: 1,
    });
    const noOp = one({ type: 'n8n-nodes-base.noOp', typeVersion: 1, retryOnFail: true, maxTries: 4, onError: 'continueRegularOutput' });
    assert.deepEqual(
      [noOp.type, noOp.retryOnFail, noOp.maxTries, noOp.onError, noOp.continueOnFail],
      ['n8n-nodes-base.noOp', true, 4, 'continueRegularOutput', undefined],
      'run natively with n8n’s own error handling',
    );
  });

  test('HTTP Request authentication: each version names a credential type, kept with the node’s credentials', () => {
    const http = (typeVersion: number, parameters: Record<string, unknown>, credentials: Record<string, unknown>) =>
      one({ type: 'n8n-nodes-base.httpRequest', typeVersion, parameters: { url: 'https://x.example.com', ...parameters }, credentials });
    const cases: [number, Record<string, unknown>, string][] = [
      [1, { authentication: 'headerAuth' }, 'httpHeaderAuth'],
      [1, { authentication: 'queryAuth' }, 'httpQueryAuth'],
      [2, { authentication: 'basicAuth' }, 'httpBasicAuth'],
      [2, { authentication: 'oAuth2' }, 'oAuth2Api'],
      [3, { authentication: 'genericCredentialType', genericAuthType: 'httpCustomAuth' }, 'httpCustomAuth'],
      [4.1, { authentication: 'predefinedCredentialType', nodeCredentialType: 'httpBearerAuth' }, 'httpBearerAuth'],
      [4.2, { authentication: 'genericCredentialType', genericAuthType: 'oAuth2Api' }, 'oAuth2Api'],
    ];
    for (const [version, parameters, type] of cases) {
      const ref = { id: '7', name: `My ${type}` };
      const node = http(version, parameters, { [type]: ref });
      assert.equal(node.parameters.authentication, type, `v${version} ${JSON.stringify(parameters)}`);
      assert.deepEqual(node.credentials, { [type]: ref });
    }
    const none = http(4.2, { authentication: 'none' }, { httpHeaderAuth: { id: '1', name: 'Left behind' } });
    assert.equal(none.parameters.authentication, undefined);
    assert.equal(none.credentials, undefined, 'a credential the node no longer uses is not kept (nor looked up)');
    const two = http(
      4.2,
      { authentication: 'genericCredentialType', genericAuthType: 'httpBasicAuth' },
      {
        httpHeaderAuth: { id: '1', name: 'Left behind' },
        httpBasicAuth: { id: '2', name: 'Used' },
      },
    );
    assert.deepEqual(two.credentials, { httpBasicAuth: { id: '2', name: 'Used' } });
    const refused = (version: number, parameters: Record<string, unknown>, credentials: Record<string, unknown> = {}) => {
      try {
        http(version, parameters, credentials);
      } catch (err) {
        assert.ok(err instanceof AppError && err.code === 'WORKFLOW_INVALID');
        return err.message;
      }
      assert.fail(`v${version} ${JSON.stringify(parameters)} was accepted`);
    };
    assert.match(refused(1, { authentication: 'digestAuth' }), /the authentication "digestAuth" is not supported/);
    assert.match(
      refused(4.2, { authentication: 'predefinedCredentialType', nodeCredentialType: 'githubApi' }),
      /the credential type "githubApi" is not supported/,
    );
    assert.match(
      refused(4.2, { authentication: 'genericCredentialType', genericAuthType: 'httpHeaderAuth' }),
      /the authentication httpHeaderAuth names no httpHeaderAuth credential/,
    );
  });

  test('Respond to Webhook answers with the first item, all items, or either under "Put Response in Field"', async () => {
    const reply = async (parameters: Record<string, unknown>) => {
      const run = await runWorkflow(
        {
          nodes: [
            { name: 'Start', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 0], parameters: {} },
            { name: 'Respond', type: 'n8n-nodes-base.respondToWebhook', typeVersion: 1.1, position: [200, 0], parameters },
          ],
          connections: { Start: { main: [[{ node: 'Respond', type: 'main', index: 0 }]] } },
        },
        { pinned: { Start: [[{ a: 1 }, { a: 2 }]] } },
      );
      return run.replies[0]?.body;
    };
    assert.deepEqual(await reply({ options: {} }), { a: 1 });
    assert.deepEqual(await reply({ respondWith: 'allIncomingItems', options: {} }), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(await reply({ options: { responseKey: 'order' } }), { order: { a: 1 } });
    assert.deepEqual(await reply({ respondWith: 'allIncomingItems', options: { responseKey: 'orders' } }), { orders: [{ a: 1 }, { a: 2 }] });
  });

  test('what has no equivalent is WORKFLOW_INVALID naming the node, the type and the option', () => {
    const invalid = (node: Record<string, unknown>, reason: string, option?: string) =>
      assert.throws(
        () => validateDefinition(importWorkflow({ name: 'x', nodes: [{ name: 'N', position: [0, 0], ...node }], connections: {} })),
        (err: unknown) => {
          assert.ok(err instanceof AppError);
          assert.equal(err.code, 'WORKFLOW_INVALID');
          assert.equal(err.details.node, 'N');
          assert.equal(err.details.reason, reason);
          if (option) assert.equal(err.details.option, option);
          return true;
        },
      );
    invalid({ type: 'n8n-nodes-base.slack', typeVersion: 2, parameters: {} }, 'unknown_node_type');
    invalid(
      { type: 'n8n-nodes-base.code', typeVersion: 2, parameters: { language: 'python', pythonCode: 'return items' } },
      'unsupported_option',
      'language: python',
    );
    invalid({ type: 'n8n-nodes-base.merge', typeVersion: 3, parameters: { mode: 'combineBySql' } }, 'unsupported_option', 'mode');
    invalid({ type: 'n8n-nodes-base.set', typeVersion: 9, parameters: {} }, 'unsupported_version');
    assert.throws(
      () =>
        importWorkflow({
          name: 'x',
          nodes: [{ name: 'N', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 0] }],
          connections: {},
          settings: { executionOrder: 'v0' },
        }),
      (err: unknown) => err instanceof AppError && err.details.reason === 'unsupported_execution_order' && /legacy execution order "v0"/.test(err.message),
    );
    const old = importWorkflow({ name: 'x', nodes: [{ name: 'N', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 0] }], connections: {} });
    assert.deepEqual(old.settings, { executionOrder: 'v1' }, 'an export from before n8n 1.0 runs in v1 order');
    assert.deepEqual(
      importWorkflow({ name: 'x', nodes: [{ name: 'N', type: 'engine.noOp' }], connections: {} }).settings,
      {},
      'our own format keeps its order',
    );
    invalid({ type: 'n8n-nodes-base.respondToWebhook', typeVersion: 1.1, parameters: { respondWith: 'jwt' } }, 'unsupported_option', 'respondWith');
    invalid({ type: 'n8n-nodes-base.wait', typeVersion: 1.1, parameters: { resume: 'form' } }, 'unsupported_option', 'resume');
    invalid(
      { type: 'n8n-nodes-base.httpRequest', typeVersion: 4.2, parameters: { url: 'https://x', sendBody: true, contentType: 'xml-soap' } },
      'unsupported_parameter',
    );
  });

  test('HTTP Request files: a file response, a multipart form with a file, a file as the body (v4 and v1)', () => {
    const params = (node: Record<string, unknown>) =>
      (importWorkflow({ name: 'x', nodes: [{ name: 'H', position: [0, 0], ...node }], connections: {} }).nodes as { parameters?: unknown }[])[0]!.parameters;
    assert.deepEqual(
      params({
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: 4.2,
        parameters: {
          url: 'https://x/upload',
          method: 'POST',
          sendBody: true,
          contentType: 'multipart-form-data',
          bodyParameters: {
            parameters: [
              { name: 'title', value: '={{ $json.title }}' },
              { parameterType: 'formBinaryData', name: 'file', inputDataFieldName: 'doc' },
            ],
          },
          options: { response: { response: { responseFormat: 'file', outputPropertyName: 'answer' } } },
        },
      }),
      {
        url: 'https://x/upload',
        method: 'POST',
        multipart: [
          { name: 'title', value: '{{ $json.title }}' },
          { name: 'file', binary: 'doc' },
        ],
        responseFormat: 'file',
        outputPropertyName: 'answer',
      },
    );
    assert.deepEqual(
      params({
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: 4.2,
        parameters: { url: 'https://x', method: 'PUT', sendBody: true, contentType: 'binaryData', inputDataFieldName: 'data' },
      }),
      { url: 'https://x', method: 'PUT', bodyBinary: 'data' },
    );
    assert.deepEqual(
      params({ type: 'n8n-nodes-base.httpRequest', typeVersion: 1, parameters: { url: 'https://x/f.pdf', responseFormat: 'file', dataPropertyName: 'pdf' } }),
      { url: 'https://x/f.pdf', method: 'GET', responseFormat: 'file', outputPropertyName: 'pdf' },
    );
    assert.deepEqual(
      params({
        type: 'n8n-nodes-base.httpRequest',
        typeVersion: 1,
        parameters: { url: 'https://x', requestMethod: 'POST', sendBinaryData: true, binaryPropertyName: 'data' },
      }),
      { url: 'https://x', method: 'POST', bodyBinary: 'data' },
    );
  });
});
