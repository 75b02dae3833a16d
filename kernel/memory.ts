import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Gives memory back once the process has gone quiet. V8 grows its young generation under load (and
 * through the start, which builds every schema) and shrinks it only in a scavenge that finds
 * allocation slow after full collections; a process with nothing to do runs no collection, so what
 * the start or a burst of load grew stays resident for good (about a third of an idle platform's
 * memory). Once the process has been quiet for `quietMs` with a young generation grown past its
 * start, two full collections; 5 s later, when the allocation rate V8 measures is low, two
 * scavenges, which shrink the young generation.
 * Each costs some tens of milliseconds, only on a process that has nothing else to do.
 *
 * "Quiet" is the event loop's utilization over each `everyMs` window: below `busyBelow` (timers,
 * heartbeats and polls of an idle platform stay well under it). One trimmer per process, however
 * many platforms it runs (the tests run several).
 */
export interface TrimOptions {
  everyMs?: number;
  quietMs?: number;
  busyBelow?: number;
}

/** V8 judges the allocation rate over its last 5 s: the scavenges that shrink wait that long after the full collections. */
const RATE_WINDOW_MS = 5_000;

const MAX_ROUNDS = 3;

/** A young generation above this is one that work grew (V8 starts it at 1 MB a half). */
const GROWN_BYTES = 8 * 1048576;

let running: NodeJS.Timeout | undefined;

export function trimWhenIdle({ everyMs = 5_000, quietMs = 5_000, busyBelow = 0.05 }: TrimOptions = {}): void {
  if (running) return;
  const gc = collector();
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  let quietFor = 0;
  let trimming = false;
  // V8 may decline to shrink after one round (its allocation rate still counts the work): a few
  // rounds per quiet spell, none more until there has been work again.
  let rounds = 0;
  running = setInterval(() => {
    const window = performance.eventLoopUtilization(last);
    last = performance.eventLoopUtilization();
    if (window.utilization >= busyBelow) {
      quietFor = 0;
      rounds = 0;
      return;
    }
    quietFor += everyMs;
    if (trimming || rounds >= MAX_ROUNDS || quietFor < quietMs || youngBytes() <= GROWN_BYTES) return;
    trimming = true;
    rounds++;
    gc({ type: 'major' });
    gc({ type: 'major' });
    last = performance.eventLoopUtilization(); // the collections are not work
    setTimeout(() => {
      gc({ type: 'minor' });
      gc({ type: 'minor' });
      trimming = false;
    }, RATE_WINDOW_MS).unref();
  }, everyMs);
  running.unref();
}

/** What the young generation holds in memory now. */
function youngBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0;
}

export function stopTrimming(): void {
  clearInterval(running);
  running = undefined;
}

type Collect = (options: { type: 'major' | 'minor' }) => void;

/**
 * V8's collector, reached without exposing `gc` to every module as `node --expose-gc` would: the
 * flag is set for contexts made from now on, and the function is taken from one such context.
 */
function collector(): Collect {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as Collect;
}
