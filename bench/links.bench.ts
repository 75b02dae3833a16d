import 'reflect-metadata';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import type { Links } from '../test/support/answers';
import { callJson, startLocalPlatform } from '../test/support/platform';
import { spawnServer, stopOnSignals, type ServerChild } from './child';
import { interleaved, LOAD_PHASE, type LoadFigures, type Slice } from './load';
import { benchMain, createScratchDatabase } from './scratch-db';

/**
 * Short-link redirects per second beside a bare node:http 302, and password verifications per
 * second (one argon2id each) beside those of a locked-out address (answered without hashing).
 * After the load the child drains, and the visits stored must equal the 302s given: a redirect
 * that loses its visit would be fast for the wrong reason.
 * Use: `await benchLinks(serverUrl)`, or `node dist/bench/links.bench.js`. Knobs as bench/run.ts.
 */

const DESTINATION = 'https://example.com/landing';
const PASSWORD = 'bench password';

interface ServerInfo {
  url: string;
  bareUrl: string;
  linkId: string;
  protectedId: string;
}

export interface LinksBenchFigures {
  redirect: LoadFigures;
  baseline: LoadFigures;
  verify: LoadFigures;
  locked: LoadFigures;
  /** Visits stored after the drain, against the 302 answers given. */
  persisted: { visits: number; answers: number };
}

async function serve(): Promise<void> {
  let local: Awaited<ReturnType<typeof startLocalPlatform>> | undefined;
  const bare = http.createServer((_req, res) => res.writeHead(302, { location: DESTINATION, 'cache-control': 'no-store' }).end());
  const stop = stopOnSignals('bench links server', async () => {
    bare.close();
    await local?.stop();
  });
  try {
    local = await startLocalPlatform({ LOG_LEVEL: 'error', TRUST_PROXY: 'true' }, { label: 'bench-links' });
    const { url } = local.platform;
    const admin = local.adminKey;
    await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
    const call = async (p: string, body: unknown) => (await callJson<Links<{ id: string }>>(url, 'POST', p, admin, body)).data;
    const link = await call('/links/api/links', { url: DESTINATION, custom_slug: 'bench' });
    const locked = await call('/links/api/links', { url: DESTINATION, custom_slug: 'bench-locked', password: PASSWORD });
    for (let i = 0; i < 5; i++) {
      await fetch(`${url}/links/api/links/${locked.id}/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.99' },
        body: '{"password":"wrong guess"}',
      });
    }
    const info: ServerInfo = { url, bareUrl: `http://127.0.0.1:${(bare.address() as AddressInfo).port}`, linkId: link.id, protectedId: locked.id };
    process.stdout.write(JSON.stringify(info) + '\n');
  } catch (err) {
    process.stderr.write(`bench links server: ${err instanceof Error ? err.stack : String(err)}\n`);
    await stop(1);
  }
}

export async function benchLinks(serverUrl: string): Promise<LinksBenchFigures> {
  const db = await createScratchDatabase(serverUrl, 'links');
  let server: ServerChild<ServerInfo> | undefined;
  try {
    server = await spawnServer<ServerInfo>('links bench server', __filename, ['--serve'], { ...process.env, DATABASE_URL: db.url });
    const { info } = server;
    let answers = 0;
    const redirect = (s: number) => s === 302;
    const verifyBody = JSON.stringify({ password: PASSWORD });
    const post = { method: 'POST' as const, body: verifyBody };
    const loads = await interleaved(
      {
        redirect: { url: `${info.url}/links/bench`, accept: redirect },
        baseline: { url: `${info.bareUrl}/r`, accept: redirect },
        verify: {
          url: `${info.url}/links/api/links/${info.protectedId}/verify`,
          ...post,
          headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.7' },
          connections: 4,
        },
        locked: {
          url: `${info.url}/links/api/links/${info.protectedId}/verify`,
          ...post,
          headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.99' },
          accept: (s) => s === 429,
          connections: 8,
        },
      },
      { ...LOAD_PHASE, onSlice: (name, s: Slice) => name === 'redirect' && (answers += s.latencies.length) },
    );
    await server.stop(); // drains: the batched visits are written
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    let visits = 0;
    try {
      visits = (await pg.query(`SELECT count(*)::int AS n FROM links.visits WHERE link_id = $1`, [info.linkId])).rows[0].n;
    } finally {
      await pg.end();
    }
    return { ...loads, persisted: { visits, answers } };
  } finally {
    await server?.stop();
    await db.drop();
  }
}

if (require.main === module) benchMain(benchLinks, () => void serve());
