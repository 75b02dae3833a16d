/**
 * Imported first by main.ts: the instrumentations patch node:http, undici, pg and ioredis as they
 * are loaded, so the SDK must start before anything else loads them.
 */
import { startTracing, tracingWanted } from './sdk';
import { setTracingShutdown } from './index';

if (tracingWanted(process.env)) {
  const sdk = startTracing(process.env);
  setTracingShutdown(() => sdk.shutdown());
}
