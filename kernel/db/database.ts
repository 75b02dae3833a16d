import type { Config } from '../config';
import type { Logger } from '../logger';
import { startEmbeddedPostgres } from './embedded';

export interface Database {
  /** postgres:// URL of the server this process uses. */
  url: string;
  /** Whether this process started the server (embedded mode) and must stop it on exit. */
  embedded: boolean;
  stop(): Promise<void>;
}

/** DATABASE_URL when set; else a real PostgreSQL server run by this process under DATA_DIR. */
export async function resolveDatabase(config: Config, logger: Logger): Promise<Database> {
  if (config.databaseUrl) {
    return { url: config.databaseUrl, embedded: false, stop: async () => undefined };
  }
  const server = await startEmbeddedPostgres({ dataDir: config.dataDir, logger });
  return { url: server.url, embedded: true, stop: server.stop };
}
