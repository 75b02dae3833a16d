import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:net';
import { until } from './until';

/** A TCP port on 127.0.0.1 that nothing listens on right now: for a process to start on, or for a request that must be refused. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The whole body of a request a local fake or receiver got, as UTF-8 text (empty when there is
 * none). A request the client aborts never resolves: its handler never runs, and nothing throws
 * in the fake while a test is checking how the platform gives up on a call.
 */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** Waits until the platform at `url` answers `GET /health` with 200 (refused connections count as not yet). */
export async function waitHealthy(url: string, timeoutMs = 30_000): Promise<void> {
  await until(`${url} to become healthy`, async () => (await fetch(`${url}/health`).catch(() => null))?.status === 200, timeoutMs, 200);
}
