/**
 * Node's timers for the Code node's sandbox, which has no host timers, in virtual time: a
 * callback runs once the awaited promise has had DRAIN_TURNS microtask turns without settling, and
 * the clock jumps to its due time (no real waiting). The turns stand in for "the microtask queue is
 * empty", which JavaScript cannot observe: a longer promise chain may see a timer fire before it
 * ends. Timers pending when the code's promise settles never fire (n8n runs them after the node has
 * answered); Date.now() does not move with the clock. Like runner.ts this runs from its source
 * text: it must use nothing outside itself.
 */
export function virtualTimers(host: (message: string, Kind?: ErrorConstructor) => Error) {
  // 2000 turns take about 0.1 ms: cheap per timer, and longer than the promise chains code waits on.
  const DRAIN_TURNS = 2000;
  const MAX_DELAY = 2 ** 31 - 1;
  interface Timer {
    id: number;
    due: number;
    seq: number;
    fn: (...a: unknown[]) => unknown;
    args: unknown[];
    every: number;
    handle: object;
  }
  let timers: Timer[] = [];
  let clock = 0;
  let seq = 0;
  let wake: (() => void) | null = null;
  const ids = new WeakMap<object, number>();
  /** Node's Timeout: what the code may call on it. */
  class Timeout {
    ref() {
      return this;
    }
    unref() {
      return this;
    }
    hasRef() {
      return true;
    }
    refresh() {
      return this;
    }
    [Symbol.toPrimitive]() {
      return ids.get(this);
    }
  }
  const received = (v: unknown) => (v === undefined || v === null ? String(v) : `type ${typeof v} (${String(v).slice(0, 40)})`);
  const add = (fn: unknown, ms: unknown, args: unknown[], repeat: boolean, immediate = false) => {
    if (typeof fn !== 'function') throw host(`The "callback" argument must be of type function. Received ${received(fn)}`, TypeError);
    // Node's rule: a delay that is not a number from 1 to 2^31-1 is 1.
    let delay = immediate ? 0 : Number(ms);
    if (!immediate && !(delay >= 1 && delay <= MAX_DELAY)) delay = 1;
    const handle = new Timeout();
    seq++;
    const timer: Timer = { id: seq, due: clock + delay, seq, fn: fn as Timer['fn'], args, every: repeat ? delay : 0, handle };
    ids.set(handle, timer.id);
    timers.push(timer);
    if (wake) wake();
    return handle;
  };
  const clear = (h: unknown) => {
    const id = typeof h === 'object' && h !== null ? ids.get(h) : Number(h);
    timers = timers.filter((t) => t.id !== id);
  };
  const earliest = (): Timer | undefined =>
    timers.reduce<Timer | undefined>((a, t) => (!a || t.due < a.due || (t.due === a.due && t.seq < a.seq) ? t : a), undefined);
  const fire = (t: Timer) => {
    timers = timers.filter((x) => x !== t);
    clock = Math.max(clock, t.due);
    // An interval is set again before its callback runs, so that the callback can clear it.
    if (t.every) timers.push({ ...t, due: clock + t.every, seq: ++seq });
    t.fn.apply(t.handle, t.args);
  };
  /** The code's promise, settled: timers fire while it waits on them. */
  const settle = async (promise: Promise<unknown>) => {
    let done = false;
    const mark = () => {
      done = true;
    };
    promise.then(mark, mark);
    while (!done) {
      for (let i = 0; i < DRAIN_TURNS && !done; i++) await null;
      if (done) break;
      const next = earliest();
      if (next) fire(next);
      // Nothing to fire: wait for the promise or a new timer (a promise that never settles meets the sandbox's time limit).
      else
        await new Promise<void>((resolve) => {
          wake = () => {
            wake = null;
            resolve();
          };
          promise.then(
            () => resolve(),
            () => resolve(),
          );
        });
    }
    return promise;
  };
  return {
    globals: {
      setTimeout: (fn: unknown, ms?: unknown, ...args: unknown[]) => add(fn, ms, args, false),
      setInterval: (fn: unknown, ms?: unknown, ...args: unknown[]) => add(fn, ms, args, true),
      setImmediate: (fn: unknown, ...args: unknown[]) => add(fn, 0, args, false, true),
      clearTimeout: clear,
      clearInterval: clear,
      clearImmediate: clear,
    },
    settle,
  };
}
