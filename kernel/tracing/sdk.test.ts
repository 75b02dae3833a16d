import assert from 'node:assert/strict';
import { tracingWanted } from './sdk';

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
