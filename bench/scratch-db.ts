import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { loadConfig } from '../kernel/config';
import { resolveDatabase, type Database } from '../kernel/db/database';
import { createLogger } from '../kernel/logger';
import { createDatabaseOn, type TestDatabase } from '../test/support/database';

/**
 * The benchmark's PostgreSQL: DATABASE_URL's server, or an embedded server (under
 * data/bench-postgres) when DATABASE_URL is unset. Every figure runs in a scratch database of
 * its own on that server, dropped afterwards (like test/support/database.ts).
 */
export function resolveBenchServer(): Promise<Database> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'error' });
  return resolveDatabase({ ...config, dataDir: path.resolve(process.env.BENCH_DATA_DIR ?? './data/bench-postgres') }, createLogger('warn'));
}

export function createScratchDatabase(serverUrl: string, label: string): Promise<TestDatabase> {
  return createDatabaseOn(serverUrl, `bench_${label}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`);
}

/**
 * The command line of a bench file run alone (`node dist/bench/<name>.bench.js`): with `--serve`
 * it is the server child; otherwise it runs `bench` on the bench database server and prints the figures.
 */
export function benchMain(bench: (serverUrl: string) => Promise<unknown>, serve: () => void): void {
  if (process.argv.includes('--serve')) return serve();
  (async () => {
    const server = await resolveBenchServer();
    try {
      process.stdout.write(JSON.stringify(await bench(server.url), null, 2) + '\n');
    } finally {
      if (server.embedded) await server.stop();
    }
  })().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
