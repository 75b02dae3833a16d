import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Gives memory back once the process has gone quiet. V8 grows its young generation under load (and
 * through the start, which builds every schema) and shrinks it only in a scavenge that finds
 * allocation slow after full collections; a process with nothing to do runs no collection, so what
 * the start or a burst of load grew stays resident for good (about a third of an idle platform's
 * memory). After `quietMs` without work following work, two full collections; 5 s later, when
 * the allocation rate V8 measures is low, two scavenges, which shrink the young generation.
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

let running: NodeJS.Timeout | undefined;

export function trimWhenIdle({ everyMs = 5_000, quietMs = 5_000, busyBelow = 0.05 }: TrimOptions = {}): void {
  if (running) return;
  const gc = collector();
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  let quietFor = 0;
  let worked = true; // the start is work
  running = setInterval(() => {
    const window = performance.eventLoopUtilization(last);
    last = performance.eventLoopUtilization();
    if (window.utilization >= busyBelow) {
      worked = true;
      quietFor = 0;
      return;
    }
    quietFor += everyMs;
    if (!worked || quietFor < quietMs) return;
    worked = false;
    gc({ type: 'major' });
    gc({ type: 'major' });
    setTimeout(() => {
      gc({ type: 'minor' });
      gc({ type: 'minor' });
      last = performance.eventLoopUtilization(); // the collections are not work
    }, RATE_WINDOW_MS).unref();
    last = performance.eventLoopUtilization();
  }, everyMs);
  running.unref();
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
