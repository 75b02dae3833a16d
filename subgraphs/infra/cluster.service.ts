import type { Principal } from '../../kernel/auth/principal';
import { AppError } from '../../kernel/errors';
import type { Logger } from '../../kernel/logger';
import type { Access } from './access';
import type { ClusterDriver, ClusterInfo, ClusterMetrics, NodeInfo } from './cluster/driver';
import type { NotifyService } from './notify.service';

/** Cluster, nodes and metrics as the driver reports them, and the alert rules that watch them. */
export class ClusterService {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly access: Access,
    private readonly driver: ClusterDriver,
    private readonly notify: NotifyService,
    private readonly logger: Logger,
    private readonly thresholdPercent: number,
  ) {}

  async cluster(p: Principal): Promise<ClusterInfo> {
    await this.access.caller(p, 'cluster:read');
    return this.reach(() => this.driver.cluster());
  }

  async nodes(p: Principal): Promise<NodeInfo[]> {
    await this.access.caller(p, 'cluster:read');
    return this.reach(() => this.driver.nodes());
  }

  async metrics(p: Principal): Promise<ClusterMetrics> {
    await this.access.caller(p, 'cluster:read');
    return this.reach(() => this.driver.metrics());
  }

  /** A cluster that does not answer is a 503 that says so, not a 500. */
  private async reach<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (err) {
      this.logger.warn('infra: the cluster did not answer', { err });
      throw new AppError('service_unavailable', 'The cluster did not answer; try again shortly', { reason: 'cluster_unavailable' });
    }
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.check().catch((err) => this.logger.warn('infra: cluster check failed', { err })), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The node and utilisation rules (notify.service.ts lists them all). */
  async check(): Promise<void> {
    for (const node of await this.driver.nodes()) {
      if (node.status === 'Ready') await this.notify.resolve('node_not_ready', node.name);
      else await this.notify.raise('node_not_ready', node.name, 'critical', `Node ${node.name} is ${node.status}`, { node: node.name, status: node.status });
    }
    const m = await this.driver.metrics();
    for (const [resource, figure] of Object.entries(m.cluster) as [keyof ClusterMetrics['cluster'], ClusterMetrics['cluster']['cpu']][]) {
      const rule = `${resource}_high`;
      if (figure.utilizationPercent >= this.thresholdPercent) {
        await this.notify.raise(
          rule,
          'cluster',
          'warning',
          `Cluster ${resource} utilisation is ${figure.utilizationPercent}% (threshold ${this.thresholdPercent}%)`,
          {
            resource,
            utilizationPercent: figure.utilizationPercent,
            thresholdPercent: this.thresholdPercent,
          },
        );
      } else {
        await this.notify.resolve(rule, 'cluster');
      }
    }
  }
}
