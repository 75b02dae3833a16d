import path from 'node:path';

/**
 * @apollo/gateway 2.14.4's index loads, whatever its configuration, the packages of its usage
 * telemetry: the AWS, GCP, Azure and Alibaba resource detectors, the metrics SDK and an OTLP
 * metrics exporter, about 0.4 s of every start. It uses them only inside the function that builds its telemetry,
 * which runs only when APOLLO_TELEMETRY_DISABLED is not set, and the platform always sets it
 * (`newApolloGateway`). So, loaded before @apollo/gateway, this module puts in their place in
 * Node's module cache an object that throws on any use, naming this file: a version that used
 * them at load or with telemetry off fails at start, loudly, instead of phoning home.
 *
 * Only the copies @apollo/gateway resolves are replaced, and only packages nothing else in the
 * platform loads (the tracing SDK uses no detector, and its exporters bring their own copy of the
 * metrics SDK). When upgrading
 * @apollo/gateway, run kernel/adapters/apollo-gateway.test.ts.
 */
const UNUSED = [
  '@opentelemetry/resource-detector-alibaba-cloud',
  '@opentelemetry/resource-detector-aws',
  '@opentelemetry/resource-detector-gcp',
  '@opentelemetry/resource-detector-azure',
  '@opentelemetry/exporter-metrics-otlp-http',
  '@opentelemetry/sdk-metrics',
];

/** The module files replaced, by package. */
export const replacedTelemetry: Record<string, string> = {};

const from = path.dirname(require.resolve('@apollo/gateway/dist/utilities/opentelemetry.js'));
for (const name of UNUSED) {
  let file: string;
  try {
    file = require.resolve(name, { paths: [from] });
  } catch {
    continue; // not installed: nothing to spare
  }
  if (require.cache[file]) continue; // already loaded by someone: left as it is
  const refusal = new Proxy(
    {},
    {
      get(_target, property) {
        if (property === '__esModule' || typeof property === 'symbol') return undefined;
        throw new Error(
          `${name} was used (${String(property)}) but is replaced by kernel/adapters/apollo-telemetry.ts: @apollo/gateway telemetry must stay off`,
        );
      },
    },
  );
  const stub = new (require('node:module') as typeof import('node:module'))(file);
  stub.filename = file;
  stub.loaded = true;
  stub.exports = refusal;
  require.cache[file] = stub;
  replacedTelemetry[name] = file;
}
