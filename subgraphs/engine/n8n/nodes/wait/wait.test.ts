import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runWorkflow } from '../../../../../test/support/n8n-harness';
import type { NodeContext, NodeResult } from '../../../nodes';
import { wait } from './wait';

/** n8n's Wait: what it asks of the execution (sleep here, or be stored until a time or a call). The stored waits are tested end to end (test/engine-n8n-flow.e2e.test.ts). */

afterAll(() => disposeHarness());

const NOW = new Date('2026-11-23T10:00:00.000Z');

/** The node run on one item with `parameters` (already resolved), at NOW. */
function run(typeVersion: number, parameters: Record<string, unknown>): Promise<NodeResult> {
  const items = [{ json: { a: 1 } }];
  const ctx = {
    node: { name: 'Wait', type: 'n8n-nodes-base.wait', typeVersion, position: [0, 0], parameters },
    items,
    inputs: [items],
    parameters: async () => [parameters],
    signal: new AbortController().signal,
    services: { now: () => NOW },
  } as unknown as NodeContext;
  return wait.execute(ctx);
}

const until = async (typeVersion: number, parameters: Record<string, unknown>) => (await run(typeVersion, parameters)).wait;

test('timeInterval: version 1 waits 1 hour by default, 1.1 5 seconds (in memory); 65 s and more are stored', async () => {
  assert.deepEqual(await until(1, {}), { until: new Date('2026-11-23T11:00:00.000Z'), webhook: false });
  assert.deepEqual(await until(1.1, { amount: 2, unit: 'days' }), { until: new Date('2026-11-25T10:00:00.000Z'), webhook: false });
  assert.deepEqual(await until(1.1, { amount: 65, unit: 'seconds' }), { until: new Date('2026-11-23T10:01:05.000Z'), webhook: false });
  const short = await run(1.1, { amount: 0.05, unit: 'seconds' });
  assert.equal(short.wait, undefined);
  assert.deepEqual(short.outputs, [[{ json: { a: 1 } }]]);
  await assert.rejects(run(1.1, { amount: -1, unit: 'seconds' }), /amount must be a number of seconds of at least 0/);
  await assert.rejects(run(1.1, { amount: 1, unit: 'weeks' }), /unit "weeks" is not one of/);
});

test('specificTime: stored until then; a time passed goes on at once; a date that is none fails with n8n’s message', async () => {
  assert.deepEqual(await until(1.1, { resume: 'specificTime', dateTime: '2026-12-01T08:30:00+01:00' }), {
    until: new Date('2026-12-01T07:30:00.000Z'),
    webhook: false,
  });
  assert.equal(await until(1.1, { resume: 'specificTime', dateTime: '2020-01-01T00:00:00Z' }), undefined);
  await assert.rejects(run(1, { resume: 'specificTime', dateTime: 'next tuesday' }), /`dateTime` parameter is not a valid date/);
});

test('webhook: waits for the resume URL, at most the time limit when there is one', async () => {
  assert.deepEqual(await until(1.1, { resume: 'webhook' }), { until: null, webhook: true });
  assert.deepEqual(await until(1.1, { resume: 'webhook', limitWaitTime: true }), { until: new Date('2026-11-23T11:00:00.000Z'), webhook: true });
  assert.deepEqual(await until(1.1, { resume: 'webhook', limitWaitTime: true, resumeAmount: 30, resumeUnit: 'minutes' }), {
    until: new Date('2026-11-23T10:30:00.000Z'),
    webhook: true,
  });
  assert.deepEqual(await until(1, { resume: 'webhook', limitWaitTime: true, limitType: 'atSpecifiedTime', maxDateAndTime: '2026-11-24T00:00:00Z' }), {
    until: new Date('2026-11-24T00:00:00.000Z'),
    webhook: true,
  });
});

test('in a workflow: a short wait passes the items on; a long one leaves the execution waiting', async () => {
  const flow = (parameters: Record<string, unknown>) => ({
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
      { name: 'Wait', type: 'n8n-nodes-base.wait', typeVersion: 1.1, position: [200, 0], parameters },
    ],
    connections: { Start: { main: [[{ node: 'Wait', type: 'main', index: 0 }]] } },
  });
  const short = await runWorkflow(flow({ amount: 0.2 }), { input: [{ n: 1 }] });
  assert.equal(short.status, 'success');
  assert.deepEqual(short.result, [{ n: 1 }]);
  assert.equal((await runWorkflow(flow({ amount: 5, unit: 'minutes' }))).status, 'waiting');
});

test('webhook options: kept with the wait for the resume URL, as n8n names them', async () => {
  const options = {
    webhookSuffix: '/approve/',
    ignoreBots: true,
    ipWhitelist: '10.0.0.1, 192.168.0.0/16',
    noResponseBody: false,
    responseData: 'thanks',
    responseHeaders: { entries: [{ name: 'X-Step', value: 'approved' }] },
    rawBody: true,
    binaryPropertyName: 'upload',
  };
  assert.deepEqual(await until(1.1, { resume: 'webhook', httpMethod: 'post', responseCode: 202, options }), {
    until: null,
    webhook: true,
    resume: {
      httpMethod: 'POST',
      responseCode: 202,
      responseData: 'thanks',
      responseHeaders: { 'x-step': 'approved' },
      webhookSuffix: 'approve',
      ignoreBots: true,
      ipWhitelist: ['10.0.0.1', '192.168.0.0/16'],
      rawBody: true,
      binaryPropertyName: 'upload',
    },
  });
  assert.deepEqual(await until(1, { resume: 'webhook', binaryData: true, options: { noResponseBody: true } }), {
    until: null,
    webhook: true,
    resume: { noResponseBody: true, binaryData: true },
  });
  await assert.rejects(run(1.1, { resume: 'webhook', responseCode: 99 }), /HTTP status from 100 to 599, not 99/);
  await assert.rejects(run(1.1, { resume: 'webhook', httpMethod: 'TRACE' }), /"TRACE" is not one of GET, POST/);
  await assert.rejects(
    run(1.1, { resume: 'webhook', options: { responseHeaders: { entries: [{ name: 'bad header', value: '1' }] } } }),
    /not a valid HTTP header name/,
  );
});

test('the form resume is refused at import; answers from the workflow (lastNode, responseNode) and the other webhook options are taken', () => {
  const refused = (parameters: Record<string, unknown>) => importRefusal({ type: 'n8n-nodes-base.wait', typeVersion: 1.1, parameters });
  assert.match(refused({ resume: 'form' })!.message, /form/);
  assert.equal(refused({ resume: 'webhook', responseMode: 'lastNode', responseData: 'allEntries' }), undefined);
  assert.equal(refused({ resume: 'webhook', responseMode: 'responseNode' }), undefined);
  assert.equal(refused({ resume: 'webhook', responseCode: 202, options: { webhookSuffix: 'done', ignoreBots: true, rawBody: true } }), undefined);
  assert.equal(refused({ resume: 'webhook', httpMethod: 'POST', options: {} }), undefined);
  assert.equal(refused({ amount: 3, unit: 'minutes' }), undefined);
});
