import ivm from 'isolated-vm';
import { preludeSource, preludeWarmup, type PreludeLevel } from './prelude/prelude';

/**
 * Untrusted JavaScript runs here, never in the main realm: a fresh V8 context per evaluation, in an
 * isolated-vm isolate of a small pool (own heap with a hard limit, own thread). Data crosses as JSON
 * text only, so no host object (`process`, `require`, timers) is reachable. A script past its time is
 * stopped; one past its memory takes its isolate down and the pool replaces it. After each run the
 * isolate prepares the next context off the request path (making one is costly); each evaluation
 * still gets an unused context. Heap snapshots are not used: under Node 20 they corrupt short strings.
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

/**
 * What the body needs in its context: the whole prelude with luxon built ahead (`n8n`, the default:
 * for runs known to use dates), n8n's extensions (`extensions`), luxon's globals alone (`dates`), or
 * nothing (`bare`). Every level but `bare` has luxon's globals, built on first use where not ahead
 * (prelude/prelude.ts): the levels only decide what is made before the run. A context with more than
 * the run needs may be given.
 */
export type Prelude = 'bare' | PreludeLevel;

export interface SandboxRun {
  /** A function body; `$0` is the JSON input string. It must return (or resolve to) a string. */
  body: string;
  input: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Default `n8n`. At any level but `bare` the body may use `DateTime`, `Duration`, `Interval` and PreludeApi (sandbox/prelude/prelude.ts). */
  prelude?: Prelude;
  /**
   * Code to run, after the prelude, in the context made for the next run (the one this run's
   * successor most likely takes): to compile what such runs use (a time zone's formatter). It
   * must not change anything a run relies on.
   */
  warmup?: string;
}

/** What runs untrusted code: the in-process isolate pool below, or the process pool of process.ts. */
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
  /** The context the next run takes: made after the last run, while the isolate is idle. */
  spare?: { prelude: Prelude; warmup?: string; body: string; context: Promise<Prepared | undefined>; ready: boolean };
  /** The bodies this isolate has compiled (its own: a script belongs to one isolate). */
  bodies: Map<string, Promise<ivm.Script>>;
  /** The prelude of each level, compiled in this isolate and run in each new context. */
  preludes: Map<PreludeLevel, Promise<ivm.Script>>;
}

/** A context no run has used, with the run's body already made a function in it (when known). */
interface Prepared {
  context: ivm.Context;
  body?: string;
  fn?: ivm.Reference<(input: string) => unknown>;
}

/**
 * Bodies are a few fixed runners (the Code node's, the expressions', the sort's): each is compiled
 * once per isolate and its compiled code run in every new context, rather than compiled again in
 * each (most of a small evaluation's cost). The compiled code is shared, never any state: each
 * context gets its own function object and globals.
 */
const BODIES_PER_ISOLATE = 16;

function compiledBody(slot: Slot, body: string): Promise<ivm.Script> {
  let script = slot.bodies.get(body);
  if (!script) {
    if (slot.bodies.size >= BODIES_PER_ISOLATE) slot.bodies.delete(slot.bodies.keys().next().value!);
    script = slot.isolate.compileScript(`(function ($0) {${NO_WASM}${body}\n})`, { filename: 'sandbox-body.js' });
    // A body that does not compile is not kept: the run reports the error.
    script.catch(() => slot.bodies.delete(body));
    slot.bodies.set(body, script);
  }
  return script;
}

/** The body as a function of `context`. */
async function bindBody(slot: Slot, context: ivm.Context, body: string): Promise<ivm.Reference<(input: string) => unknown>> {
  const script = await compiledBody(slot, body);
  return (await script.run(context, { reference: true })) as ivm.Reference<(input: string) => unknown>;
}

const RANK: Record<Prelude, number> = { bare: 0, dates: 1, extensions: 2, n8n: 3 };
/** A context made with `made` serves a run that needs `needed`. */
const covers = (made: Prelude, needed: Prelude) => RANK[made] >= RANK[needed];

/**
 * WebAssembly memory lives outside the isolate's heap limit: code gets no WebAssembly. And
 * `Atomics.waitAsync` aborts the whole host process under isolated-vm 5 on Node 20: it goes too.
 */
const NO_WASM = 'delete globalThis.WebAssembly; delete globalThis.Atomics.waitAsync;';

/** The prelude's V8 code cache, once per process and level: each isolate compiles it from there rather than parsing it. */
const cached = new Map<PreludeLevel, ivm.ExternalCopy<ArrayBuffer> | undefined>();

/**
 * The prelude of `level` compiled in the slot's isolate, once: each new context runs the compiled
 * code (its own function objects and globals, no state shared) rather than evaluating the source,
 * and luxon's code, a function of it run on first use, is compiled once per isolate too.
 */
function compiledPrelude(slot: Slot, level: PreludeLevel): Promise<ivm.Script> {
  let script = slot.preludes.get(level);
  if (!script) {
    const source = preludeSource(level);
    const cachedData = cached.get(level);
    script = slot.isolate.compileScript(source, cachedData ? { cachedData, filename: 'prelude.js' } : { produceCachedData: true, filename: 'prelude.js' });
    // isolated-vm sets cachedData on the script (its typings omit it).
    void script.then(
      (s) => cached.has(level) || cached.set(level, (s as ivm.Script & ivm.CachedDataResult).cachedData),
      () => undefined,
    );
    slot.preludes.set(level, script);
  }
  return script;
}

/** A new context, with the prelude run and warmed up unless bare, and `body` bound in it when given. */
async function newContext(slot: Slot, prelude: Prelude, warmup = '', body?: string): Promise<Prepared> {
  const isolate = slot.isolate;
  const context = await isolate.createContext();
  try {
    if (prelude !== 'bare') {
      await (await compiledPrelude(slot, prelude)).run(context);
      const code = preludeWarmup(prelude) + warmup;
      if (code) await context.eval(code);
    }
    return body === undefined ? { context } : { context, body, fn: await bindBody(slot, context, body) };
  } catch (err) {
    if (!isolate.isDisposed) context.release();
    throw err;
  }
}

export class Sandbox implements CodeRunner {
  private readonly slots: Slot[] = [];
  private readonly waiters: ((slot: Slot) => void)[] = [];

  constructor(private readonly opts: { memoryMb: number; timeoutMs: number; poolSize?: number }) {}

  get memoryMb(): number {
    return this.opts.memoryMb;
  }

  get timeoutMs(): number {
    return this.opts.timeoutMs;
  }

  async run(req: SandboxRun): Promise<string> {
    const timeoutMs = evaluationTimeout(req, this.opts.timeoutMs);
    const prelude = req.prelude ?? 'n8n';
    const slot = await this.acquire(prelude);
    let prepared: Prepared | undefined;
    let timer: NodeJS.Timeout | undefined;
    let aborted = false;
    let timedOut = false;
    const onAbort = () => {
      aborted = true;
      this.kill(slot);
    };
    try {
      req.signal?.addEventListener('abort', onAbort, { once: true });
      // `timeout` bounds running code; a promise that never settles (or a context that never comes) is bounded here.
      const guard = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          this.kill(slot);
          reject(new SandboxError('timeout', `Script execution timed out after ${timeoutMs} ms`));
        }, timeoutMs + 50);
      });
      guard.catch(() => undefined);
      prepared = await Promise.race([this.context(slot, prelude, req.body), guard]);
      if (prepared.body !== req.body || !prepared.fn) {
        prepared.fn = await Promise.race([bindBody(slot, prepared.context, req.body), guard]);
        prepared.body = req.body;
      }
      const evaluation = prepared.fn.apply(undefined, [req.input], {
        arguments: { copy: true },
        result: { promise: true, copy: true },
        timeout: timeoutMs,
      });
      const result = await Promise.race([evaluation, guard]);
      if (typeof result !== 'string') throw new SandboxError('script', 'The script did not produce a result');
      return result;
    } catch (err) {
      throw this.explain(err, slot, timeoutMs, aborted, timedOut);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      if (prepared && !slot.isolate.isDisposed) {
        prepared.fn?.release();
        prepared.context.release();
      }
      this.restock(slot, prelude, req.body, req.warmup);
      this.release(slot);
    }
  }

  /** A context no run has used: the slot's spare when it has what the run needs (the prelude covers both), else a new one. */
  private async context(slot: Slot, prelude: Prelude, body: string): Promise<Prepared> {
    const spare = slot.spare;
    if (spare && covers(spare.prelude, prelude)) {
      slot.spare = undefined;
      const ready = await spare.context;
      if (ready) return ready;
    }
    return newContext(slot, prelude, undefined, body);
  }

  /** Makes the slot's next context, like the one this run wanted, in the background (a failure only means there is none). */
  private restock(slot: Slot, prelude: Prelude, body: string, warmup?: string): void {
    const isolate = slot.isolate;
    const same = slot.spare?.prelude === prelude && slot.spare.warmup === warmup && slot.spare.body === body;
    if (isolate.isDisposed || same) return;
    const old = slot.spare;
    const spare: NonNullable<Slot['spare']> = {
      prelude,
      warmup,
      body,
      ready: false,
      context: newContext(slot, prelude, warmup, body).catch(() => undefined),
    };
    void spare.context.then(() => (spare.ready = true));
    slot.spare = spare;
    void old?.context.then((c) => c && !isolate.isDisposed && c.context.release());
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

  /**
   * An idle slot whose next context is ready and fits the run; else, while the pool may grow, a
   * new isolate rather than waiting for a context still being made (runs close together then
   * alternate isolates, each making its next context while another runs); else any idle slot.
   */
  private acquire(prelude: Prelude): Promise<Slot> {
    const idle = this.slots.filter((s) => !s.busy);
    const ready = idle.find((s) => s.spare?.ready && covers(s.spare.prelude, prelude));
    const canGrow = this.slots.length < (this.opts.poolSize ?? 4);
    const slot = ready ?? (canGrow ? undefined : idle[0]);
    if (slot) {
      if (slot.isolate.isDisposed) this.renew(slot);
      slot.busy = true;
      return Promise.resolve(slot);
    }
    if (canGrow) {
      const slot: Slot = { isolate: this.newIsolate(), busy: true, bodies: new Map(), preludes: new Map() };
      this.slots.push(slot);
      return Promise.resolve(slot);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private release(slot: Slot): void {
    if (slot.isolate.isDisposed) this.renew(slot);
    const next = this.waiters.shift();
    if (next) next(slot);
    else slot.busy = false;
  }

  /** A new isolate for a slot whose isolate went down: nothing of the old one (context, compiled bodies and preludes) is kept. */
  private renew(slot: Slot): void {
    [slot.isolate, slot.spare, slot.bodies, slot.preludes] = [this.newIsolate(), undefined, new Map(), new Map()];
  }

  private newIsolate(): ivm.Isolate {
    return new ivm.Isolate({ memoryLimit: this.opts.memoryMb });
  }
}
