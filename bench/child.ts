import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

/**
 * The benchmarks' server children: each bench that loads the platform over HTTP runs it in a
 * process of its own, so the load generator does not share its CPU. The driver spawns the child
 * and reads its first JSON line (what it serves, where); the child stops on SIGTERM/SIGINT, when
 * the driver is gone (IPC channel closed), or after a time limit, whichever comes first.
 */

export interface ServerChild<T> {
  child: ChildProcess;
  /** The child's first JSON line that `ready` accepts. */
  info: T;
  /** SIGTERM (the child drains), SIGKILL after 30 s; nothing when it has exited already. */
  stop(): Promise<void>;
}

/**
 * The flags `npm start` gives node before `dist/main.js` (package.json's start script), so that the
 * platform in a bench child runs as it does in production.
 */
export function platformNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(require.resolve('../../package.json'), 'utf8')) as { scripts: { start: string } };
  const flags = /\bnode\s+(.*?)\s*dist\/main\.js/.exec(pkg.scripts.start)?.[1];
  if (flags === undefined) throw new Error(`package.json's start script does not run dist/main.js with node: ${pkg.scripts.start}`);
  return flags.split(/\s+/).filter(Boolean);
}

/**
 * Spawns `node [the platform's flags] [profiling] file args` (BENCH_CPU_PROF=dir profiles it) with
 * `env` and waits up to 120 s for its first JSON line that `ready` accepts; other lines go to
 * stderr. The child is killed when this process exits.
 */
export function spawnServer<T>(
  name: string,
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: (info: T) => boolean = (info) => typeof (info as { url?: unknown }).url === 'string',
): Promise<ServerChild<T>> {
  const profiling = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
  const nodeArgs = [...platformNodeFlags(), ...profiling];
  const child = spawn(process.execPath, [...nodeArgs, file, ...args], { env, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  process.on('exit', () => {
    if (!exited()) child.kill('SIGKILL');
  });
  const stop = async () => {
    if (exited()) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await gone;
    clearTimeout(killer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`the ${name} did not start within 120 s`));
      void stop();
    }, 120_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the ${name} exited before it was ready (code ${code}, signal ${signal})`));
    });
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const info = JSON.parse(line) as T;
        if (!ready(info)) return;
        clearTimeout(timer);
        resolve({ child, info, stop });
      } catch {
        process.stderr.write(`[${name}] ${line}\n`);
      }
    });
  });
}

/**
 * The child's side: `stop(code)` runs `cleanup` once (its failure is reported, not thrown) and
 * exits with `code`; it is called on SIGTERM/SIGINT, on the driver's disconnect and (code 2)
 * after `maxSeconds`.
 */
export function stopOnSignals(name: string, cleanup: () => Promise<void>, maxSeconds = Number(process.env.BENCH_SERVER_MAX_SECONDS ?? 600)) {
  let stopping: Promise<void> | undefined;
  const stop = (code: number) => {
    stopping ??= (async () => {
      await cleanup().catch((err) => process.stderr.write(`${name}: unclean stop: ${String(err)}\n`));
      process.exit(code);
    })();
    return stopping;
  };
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));
  if (process.send) process.on('disconnect', () => void stop(0));
  setTimeout(() => {
    process.stderr.write(`${name}: still running after ${maxSeconds} s, stopping\n`);
    void stop(2);
  }, maxSeconds * 1000).unref();
  return stop;
}
