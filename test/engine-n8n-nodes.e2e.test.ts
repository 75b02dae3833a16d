import assert from 'node:assert/strict';
import type { V1 } from './support/answers';
import type { Execution, ExecutionList } from './support/engine-answers';
import { startTestPlatform, type TestPlatform } from './support/platform';
import { importN8n, runSync } from './support/n8n-export';
import { untilValue } from './support/until';

/**
 * n8n's XML, HTML, Markdown and Stop and Error nodes end to end, on PostgreSQL: an n8n export
 * using them imports as it is and runs with n8n's outputs; when Stop and Error fails it, the
 * workflow named in its settings.errorWorkflow (an n8n export starting with an Error Trigger)
 * runs with what the failed execution reports.
 */

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

const to = (node: string, index = 0) => ({ node, type: 'main', index });
const node = (id: string, name: string, type: string, typeVersion: number, x: number, parameters: Record<string, unknown>) => ({
  id,
  name,
  type: `n8n-nodes-base.${type}`,
  typeVersion,
  position: [x, 0],
  parameters,
});

const HANDLER = {
  name: 'On failure',
  settings: { executionOrder: 'v1' },
  nodes: [
    node('1', 'Error Trigger', 'errorTrigger', 1, 0, {}),
    node('2', 'Report', 'markdown', 1, 200, {
      mode: 'markdownToHtml',
      markdown: '=**{{ $json.workflow.name }}** failed at {{ $json.execution.lastNodeExecuted }}: {{ $json.execution.error.message }}',
      destinationKey: 'report.html',
    }),
  ],
  connections: { 'Error Trigger': { main: [[to('Report')]] } },
};

/** Start -> XML (to XML) -> XML (back to JSON) -> HTML template -> Markdown -> HTML extract -> If (qty > 10) -> Stop and Error | Done. */
const ORDERS = (errorWorkflow: string) => ({
  name: 'Orders from n8n',
  settings: { executionOrder: 'v1', errorWorkflow },
  nodes: [
    node('1', 'Start', 'manualTrigger', 1, 0, {}),
    node('2', 'To XML', 'xml', 1, 200, { mode: 'jsonToxml', options: { rootName: 'order', headless: true } }),
    node('3', 'From XML', 'xml', 1, 400, { options: { explicitRoot: false } }),
    node('4', 'Page', 'html', 1.2, 600, { html: '<h1>Order {{ $json.id }}</h1>\n<p>{{ $json.qty }} × {{ $json.sku }}</p>' }),
    node('5', 'To Markdown', 'markdown', 1, 800, { html: '={{ $json.html }}', destinationKey: 'md' }),
    node('6', 'Heading', 'html', 1.1, 1000, {
      operation: 'extractHtmlContent',
      dataPropertyName: 'html',
      extractionValues: { values: [{ key: 'title', cssSelector: 'h1' }] },
      options: { trimValues: true },
    }),
    node('7', 'Too many?', 'if', 2, 1200, {
      conditions: {
        options: { caseSensitive: true, leftValue: '', typeValidation: 'loose' },
        conditions: [{ id: 'c', leftValue: "={{ $('From XML').item.json.qty }}", rightValue: 10, operator: { type: 'number', operation: 'gt' } }],
        combinator: 'and',
      },
      options: {},
    }),
    node('8', 'Refuse', 'stopAndError', 1, 1400, {
      errorType: 'errorObject',
      errorObject: '={"message": "Order {{ $json.title }} is too large", "type": "limit"}',
    }),
    node('9', 'Done', 'noOp', 1, 1400, {}),
  ],
  connections: {
    Start: { main: [[to('To XML')]] },
    'To XML': { main: [[to('From XML')]] },
    'From XML': { main: [[to('Page')]] },
    Page: { main: [[to('To Markdown')]] },
    'To Markdown': { main: [[to('Heading')]] },
    Heading: { main: [[to('Too many?')]] },
    'Too many?': { main: [[to('Refuse')], [to('Done')]] },
  },
});

const importWorkflow = (workflow: Record<string, unknown>) => importN8n(p, workflow);
const run = (workflowId: string, data: Record<string, unknown>) => runSync(p, workflowId, data);

describe('n8n XML, HTML, Markdown and Stop and Error nodes, persisted', () => {
  test("an n8n export runs with n8n's outputs; Stop and Error fails it and its error workflow reports the failure", async () => {
    const handler = await importWorkflow(HANDLER);
    const orders = await importWorkflow(ORDERS(handler));

    const small = await run(orders, { id: 7, sku: 'A-1', qty: 3 });
    assert.equal(small.status, 'success', JSON.stringify(small.error));
    assert.deepEqual(small.result.items, [{ title: 'Order 7' }]);
    const saved = await p.rest<V1<Execution>>('GET', `/v1/engine/executions/${small.executionId}?includeData=true`);
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const outputOf = (name: string) => saved.body.data.nodeData.find((n) => n.nodeName === name)?.output.main.map((list) => list.map((i) => i.json));
    assert.deepEqual(outputOf('To XML'), [[{ data: '<order>\n  <id>7</id>\n  <sku>A-1</sku>\n  <qty>3</qty>\n</order>' }]]);
    assert.deepEqual(outputOf('From XML'), [[{ id: '7', sku: 'A-1', qty: '3' }]]);
    assert.deepEqual(outputOf('To Markdown'), [[{ html: '<h1>Order 7</h1>\n<p>3 × A-1</p>', md: '# Order 7\n\n3 × A-1' }]]);

    const large = await run(orders, { id: 8, sku: 'B-2', qty: 40 });
    assert.equal(large.status, 'error');
    assert.equal(large.error.code, 'NODE_EXECUTION_FAILED');
    assert.equal(large.error.node, 'Refuse');
    assert.equal(large.error.message, 'Node "Refuse" failed: Order Order 8 is too large');
    assert.equal(large.error.details.type, 'limit');

    const reported = await untilValue(
      'the error workflow to finish',
      async () => (await p.rest<V1<ExecutionList>>('GET', `/v1/engine/executions?workflowId=${handler}`)).body.data.executions,
      (list) => list.length === 1 && list[0]!.status === 'success',
      { timeoutMs: 30_000, everyMs: 100 },
    );
    assert.equal(reported[0].mode, 'error');
    const report = await p.rest<V1<Execution<{ report: unknown; execution: { id: string }; workflow: { id: string } }>>>(
      'GET',
      `/v1/engine/executions/${reported[0].executionId}?includeData=true`,
    );
    const items = report.body.data.result.items;
    assert.equal(items.length, 1);
    assert.deepEqual(items[0].report, {
      html: '<p><strong>Orders from n8n</strong> failed at Refuse: Node "Refuse" failed: Order Order 8 is too large</p>',
    });
    assert.equal(items[0].execution.id, large.executionId);
    assert.equal(items[0].workflow.id, orders);
  });

  test('what is not supported is refused at import, naming the node and why', async () => {
    const res = await p.rest<V1<never>>('POST', '/v1/engine/workflows/import', {
      body: {
        workflow: {
          name: 'A range of cells',
          nodes: [
            node('1', 'Start', 'manualTrigger', 1, 0, {}),
            node('2', 'Extract', 'extractFromFile', 1, 200, { operation: 'xls', options: { range: 'A1:B2' } }),
          ],
          connections: { Start: { main: [[to('Extract')]] } },
        },
      },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'WORKFLOW_INVALID');
    assert.match(res.body.error.message, /Extract/);
    assert.match(res.body.error.message, /reading a range of cells is not supported/);
  });
});
