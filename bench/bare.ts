import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';

export interface BareServer {
  url: string;
  close(): Promise<void>;
}

/**
 * A physical reference: a bare `node:http` server on an ephemeral port of 127.0.0.1 with a `pg`
 * pool of its own (`max` connections), no framework, in the calling process, so it shares its
 * CPU with the platform exactly as the targets it is compared with do. `handler` gets the pool.
 */
export async function startBareServer(databaseUrl: string, max: number, handler: (pool: Pool) => http.RequestListener): Promise<BareServer> {
  const pool = new Pool({ connectionString: databaseUrl, max });
  const server = http.createServer(handler(pool));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await pool.end();
    },
  };
}
