import { spawn } from 'node:child_process';
import { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { platformNodeFlags } from './child';

/**
 * Start-up, as a user meets it: `node dist/main.js` (what `npm start` runs once the build is
 * current) in a fresh data directory with the embedded PostgreSQL server — the first start creates
 * the cluster, migrates and seeds — then again in the same directory. Each is timed from the spawn
 * to the first `/health` 200. Baseline: a bare node:http server spawned the same way, the floor any
 * Node process pays.
 */

export interface StartFigures {
  firstMs: number;
  secondMs: number;
  bareMs: number;
}

const MAIN = path.resolve(__dirname, '..', 'main.js');
const BARE = `require('node:http').createServer((q, s) => s.end('{"status":"ok"}')).listen(Number(process.env.PORT), '127.0.0.1')`;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Spawns `args` with `env`, waits for /health 200 (at most 180 s), stops it with SIGTERM; the milliseconds to the 200. */
async function timeToHealth(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited (${child.exitCode}) before /health answered`);
      if (performance.now() - started > 180_000) throw new Error(`${args.join(' ')}: no /health 200 in 180 s`);
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return performance.now() - started;
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(killer);
  }
}

export async function benchStart(): Promise<StartFigures> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-start-'));
  // The embedded server, whatever the bench's own database is; quiet logs.
  const env = { DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' };
  try {
    const bareMs = await timeToHealth(['-e', BARE], {});
    const firstMs = await timeToHealth([...platformNodeFlags(), MAIN], env);
    const secondMs = await timeToHealth([...platformNodeFlags(), MAIN], env);
    return { firstMs: Math.round(firstMs), secondMs: Math.round(secondMs), bareMs: Math.round(bareMs) };
  } finally {
    let cluster: string | undefined;
    try {
      cluster = readlinkSync(path.join(dataDir, 'postgres'));
    } catch {
      // the cluster is inside the data directory
    }
    if (cluster) rmSync(cluster, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}
