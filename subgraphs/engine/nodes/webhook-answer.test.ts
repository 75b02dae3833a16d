import assert from 'node:assert/strict';
import { webhookAnswerOptions } from './webhook-answer';

/** The answer settings of n8n's Webhook (1 to 2.1) and Wait nodes, as their exports write them. */

test('the status: top-level responseCode (1, 1.1), options.responseCode.values from 2 on, a custom code when set', () => {
  assert.deepEqual(webhookAnswerOptions({ responseCode: 202 }), { responseCode: 202 });
  assert.deepEqual(webhookAnswerOptions({ options: { responseCode: { values: { responseCode: 204 } } } }), { responseCode: 204 });
  assert.deepEqual(webhookAnswerOptions({ options: { responseCode: { values: { responseCode: 'customCode', customCode: 418 } } } }), { responseCode: 418 });
  assert.deepEqual(webhookAnswerOptions({ options: { responseCode: { values: { responseCode: 'customCode' } } } }), {});
  assert.throws(() => webhookAnswerOptions({ responseCode: 99 }), /HTTP status from 100 to 599, not 99/);
});

test('the body and headers: onReceived text or none, lastNode data, its field, content type and file', () => {
  assert.deepEqual(
    webhookAnswerOptions({
      responseMode: 'lastNode',
      responseData: 'firstEntryBinary',
      responseBinaryPropertyName: 'report',
      options: {
        responseData: 'ok',
        noResponseBody: true,
        responsePropertyName: 'order',
        responseContentType: 'application/xml',
        responseHeaders: {
          entries: [
            { name: 'X-A', value: 1 },
            { name: '', value: 'dropped' },
          ],
        },
      },
    }),
    {
      responseMode: 'lastNode',
      lastNodeData: 'firstEntryBinary',
      responseBinaryPropertyName: 'report',
      responseData: 'ok',
      noResponseBody: true,
      responsePropertyName: 'order',
      responseContentType: 'application/xml',
      responseHeaders: { 'x-a': '1' },
    },
  );
  // Expressions are n8n's to evaluate per request: left out, not sent as text.
  assert.deepEqual(webhookAnswerOptions({ responseCode: '={{ 201 }}', options: { responsePropertyName: '={{ "a" }}' } }), {});
  assert.throws(
    () => webhookAnswerOptions({ options: { responseHeaders: { entries: [{ name: 'bad header', value: '1' }] } } }),
    /not a valid HTTP header name/,
  );
  assert.throws(() => webhookAnswerOptions({ options: { responseHeaders: { entries: [{ name: 'x-a', value: 'a\r\nb' }] } } }), /must be one line/);
});
