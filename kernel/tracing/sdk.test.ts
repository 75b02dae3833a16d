import assert from 'node:assert/strict';
import { redactQuery, tracingWanted } from './sdk';

test('traces are exported only to a set endpoint, and never when the SDK is disabled or the exporter is none', () => {
  assert.equal(tracingWanted({}), false);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ', OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), false);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }), false);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' }), false);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' }), true);
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }), false);
});

test('a URL’s query values are redacted, its names, path and fragment kept', () => {
  assert.equal(
    redactQuery('https://api.example.com/v1/items?api_key=abc&page=2&flag#top'),
    'https://api.example.com/v1/items?api_key=REDACTED&page=REDACTED&flag#top',
  );
  assert.equal(redactQuery('/webhook/orders'), '/webhook/orders');
  assert.equal(redactQuery('/x?a=1=2'), '/x?a=REDACTED');
});
