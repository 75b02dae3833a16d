import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase } from './database';
import { answerOf } from './json';
import { freePort, waitHealthy } from './net';
import type { JsonAnswer } from './platform';

/**
 * The split topology as real processes on a fresh database of their own: one subgraph alone (the
 * control plane unless `subgraph` names another), a worker, and the gateway with the REST adapter
 * reaching that subgraph over HTTP. `env` is added to all three (LLM_BASE_URL, …).
 */
export interface SplitTopology {
  gatewayUrl: string;
  subgraphUrl: string;
  databaseUrl: string;
  /** The platform admin key (`*`), ensured through BOOTSTRAP_API_KEY. */
  adminKey: string;
  procs: { name: string; child: ChildProcess; exit: Promise<number | null> }[];
  /** Starts another gateway process on the same database (every subgraph in-process unless `extra` names remote ones); its URL. */
  addGateway(extra?: Record<string, string>): Promise<string>;
  /** A JSON request to the gateway, as `key` (default: the admin key; null: no key); its body read as `T`. */
  call<T = unknown>(method: string, path: string, body?: unknown, key?: string | null): Promise<JsonAnswer<T>>;
  /** SIGKILL what still runs, wait for every exit, drop the database and the data directory. */
  stop(): Promise<void>;
}

const MAIN = path.join(__dirname, '..', '..', 'main.js');

export async function startSplitTopology(extraEnv: Record<string, string> = {}, subgraph = 'control-plane'): Promise<SplitTopology> {
  const db = await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-split-'));
  const adminKey = `cp_live_sk_${randomBytes(24).toString('base64url')}`;
  const env = { ...extraEnv, DATABASE_URL: db.url, DATA_DIR: dataDir, BOOTSTRAP_API_KEY: adminKey };
  const procs: SplitTopology['procs'] = [];
  const run = (name: string, args: string[], extra: Record<string, string> = {}) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: { ...process.env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env, ...extra },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // `exit` never rejects: this only reports a crash, and the test awaits `exit` itself.
    void exit.then((code) => {
      if (code !== 0 && code !== null) process.stderr.write(`[${name}] exited ${code}\n${stderr}\n`);
    });
    procs.push({ name, child, exit });
  };
  const [subgraphPort, gatewayPort] = [await freePort(), await freePort()];
  const subgraphUrl = `http://127.0.0.1:${subgraphPort}`;
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const stop = async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exit));
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    run('subgraph', ['subgraph', subgraph], { PORT: String(subgraphPort) });
    run('worker', ['worker']);
    await waitHealthy(subgraphUrl);
    run('gateway', ['gateway'], { PORT: String(gatewayPort), SUBGRAPH_URLS: `${subgraph}=${subgraphUrl}/graphql` });
    await waitHealthy(gatewayUrl);
  } catch (err) {
    // A topology that never came up has no `stop()` for the test to call: its processes end here.
    await stop();
    throw err;
  }
  return {
    gatewayUrl,
    subgraphUrl,
    databaseUrl: db.url,
    adminKey,
    procs,
    async addGateway(extra = {}) {
      const url = `http://127.0.0.1:${await freePort()}`;
      run(`gateway ${procs.length}`, ['gateway'], { PORT: url.split(':').pop()!, ...extra });
      await waitHealthy(url);
      return url;
    },
    async call<T>(method: string, p: string, body?: unknown, key: string | null = adminKey) {
      const res = await fetch(gatewayUrl + p, {
        method,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return answerOf<T>(res);
    },
    stop,
  };
}
