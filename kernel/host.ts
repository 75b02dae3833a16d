import { readFileSync, statfsSync } from 'node:fs';
import os from 'node:os';

/**
 * This host's own figures, read from the OS (Linux /proc where there is no portable call; zeros
 * elsewhere): shared by the infrastructure service's local driver and the control plane's
 * resource sampler and health view.
 */

/** Busy and total CPU time of every core since boot (ms); two readings give the utilisation between them. */
export function cpuTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const c of os.cpus()) {
    const t = c.times.user + c.times.nice + c.times.sys + c.times.irq + c.times.idle;
    total += t;
    busy += t - c.times.idle;
  }
  return { busy, total };
}

/** CPU utilisation in percent between two cpuTimes() readings. */
export function cpuPercent(before: { busy: number; total: number }, after: { busy: number; total: number }): number {
  const total = after.total - before.total;
  return total > 0 ? Math.max(0, Math.min(100, ((after.busy - before.busy) / total) * 100)) : 0;
}

export function disk(path = '/'): { total: number; free: number } {
  try {
    const s = statfsSync(path);
    return { total: s.blocks * s.bsize, free: s.bavail * s.bsize };
  } catch {
    return { total: 0, free: 0 };
  }
}

/** Bytes received and sent since boot on every interface but loopback (/proc/net/dev). */
export function network(): { rx: number; tx: number } {
  try {
    let rx = 0;
    let tx = 0;
    for (const line of readFileSync('/proc/net/dev', 'utf8').split('\n').slice(2)) {
      const [name, rest] = line.split(':');
      if (!rest || name!.trim() === 'lo') continue;
      const f = rest.trim().split(/\s+/).map(Number);
      rx += f[0]!;
      tx += f[8]!;
    }
    return { rx, tx };
  } catch {
    return { rx: 0, tx: 0 };
  }
}

/** Established TCP connections (/proc/net/tcp and tcp6, state 01). */
export function connections(): number {
  let n = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) if (line.trim().split(/\s+/)[3] === '01') n += 1;
    } catch {
      /* not Linux */
    }
  }
  return n;
}

export function osImage(): string {
  try {
    return /^PRETTY_NAME="?([^"\n]*)"?/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? os.type();
  } catch {
    return `${os.type()} ${os.release()}`;
  }
}
