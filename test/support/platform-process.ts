import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from './database';
import { freePort, waitHealthy } from './net';

/*
 * The platform started as its own process (dist/main.js), as tracing needs: the OpenTelemetry SDK
 * is set up once per process at start, so a platform that exports traces cannot share the test's.
 */

const MAIN = path.join(__dirname, '..', '..', 'main.js');

/** The platform as one process (`all`), its stderr kept: the JSON log lines. */
export async function startPlatformProcess(env: Record<string, string>) {
  const db: TestDatabase = await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'platform-tracing-'));
  const adminKey = `cp_live_sk_${randomBytes(24).toString('base64url')}`;
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      BOOTSTRAP_API_KEY: adminKey,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exit;
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitHealthy(url, 60_000);
  } catch (err) {
    await stop();
    throw new Error(`${String(err)}\n${stderr}`);
  }
  const logLines = () =>
    stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { url, adminKey, logLines, stop, exit };
}
