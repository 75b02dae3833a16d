import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client } from 'pg';
import { loadConfig } from '../kernel/config';
import { resolveDatabase, type Database } from '../kernel/db/database';
import { createLogger } from '../kernel/logger';

/**
 * The benchmark's PostgreSQL: DATABASE_URL's server, or an embedded server (under
 * data/bench-postgres) when DATABASE_URL is unset. Every figure runs in a scratch database of
 * its own on that server, dropped afterwards (like test/support/database.ts).
 */
export function resolveBenchServer(): Promise<Database> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'error' });
  return resolveDatabase({ ...config, dataDir: path.resolve(process.env.BENCH_DATA_DIR ?? './data/bench-postgres') }, createLogger('warn'));
}

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createScratchDatabase(serverUrl: string, label: string): Promise<ScratchDatabase> {
  const name = `bench_${label}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new Client({ connectionString: serverUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
