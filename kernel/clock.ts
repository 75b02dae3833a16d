/**
 * The platform's time for deciding when something is due: the queue's run_at, retry backoff and
 * drain grace, schedules' cron times, Wait nodes' ends, a sync task request's wait, the engine's
 * maintenance runs and the orchestration watchdog. Code that
 * decides a due time asks the kernel's clock instead of `Date.now()`, so a test can move time
 * forward rather than sleep through it (test/support/clock.ts).
 *
 * A clock never runs behind the wall clock and never stops: it is the wall clock plus a skip
 * that only grows (`aheadMs`, 0 on the real clock). That keeps it in step with PostgreSQL, whose
 * now() is the wall clock: SQL that decides a due time compares with `sqlNow` (now() plus the
 * skip), so the database and the code agree on what is due. Liveness is not a due time and stays
 * on the wall clock: heartbeats, stale workers, lock ages, and rows' created/updated stamps.
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
