import os from 'node:os';
import type { DataSource } from 'typeorm';
import { cpuPercent, cpuTimes, disk, network } from '../../../kernel/host';
import type { Logger } from '../../../kernel/logger';
import type { RequestStats } from '../../../kernel/request-stats';
import { metricsStore } from './metrics.store';

/**
 * Records this host's CPU, memory, storage and network, and the HTTP answers of this process,
 * every METRICS_SAMPLE_INTERVAL_MS (a row per process in control_plane.resource_samples), and
 * prunes rows older than METRICS_RETENTION_DAYS. CPU, network and requests are what happened
 * since the previous sample.
 */
export class ResourceSampler {
  private timer?: NodeJS.Timeout;
  private last = { cpu: cpuTimes(), net: network(), total: 0, ok: 0, failed: 0 };

  constructor(
    private readonly db: DataSource,
    private readonly requests: RequestStats,
    private readonly process: string,
    private readonly logger: Logger,
    private readonly retentionDays: number,
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.sample().catch((err) => this.logger.warn('resource sample not recorded', { err })), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The host's CPU utilisation since the previous sample (what the health view reports). */
  cpuNow(): number {
    return cpuPercent(this.last.cpu, cpuTimes());
  }

  async sample(): Promise<void> {
    const cpu = cpuTimes();
    const net = network();
    const r = this.requests;
    const failed = r.clientErrors + r.serverErrors;
    const d = disk();
    const total = os.totalmem();
    const used = total - os.freemem();
    await metricsStore.insertSample(this.db, {
      process: this.process,
      cpuPercent: cpuPercent(this.last.cpu, cpu),
      memoryPercent: (used / total) * 100,
      memoryUsed: used,
      storageUsed: d.total - d.free,
      storageTotal: d.total,
      networkIn: Math.max(0, net.rx - this.last.net.rx),
      networkOut: Math.max(0, net.tx - this.last.net.tx),
      requestsTotal: r.total - this.last.total,
      requestsSuccessful: r.successful - this.last.ok,
      requestsFailed: failed - this.last.failed,
    });
    this.last = { cpu, net, total: r.total, ok: r.successful, failed };
    await metricsStore.prune(this.db, this.retentionDays);
  }
}
