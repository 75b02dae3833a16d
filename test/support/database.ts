import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { loadConfig } from '../../kernel/config';
import { resolveDatabase, type Database } from '../../kernel/db/database';
import { createLogger } from '../../kernel/logger';

/**
 * A fresh, empty database for one test file, on the server of DATABASE_URL (a real PostgreSQL),
 * or on an embedded server when DATABASE_URL is unset. Dropped again by `drop()`.
 */
export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

let server: Promise<Database> | undefined;
let open = 0;

export async function createTestDatabase(): Promise<TestDatabase> {
  server ??= resolveDatabase({ ...loadConfig(process.env), dataDir: process.env.TEST_DATA_DIR ?? './data/test-postgres' }, createLogger('warn'));
  const base = await server;
  open++;
  const db = await createDatabaseOn(base.url, `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`);
  return {
    url: db.url,
    async drop() {
      await db.drop();
      // The embedded server (no DATABASE_URL) lives as long as some test database does.
      if (--open === 0 && base.embedded) {
        server = undefined;
        await base.stop();
      }
    },
  };
}

/** A new, empty database `name` on the server of `serverUrl` (tests and benchmarks); `drop()` drops it, connections and all. */
export async function createDatabaseOn(serverUrl: string, name: string): Promise<TestDatabase> {
  const admin = async (sql: string) => {
    const c = new Client({ connectionString: serverUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
