import ivm from 'isolated-vm';

/**
 * Untrusted JavaScript (the code node, expressions that are not plain paths) runs here, never in
 * the main realm: each evaluation gets a fresh V8 context inside an isolate of a small pool
 * (isolated-vm 5: a separate heap with a hard memory limit, run on its own thread, so an
 * infinite loop does not block the event loop). Data goes in and out as JSON text only: the
 * context holds no reference to any host object, so there is no `process`, `require`, file
 * system, network or timer to reach. A script past its time limit is stopped; one past the
 * memory limit takes its isolate down with it, and the pool replaces the isolate.
 */

export const EXPRESSION_LIMITS = { memoryMb: 32, timeoutMs: 1_000 };
export const CODE_LIMITS = { memoryMb: 64, timeoutMs: 10_000 };

export class SandboxError extends Error {
  constructor(
    readonly reason: 'timeout' | 'memory' | 'aborted' | 'script' | 'crashed',
    message: string,
  ) {
    super(message);
    this.name = 'SandboxError';
  }
}

export interface SandboxRun {
  /** A function body; `$0` is the JSON input string. It must return (or resolve to) a string. */
  body: string;
  input: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** What runs untrusted code: the in-process isolate pool below, or the process pool of sandbox.process.ts. */
/** The time limit of one evaluation (its own, else the runner's), refusing one already aborted. */
export function evaluationTimeout(req: SandboxRun, defaultMs: number): number {
  if (req.signal?.aborted) throw new SandboxError('aborted', 'The evaluation was aborted');
  return Math.max(1, Math.min(req.timeoutMs ?? defaultMs, 2 ** 31 - 1));
}

export interface CodeRunner {
  run(req: SandboxRun): Promise<string>;
  dispose(): void;
  readonly memoryMb: number;
  readonly timeoutMs: number;
}

interface Slot {
  isolate: ivm.Isolate;
  busy: boolean;
}

export class Sandbox implements CodeRunner {
  private readonly slots: Slot[] = [];
  private readonly waiters: ((slot: Slot) => void)[] = [];

  constructor(
    private readonly opts: { memoryMb: number; timeoutMs: number; poolSize?: number },
  ) {}

  get memoryMb(): number {
    return this.opts.memoryMb;
  }

  get timeoutMs(): number {
    return this.opts.timeoutMs;
  }

  async run(req: SandboxRun): Promise<string> {
    const timeoutMs = evaluationTimeout(req, this.opts.timeoutMs);
    const slot = await this.acquire();
    let context: ivm.Context | undefined;
    let timer: NodeJS.Timeout | undefined;
    let aborted = false;
    let timedOut = false;
    const onAbort = () => {
      aborted = true;
      this.kill(slot);
    };
    try {
      context = await slot.isolate.createContext();
      // WebAssembly memory lives outside the isolate's heap limit: user code gets no WebAssembly.
      await context.global.delete('WebAssembly');
      req.signal?.addEventListener('abort', onAbort, { once: true });
      const evaluation = context.evalClosure(req.body, [req.input], {
        arguments: { copy: true },
        result: { promise: true, copy: true },
        timeout: timeoutMs,
      });
      // `timeout` bounds running code; a promise that never settles is bounded here.
      const guard = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          this.kill(slot);
          reject(new SandboxError('timeout', `Script execution timed out after ${timeoutMs} ms`));
        }, timeoutMs + 50);
      });
      const result = await Promise.race([evaluation, guard]);
      if (typeof result !== 'string') throw new SandboxError('script', 'The script did not produce a result');
      return result;
    } catch (err) {
      throw this.explain(err, slot, timeoutMs, aborted, timedOut);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      if (context && !slot.isolate.isDisposed) context.release();
      this.release(slot);
    }
  }

  /** Disposes every isolate (tests, shutdown). */
  dispose(): void {
    for (const slot of this.slots) this.kill(slot);
  }

  private explain(err: unknown, slot: Slot, timeoutMs: number, aborted: boolean, timedOut: boolean): Error {
    if (err instanceof SandboxError) return err;
    const message = err instanceof Error ? err.message : String(err);
    if (aborted) return new SandboxError('aborted', 'The evaluation was aborted');
    if (timedOut || /timed out/i.test(message)) {
      return new SandboxError('timeout', `Script execution timed out after ${timeoutMs} ms`);
    }
    if (/memory limit/i.test(message) || (slot.isolate.isDisposed && /disposed/i.test(message))) {
      return new SandboxError('memory', `Script exceeded the memory limit of ${this.opts.memoryMb} MB`);
    }
    if (/Invalid string length|Array buffer allocation failed|Invalid array length/i.test(message)) {
      return new SandboxError('memory', `Script exceeded the memory limit of ${this.opts.memoryMb} MB (${message})`);
    }
    return new SandboxError('script', message);
  }

  private kill(slot: Slot): void {
    if (!slot.isolate.isDisposed) {
      try {
        slot.isolate.dispose();
      } catch {
        // already going away
      }
    }
  }

  private acquire(): Promise<Slot> {
    for (const slot of this.slots) {
      if (!slot.busy) {
        if (slot.isolate.isDisposed) slot.isolate = this.newIsolate();
        slot.busy = true;
        return Promise.resolve(slot);
      }
    }
    if (this.slots.length < (this.opts.poolSize ?? 4)) {
      const slot = { isolate: this.newIsolate(), busy: true };
      this.slots.push(slot);
      return Promise.resolve(slot);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private release(slot: Slot): void {
    if (slot.isolate.isDisposed) slot.isolate = this.newIsolate();
    const next = this.waiters.shift();
    if (next) next(slot);
    else slot.busy = false;
  }

  private newIsolate(): ivm.Isolate {
    return new ivm.Isolate({ memoryLimit: this.opts.memoryMb });
  }
}
