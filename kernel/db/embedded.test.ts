import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createLogger, type LogLevel } from '../logger';
import { startEmbeddedPostgres } from './embedded';

const logger = createLogger((process.env.LOG_LEVEL as LogLevel) ?? 'silent');
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-pg-'));
  fs.chmodSync(dir, 0o755); // when root, postgres runs as another user that must reach the directory
  return dir;
}
const pidFile = (dataDir: string) => path.join(dataDir, 'postgres', 'pgdata', 'postmaster.pid');

async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

async function timedStart(dataDir: string, label: string) {
  const started = Date.now();
  const server = await startEmbeddedPostgres({ dataDir, logger });
  console.log(`${label}: ${Date.now() - started} ms`);
  return server;
}

test('persists data across restarts and isolates transactions', async () => {
  const dataDir = tempDir();
  const first = await timedStart(dataDir, 'first start (initdb)');
  assert.match(first.url, /^postgres:\/\/postgres:[0-9a-f]+@127\.0\.0\.1:\d+\/platform$/);
  const a = await connect(first.url);
  const b = await connect(first.url);
  try {
    await a.query('CREATE TABLE items (id int PRIMARY KEY, name text)');
    await a.query(`INSERT INTO items VALUES (1, 'kept')`);

    await a.query('BEGIN');
    await a.query(`INSERT INTO items VALUES (2, 'pending')`);
    assert.equal((await a.query('SELECT count(*)::int AS n FROM items')).rows[0].n, 2);
    assert.equal((await b.query('SELECT count(*)::int AS n FROM items')).rows[0].n, 1, 'uncommitted row is invisible');
    await a.query('COMMIT');
    assert.equal((await b.query('SELECT count(*)::int AS n FROM items')).rows[0].n, 2);
    await b.query('DELETE FROM items WHERE id = 2');
  } finally {
    await a.end();
    await b.end();
  }
  await first.stop();
  assert.equal(fs.existsSync(pidFile(dataDir)), false, 'server shut down cleanly');

  const second = await timedStart(dataDir, 'second start (existing cluster)');
  const c = await connect(second.url);
  try {
    assert.deepEqual((await c.query('SELECT id, name FROM items')).rows, [{ id: 1, name: 'kept' }]);
  } finally {
    await c.end();
  }
  await second.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a second start on a running directory reuses the server and does not stop it', async () => {
  const dataDir = tempDir();
  const owner = await startEmbeddedPostgres({ dataDir, logger });
  const reuser = await timedStart(dataDir, 'start reusing a running server');
  assert.equal(reuser.url, owner.url);
  await reuser.stop();
  const client = await connect(owner.url);
  assert.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1, 'still running after the reuser stopped');
  await client.end();
  await owner.stop();
  await assert.rejects(connect(owner.url));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('starts over a stale postmaster.pid', async () => {
  const dataDir = tempDir();
  const first = await startEmbeddedPostgres({ dataDir, logger });
  const postmaster = Number(fs.readFileSync(pidFile(dataDir), 'utf8').split('\n')[0]);
  process.kill(postmaster, 'SIGKILL'); // a crash: postmaster.pid stays behind with a dead pid
  while (isAlive(postmaster)) await new Promise((r) => setTimeout(r, 20));
  await first.stop();
  assert.ok(fs.existsSync(pidFile(dataDir)));

  const second = await startEmbeddedPostgres({ dataDir, logger });
  await second.stop();

  // The stale pid now belongs to an unrelated live process: postgres alone would refuse to start.
  const sleeper = spawn('sleep', ['30']);
  fs.writeFileSync(pidFile(dataDir), `${sleeper.pid}\n${dataDir}\n0\n5432\n\n127.0.0.1\n0 0\nready\n`);
  try {
    const third = await startEmbeddedPostgres({ dataDir, logger });
    const client = await connect(third.url);
    await client.end();
    await third.stop();
  } finally {
    sleeper.kill();
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('starts from a directory other users cannot enter (root: the cluster is kept where its server user can reach it)', async () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'private-home-')); // 0700, like root's home
  const dataDir = path.join(home, 'checkout', 'data');
  const first = await startEmbeddedPostgres({ dataDir, logger });
  const a = await connect(first.url);
  await a.query(`CREATE TABLE kept AS SELECT 'still here'::text AS note`);
  await a.end();
  // A sibling process on the same DATA_DIR reuses the running server.
  const sibling = await startEmbeddedPostgres({ dataDir, logger });
  assert.equal(sibling.url, first.url);
  await sibling.stop();
  await first.stop();

  const link = fs.lstatSync(path.join(dataDir, 'postgres'));
  let cluster = path.join(dataDir, 'postgres');
  if (process.getuid?.() === 0) {
    assert.ok(link.isSymbolicLink(), 'DATA_DIR/postgres points to the cluster');
    cluster = fs.readlinkSync(path.join(dataDir, 'postgres'));
    assert.match(cluster, /^\/var\/lib\/automation-platform\/clusters\/[0-9a-f]{16}$/);
    assert.notEqual(fs.statSync(path.join(cluster, 'pgdata')).uid, 0, 'the server runs as another user than root');
  } else {
    assert.ok(link.isDirectory(), 'not root: the cluster stays inside DATA_DIR');
  }
  assert.equal(fs.statSync(home).mode & 0o777, 0o700, "no permission of the user's own directories changed");

  const again = await startEmbeddedPostgres({ dataDir, logger });
  const b = await connect(again.url);
  assert.deepEqual((await b.query('SELECT note FROM kept')).rows, [{ note: 'still here' }], 'restart finds the data');
  await b.end();
  await again.stop();
  fs.rmSync(home, { recursive: true, force: true });
  if (cluster.startsWith('/var/lib/automation-platform/')) fs.rmSync(cluster, { recursive: true, force: true });
});
