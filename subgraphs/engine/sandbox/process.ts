import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ChildReply, ChildRequest } from './child';
import { SandboxError, evaluationTimeout, type CodeRunner, type SandboxRun } from './isolate';

/**
 * Untrusted code in disposable processes (n8n's task runners are the model). isolated-vm's
 * memory limit is not a hard wall: a large fast-elements array or a huge string can abort the
 * whole V8 process with a heap OOM. So every evaluation runs in an isolate inside a small pool of
 * child processes, each with its own heap limit: a crash costs that evaluation only (the node
 * fails with reason `crashed`), and the process is replaced. Processes are warm (started once,
 * reused across items and executions; each evaluation gets a fresh context, so one execution
 * never sees another's data) and recycled after `maxRuns` evaluations.
 */
export interface ProcessSandboxOptions {
  memoryMb: number;
  timeoutMs: number;
  /** Sandbox processes (SANDBOX_PROCESSES). */
  processes: number;
  /** Old-space limit of each process; the isolates' limits sit well inside it. */
  heapMb?: number;
  maxRuns?: number;
}

interface Worker {
  child: ChildProcess;
  busy: boolean;
  runs: number;
  /** Ended, or killed and about to: never handed out again. */
  exited: boolean;
  /** When it last finished a run (performance.now()). */
  idleSince: number;
  /** The bodies (by id) this process has been sent: it keeps them, later requests name them only. */
  bodies: Set<number>;
  /** The evaluation in flight, told when the process ends under it. */
  onExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
}

const CHILD = path.join(__dirname, 'child.js');
/** About how long a process takes to make the context for its next run (with n8n's prelude). */
const CONTEXT_MAKING_MS = 2;
/**
 * Bodies are a few fixed runners of several KB each (the Code node's is ~17 KB): each goes to a
 * process once and is named by a number afterwards, rather than copied through the IPC channel
 * with every evaluation. Past this many distinct bodies, a new one is sent whole each time.
 */
const BODY_IDS = 64;

export class ProcessSandbox implements CodeRunner {
  private readonly workers: Worker[] = [];
  private readonly waiters: ((w: Worker) => void)[] = [];
  private nextId = 0;
  private readonly bodyIds = new Map<string, number>();
  private disposed = false;

  constructor(private readonly opts: ProcessSandboxOptions) {}

  get memoryMb(): number {
    return this.opts.memoryMb;
  }

  get timeoutMs(): number {
    return this.opts.timeoutMs;
  }

  async run(req: SandboxRun): Promise<string> {
    const timeoutMs = evaluationTimeout(req, this.opts.timeoutMs);
    const worker = await this.acquire();
    const id = ++this.nextId;
    try {
      return await new Promise<string>((resolve, reject) => {
        const done = (fn: () => void) => {
          clearTimeout(guard);
          req.signal?.removeEventListener('abort', onAbort);
          worker.child.off('message', onMessage);
          worker.onExit = undefined;
          fn();
        };
        // The isolate stops code at its time limit; this bounds a process that stopped answering.
        const guard = setTimeout(() => {
          this.kill(worker);
          done(() => reject(new SandboxError('timeout', `Script execution timed out after ${timeoutMs} ms`)));
        }, timeoutMs + 2_000);
        const onAbort = () => {
          this.kill(worker);
          done(() => reject(new SandboxError('aborted', 'The evaluation was aborted')));
        };
        const onMessage = (reply: ChildReply) => {
          if (reply.id !== id) return;
          done(() => (reply.ok ? resolve(reply.result) : reject(new SandboxError(reply.reason, reply.message))));
        };
        worker.onExit = (code, signal) =>
          done(() =>
            reject(
              new SandboxError(
                'crashed',
                `The sandbox process running the code ended (${signal ?? `exit code ${code}`}); most likely the code exhausted its memory. It was replaced.`,
              ),
            ),
          );
        req.signal?.addEventListener('abort', onAbort, { once: true });
        worker.child.on('message', onMessage);
        worker.child.send({
          id,
          ...this.bodyFor(worker, req.body),
          input: req.input,
          prelude: req.prelude,
          warmup: req.warmup,
          memoryMb: this.opts.memoryMb,
          timeoutMs,
        } satisfies ChildRequest);
      });
    } finally {
      this.release(worker);
    }
  }

  /** The body as `worker` needs it: whole with its id the first time, its id alone once the process has it. */
  private bodyFor(worker: Worker, body: string): Pick<ChildRequest, 'body' | 'bodyId'> {
    let bodyId = this.bodyIds.get(body);
    if (bodyId === undefined && this.bodyIds.size < BODY_IDS) this.bodyIds.set(body, (bodyId = this.bodyIds.size + 1));
    if (bodyId === undefined) return { body };
    if (worker.bodies.has(bodyId)) return { bodyId };
    worker.bodies.add(bodyId);
    return { body, bodyId };
  }

  /** Ends every sandbox process (shutdown, tests). */
  dispose(): void {
    this.disposed = true;
    for (const w of this.workers.splice(0)) this.kill(w);
  }

  /**
   * The process idle the longest, unless it has only just finished a run and the pool may grow: a
   * process makes its next run's context after each run (isolate.ts), so runs close together
   * alternate processes rather than wait for it.
   */
  private acquire(): Promise<Worker> {
    const idle = this.workers.filter((w) => !w.busy && !w.exited).sort((a, b) => a.idleSince - b.idleSince)[0];
    const rested = idle && performance.now() - idle.idleSince >= CONTEXT_MAKING_MS;
    if (idle && (rested || this.workers.length >= this.opts.processes)) {
      idle.busy = true;
      return Promise.resolve(idle);
    }
    if (this.workers.length < this.opts.processes) {
      const w = this.spawn();
      w.busy = true;
      return Promise.resolve(w);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private release(worker: Worker): void {
    worker.runs++;
    if (!worker.exited && worker.runs >= (this.opts.maxRuns ?? 1_000)) this.kill(worker);
    let next = worker;
    if (worker.exited) {
      this.workers.splice(this.workers.indexOf(worker) >>> 0, 1);
      if (this.disposed) return;
      if (!this.waiters.length) return;
      next = this.spawn();
    }
    const waiter = this.waiters.shift();
    if (waiter) {
      next.busy = true;
      waiter(next);
    } else {
      next.busy = false;
      next.idleSince = performance.now();
    }
  }

  private spawn(): Worker {
    const child = fork(CHILD, [], {
      execArgv: [`--max-old-space-size=${this.opts.heapMb ?? Math.max(128, this.opts.memoryMb * 3)}`],
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      serialization: 'json',
    });
    const worker: Worker = { child, busy: false, runs: 0, exited: false, idleSince: 0, bodies: new Set() };
    child.once('exit', (code, signal) => {
      worker.exited = true;
      worker.onExit?.(code, signal);
    });
    child.on('error', () => undefined); // a failed send to a dying process: its exit settles the run
    // Sandbox processes never keep the platform alive; they end when it does (IPC disconnect).
    child.unref();
    (child as unknown as { channel?: { unref(): void } }).channel?.unref();
    this.workers.push(worker);
    return worker;
  }

  /** Kills a process and takes it out of service at once (its exit event comes later). */
  private kill(worker: Worker): void {
    if (worker.exited) return;
    worker.exited = true;
    worker.child.kill('SIGKILL');
  }
}
