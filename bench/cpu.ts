import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time (user + system) spent by the platform's process, the bench's own process (the driver)
 * and the PostgreSQL server's processes, read from /proc — Linux only; elsewhere there is no
 * sample. A rate drifts with the machine's speed from one second to the next; the CPU an item
 * costs each side, beside the baseline's from the same run, tells where a figure's gap is.
 */
export interface CpuSample {
  platformMs: number;
  driverMs: number;
  postgresMs: number;
}

/** /proc counts in clock ticks of USER_HZ, which Linux fixes at 100 a second. */
const TICK_MS = 10;

/** The CPU a process has used so far (0 once it is gone). */
function cpuMsOf(pid: number | string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (comm) ": state is field 3 of stat(5), utime 14 and stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** The CPU each process named `postgres` (the server and its backends) has used so far, by pid. */
export function postgresCpuMs(): Map<string, number> {
  const byPid = new Map<string, number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8') === 'postgres\n') byPid.set(pid, cpuMsOf(pid));
    } catch {
      // gone meanwhile
    }
  }
  return byPid;
}

/**
 * What the PostgreSQL processes alive at the end spent since `before`: a backend that ended
 * meanwhile takes its CPU with it (never a negative sum), one that started counts whole, and so
 * does one that reuses an ended one's pid.
 */
export function postgresSpentMs(before: Map<string, number>, after: Map<string, number>): number {
  let total = 0;
  for (const [pid, ms] of after) {
    const was = before.get(pid) ?? 0;
    total += ms >= was ? ms - was : ms;
  }
  return total;
}

interface Reading {
  platformMs: number;
  driverMs: number;
  postgres: Map<string, number>;
}

function read(platformPid: number): Reading | undefined {
  if (process.platform !== 'linux') return undefined;
  return { platformMs: cpuMsOf(platformPid), driverMs: cpuMsOf(process.pid), postgres: postgresCpuMs() };
}

/** Sums the CPU of the phases measured with it, to divide by the items they handled. */
export class CpuMeter {
  private readonly spent: CpuSample = { platformMs: 0, driverMs: 0, postgresMs: 0 };
  private items = 0;

  constructor(private readonly platformPid: number) {}

  /** Runs `phase` (which handles `items`) and adds what it cost (nothing off Linux). */
  async measure<T>(items: number, phase: () => Promise<T>): Promise<T> {
    const before = read(this.platformPid);
    const result = await phase();
    const after = read(this.platformPid);
    if (!before || !after) return result;
    this.spent.platformMs += after.platformMs - before.platformMs;
    this.spent.driverMs += after.driverMs - before.driverMs;
    this.spent.postgresMs += postgresSpentMs(before.postgres, after.postgres);
    this.items += items;
    return result;
  }

  /** Milliseconds of CPU per item, each side's and in all; undefined before an item was counted (always, off Linux). */
  perItem(): (CpuSample & { totalMs: number }) | undefined {
    if (this.items === 0) return undefined;
    const per = (ms: number) => Math.round((ms / this.items) * 1000) / 1000;
    const { platformMs, driverMs, postgresMs } = this.spent;
    return { platformMs: per(platformMs), driverMs: per(driverMs), postgresMs: per(postgresMs), totalMs: per(platformMs + driverMs + postgresMs) };
  }
}
