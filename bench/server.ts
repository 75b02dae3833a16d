// First, as in main.ts: with OTEL_EXPORTER_OTLP_ENDPOINT set (the tracing phase) the SDK patches http and pg as they load.
import '../kernel/tracing/register';
import 'reflect-metadata';
import type { FastifyInstance } from 'fastify';
import { authorize } from '../kernel/auth/principal';
import type { ApiKeyRecord } from '../kernel/auth/api-key.store';
import { AppError } from '../kernel/errors';
import type { Kernel } from '../kernel/platform';
import { EdgeRejection, newRequestId, type Edge } from '../kernel/edge';
import { startLocalPlatform } from '../test/support/platform';
import { envelopes } from '../kernel/envelopes';
import { presentedCredentials } from '../kernel/http';
import { keyOut } from '../rest-adapter/surfaces/control-plane-api.routes';
import { toApiKey } from '../subgraphs/control-plane/keys';
import { startBareServer, type BareServer } from './bare';
import { stopOnSignals } from './child';
import { createScratchDatabase, resolveBenchServer } from './scratch-db';

/**
 * The platform under benchmark in a process of its own (bench/run.ts drives it): scratch database,
 * the whole platform and the baseline handler on ephemeral ports, BENCH_KEYS enterprise keys (and
 * BENCH_TASK_KEYS task keys when asked). Prints one JSON line: url, bareUrl, keys, ids, keyId, dbUrl,
 * taskKeys. Keys hold `keys:manage`, not `*`, so each request reads the key that authenticates it.
 * Stops on SIGTERM/SIGINT, when its driver is gone (IPC closed) or after BENCH_SERVER_MAX_SECONDS.
 */

export const BASELINE_PATH = '/bench/baseline/api-keys/:key_id';

/**
 * The baseline: the full path minus REST adapter → gateway → subgraph. Same authentication and
 * rate limiting (Edge.admit, same headers), same authorization check, same database read, same
 * envelope and fields.
 */
function baselineRoutes(app: FastifyInstance, kernel: Kernel, edge: Edge): void {
  app.get(BASELINE_PATH, async (req, reply) => {
    const requestId = newRequestId();
    const meta = () => ({ requestId, timestamp: new Date().toISOString() });
    try {
      const admission = await edge.admit(presentedCredentials(req), requestId);
      reply.headers(admission.headers);
      const principal = admission.context.principal;
      authorize(principal, 'control-plane', 'keys:manage');
      const key: ApiKeyRecord = await kernel.keys.get(principal, (req.params as { key_id: string }).key_id);
      return reply.send(envelopes.platform.success(keyOut(toApiKey(key)), meta()));
    } catch (err) {
      let error = err;
      if (error instanceof EdgeRejection) {
        reply.headers(error.headers);
        error = error.error;
      }
      if (error instanceof AppError) return reply.code(error.status).send(envelopes.platform.error(error, meta()));
      throw err;
    }
  });
}

/**
 * The physical reference: a bare `node:http` handler doing one primary-key read with `pg` (no
 * framework, no authentication, no envelope beyond the same JSON shape), in this same process so
 * it shares its CPU with the platform exactly as the targets it is compared with do.
 */
function startBareReference(databaseUrl: string): Promise<BareServer> {
  return startBareServer(databaseUrl, 20, (pool) => (req, res) => {
    const id = (req.url ?? '').slice((req.url ?? '').lastIndexOf('/') + 1);
    pool
      .query('SELECT id, name, service, tier, permissions, created_at, expires_at FROM platform.api_keys WHERE id = $1', [id])
      .then(({ rows }) => {
        res.writeHead(rows.length ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, data: rows[0] ?? null }));
      })
      .catch(() => res.writeHead(500).end());
  });
}

/** Runs `fn` for 0..n-1 with at most `width` calls in flight. */
async function inParallel(n: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

async function main(): Promise<void> {
  const keyCount = Number(process.env.BENCH_KEYS ?? 300);
  const server = await resolveBenchServer();
  const db = await createScratchDatabase(server.url, 'rest');
  let local: Awaited<ReturnType<typeof startLocalPlatform>> | undefined;
  let bare: BareServer | undefined;
  const stop = stopOnSignals('bench server', async () => {
    try {
      await bare?.close();
      await local?.stop();
    } catch (err) {
      process.stderr.write(`bench server: unclean stop: ${String(err)}\n`);
    }
    await db.drop().catch((err) => process.stderr.write(`bench server: could not drop ${db.url}: ${String(err)}\n`));
    if (server.embedded) await server.stop();
  });

  try {
    local = await startLocalPlatform({ DATABASE_URL: db.url, LOG_LEVEL: 'error' }, { label: 'platform-bench', extraRoutes: baselineRoutes });
    const kernel = local.platform.kernel;
    const admin = await kernel.keys.authenticate(local.adminKey);
    const keys: string[] = new Array(keyCount);
    const ids: string[] = new Array(keyCount);
    await inParallel(keyCount, 8, async (i) => {
      const { key, plain } = await kernel.keys.create(admin, { name: `bench ${i}`, tier: 'enterprise', permissions: ['keys:manage'] });
      keys[i] = plain;
      ids[i] = key.id;
    });
    const taskKeys: string[] = [];
    for (let i = 0; i < Number(process.env.BENCH_TASK_KEYS ?? 0); i++) {
      taskKeys.push((await kernel.keys.create(admin, { name: `bench tasks ${i}`, tier: 'enterprise', permissions: ['agent:execute', 'agent:read'] })).plain);
    }
    bare = await startBareReference(db.url);
    process.stdout.write(JSON.stringify({ url: local.platform.url, bareUrl: bare.url, keys, ids, keyId: ids[0], dbUrl: db.url, taskKeys }) + '\n');
  } catch (err) {
    process.stderr.write(`bench server: ${err instanceof Error ? err.stack : String(err)}\n`);
    await stop(1);
  }
}

if (require.main === module) void main();
