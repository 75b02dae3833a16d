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
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: base.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base.url);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new Client({ connectionString: base.url });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
      // The embedded server (no DATABASE_URL) lives as long as some test database does.
      if (--open === 0 && base.embedded) {
        server = undefined;
        await base.stop();
      }
    },
  };
}
