import { sqlNow, type Clock } from '../../kernel/clock';
import type { TestPlatform } from './platform';
import { until } from './until';

/**
 * A clock a test moves forward (`startTestPlatform(env, { clock })`): the wall clock plus the
 * time skipped so far. Time keeps flowing between skips, so the clock never falls behind the
 * database's now() and work the test does not skip over (a job due now, a retry) still happens
 * by itself. Sleepers wake when either real time or a skip takes the clock to their end.
 */
export interface TestClock extends Clock {
  /** Moves the clock `ms` forward at once, waking every sleeper it takes past its end. */
  advance(ms: number): void;
  /** Moves the clock to `at` (a due time), or leaves it where it is when it is there already. */
  advanceTo(at: Date | string): void;
  /** How many sleeps on this clock have not ended: a test moves the clock once the platform is waiting on it. */
  sleeping(): number;
}

interface Sleeper {
  end: number;
  timer?: NodeJS.Timeout;
  wake(): void;
}

export function testClock(): TestClock {
  let ahead = 0;
  const now = () => Date.now() + ahead;
  // Each sleeper's real timer is armed for what is left of its sleep; a skip re-arms them all.
  const sleepers = new Set<Sleeper>();
  const arm = (s: Sleeper) => {
    clearTimeout(s.timer);
    s.timer = setTimeout(s.wake, Math.max(0, s.end - now()));
  };
  const clock: TestClock = {
    now: () => new Date(now()),
    aheadMs: () => ahead,
    advance(ms) {
      if (!(ms >= 0)) throw new RangeError(`a clock only moves forward, not by ${ms} ms`);
      ahead += ms;
      for (const s of sleepers) arm(s);
    },
    advanceTo(at) {
      clock.advance(Math.max(0, new Date(at).getTime() - now()));
    },
    sleeping: () => sleepers.size,
    sleep(ms, signal) {
      return new Promise((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const onAbort = () => {
          clearTimeout(sleeper.timer);
          sleepers.delete(sleeper);
          reject(signal!.reason);
        };
        const sleeper: Sleeper = {
          end: now() + ms,
          wake: () => {
            sleepers.delete(sleeper);
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        sleepers.add(sleeper);
        arm(sleeper);
      });
    },
  };
  return clock;
}

/**
 * Waits until every job named `name` whose data has the fields of `match` and which is due on
 * `clock` has finished: the platform has acted on every due time the clock was moved past (a
 * test then asserts on what that did, or did not, start).
 */
export async function untilDueJobsDone(p: TestPlatform, clock: Clock, name: string, match: Record<string, string>, timeoutMs = 15_000): Promise<void> {
  const open = async () => {
    const params: unknown[] = [name, JSON.stringify(match)];
    const [{ n }] = await p.platform.kernel.db.query(
      `SELECT count(*)::int AS n FROM platform.jobs
       WHERE name = $1 AND data @> $2::jsonb AND state IN ('queued', 'running') AND run_at <= ${sqlNow(clock, params)}`,
      params,
    );
    return n as number;
  };
  await until(`the due ${name} jobs of ${JSON.stringify(match)} to finish`, async () => (await open()) === 0, timeoutMs, 100);
}
