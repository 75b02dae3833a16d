/**
 * The platform's time for deciding when something is due (job run_at and backoff, cron times, waits,
 * watchdogs). Due-time code asks this clock, not `Date.now()`, so tests can skip time instead of sleeping.
 *
 * It is the wall clock plus a skip that only grows (`aheadMs`), so SQL comparing with `sqlNow` agrees
 * with the code. Liveness (heartbeats, stale workers, lock ages, created/updated stamps) stays on the wall clock.
 */
export interface Clock {
  now(): Date;
  /** How far this clock runs ahead of the wall clock (and of PostgreSQL's now()). */
  aheadMs(): number;
  /** Resolves once `ms` have passed on this clock; rejects with the signal's reason if it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The wall clock: what every process runs on unless a test hands the kernel another (createKernel's `clock`). */
export const realClock: Clock = {
  now: () => new Date(),
  aheadMs: () => 0,
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/**
 * The clock's "now" in SQL, its parameter appended to `params`: `now()` moved as far ahead as the
 * clock runs (on the real clock, plain now()).
 */
export function sqlNow(clock: Clock, params: unknown[]): string {
  params.push(clock.aheadMs());
  return `(now() + $${params.length}::float8 * interval '1 millisecond')`;
}
