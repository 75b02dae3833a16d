/** Resolves after `ms`: for tests that must let time pass (a timer fires, nothing else arrives). */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** How long `until` waits (default 10 s) and how often it asks (default every 20 ms). */
export interface UntilOptions {
  timeoutMs?: number;
  everyMs?: number;
}

type Falsy = undefined | null | false;

/**
 * Polls `probe` until it gives a truthy value (returned), or fails naming `what` after the
 * deadline. `timeout` is the deadline in ms or the options.
 */
export function until<T>(what: string, probe: () => Promise<T | Falsy> | T | Falsy, timeout?: number | UntilOptions, everyMs?: number): Promise<T> {
  const options = typeof timeout === 'number' ? { timeoutMs: timeout, everyMs } : timeout;
  return untilValue(what, probe, (v): v is T => Boolean(v), options) as Promise<T>;
}

/**
 * Reads a value until `done` accepts it (returned), or fails naming `what` after the deadline.
 * The failure message carries the last value read, so a test that times out says what it saw
 * rather than only what it wanted.
 */
export async function untilValue<T>(what: string, read: () => Promise<T> | T, done: (value: T) => boolean, options: UntilOptions = {}): Promise<T> {
  const last = await lastRead(read, done, options);
  if (!last.done) throw new Error(`timed out after ${options.timeoutMs ?? 10_000} ms waiting for ${what}; last: ${show(last.value)}`);
  return last.value;
}

/**
 * Reads a value until `done` accepts it or the deadline passes, and gives the last value read
 * either way: for tests that assert on that value themselves (their message says more than a
 * timeout would).
 */
export async function readUntil<T>(read: () => Promise<T> | T, done: (value: T) => boolean, options: UntilOptions = {}): Promise<T> {
  return (await lastRead(read, done, options)).value;
}

async function lastRead<T>(read: () => Promise<T> | T, done: (value: T) => boolean, options: UntilOptions): Promise<{ value: T; done: boolean }> {
  const end = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const value = await read();
    if (done(value)) return { value, done: true };
    if (Date.now() > end) return { value, done: false };
    await sleep(options.everyMs ?? 20);
  }
}

function show(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v); // a cycle or a BigInt: the plain form is still a clue
  }
  return s.length > 500 ? `${s.slice(0, 500)}…` : s;
}
