import os from 'node:os';
import type { Redis } from 'ioredis';
import type { DataSource } from 'typeorm';
import { SUBGRAPH_NAMES } from '../../../kernel/config';
import { AppError } from '../../../kernel/errors';
import { disk } from '../../../kernel/host';
import type { Operations } from '../../../kernel/operations';
import type { Queue } from '../../../kernel/queue';
import { limitMetrics } from '../../../kernel/metrics';
import { TIER_LIMITS, type RateLimiter } from '../../../kernel/rate-limit';
import type { RequestStats } from '../../../kernel/request-stats';
import type { RequestContext } from '../../../kernel/subgraph';
import type { ResourceSampler } from './metrics.sampler';
import type { PartHealth, SystemHealth } from './metrics.types';
import { healthStore } from './health.store';
import { AGENT_CONCURRENCY } from '../tasks';

/**
 * GET /metrics/system/health: the real state of each part, probed on every call — the database
 * (probe queries, connections, p95 of the recent probes), the job queue, the cache (Redis when
 * configured), the workflow engine (through its public operation), every subgraph (remote ones at
 * their /health) — plus the host's CPU, memory and storage and the caller's rate-limit use.
 * A part that does not answer is `unhealthy` and the answer is 503 naming it.
 */

const PROBES = 3;
const PROBE_WINDOW = 200;
const QUEUE_DEGRADED_DEPTH = 1000;

export interface HealthDeps {
  db: DataSource;
  limiter: RateLimiter;
  queue: Queue;
  redis?: Redis;
  operations: Operations;
  requests: RequestStats;
  sampler: ResourceSampler | null;
  subgraphUrls: Partial<Record<string, string>>;
}

export class HealthService {
  private readonly probes: number[] = [];

  constructor(private readonly deps: HealthDeps) {}

  async health(ctx: RequestContext): Promise<SystemHealth> {
    await limitMetrics(this.deps.limiter, ctx.principal, 'health');
    const [database, queue, cache, workflows, subgraphs, agents] = await Promise.all([
      this.database(),
      this.queueHealth(),
      this.cache(),
      this.engine(),
      this.subgraphs(),
      this.agents(),
    ]);
    const p50 = this.deps.requests.latency(0.5);
    const parts = {
      gateway: { status: 'healthy', responseTime: p50 === null ? null : Math.round(p50 * 100) / 100, uptime: Math.round(process.uptime()) },
      controlPlane: { status: 'healthy', responseTime: database.responseTime, uptime: Math.round(process.uptime()) },
      agents,
      workflows,
      database,
      queue,
      cache,
      subgraphs,
    };
    const unhealthy = [
      ...Object.entries(parts)
        .filter(([k, v]) => k !== 'subgraphs' && (v as PartHealth).status === 'unhealthy')
        .map(([k]) => k),
      ...Object.entries(subgraphs)
        .filter(([, v]) => (v as PartHealth).status === 'unhealthy')
        .map(([k]) => `subgraph:${k}`),
    ];
    const degraded = Object.values(parts).some((v) => (v as PartHealth).status === 'degraded');
    const d = disk();
    const total = os.totalmem();
    const free = os.freemem();
    const health: SystemHealth = {
      status: unhealthy.length ? 'unhealthy' : degraded ? 'degraded' : 'healthy',
      timestamp: new Date(),
      services: parts as SystemHealth['services'],
      resources: {
        cpu: { usage: Math.round((this.deps.sampler?.cpuNow() ?? 0) * 100) / 100, available: os.cpus().length },
        memory: { usage: Math.round(((total - free) / total) * 10_000) / 100, available: free },
        storage: { usage: d.total ? Math.round(((d.total - d.free) / d.total) * 10_000) / 100 : 0, available: d.free },
      },
      rateLimits: await this.rateLimits(ctx),
    };
    if (unhealthy.length) {
      throw new AppError('service_unavailable', `Unhealthy: ${unhealthy.join(', ')}`, { unhealthy, health: JSON.parse(JSON.stringify(health)) });
    }
    return health;
  }

  private async database(): Promise<PartHealth> {
    try {
      const started = performance.now();
      for (let i = 0; i < PROBES; i++) {
        const t = performance.now();
        await healthStore.ping(this.deps.db);
        this.probes.push(performance.now() - t);
      }
      if (this.probes.length > PROBE_WINDOW) this.probes.splice(0, this.probes.length - PROBE_WINDOW);
      const n = await healthStore.connections(this.deps.db);
      const sorted = [...this.probes].sort((a, b) => a - b);
      return {
        status: 'healthy',
        connections: n,
        queryLatencyP95: Math.round(sorted[Math.min(sorted.length - 1, Math.floor(0.95 * sorted.length))]! * 1000) / 1000,
        responseTime: Math.round(((performance.now() - started) / PROBES) * 1000) / 1000,
      };
    } catch (err) {
      return { status: 'unhealthy', message: (err as Error).message };
    }
  }

  private async queueHealth(): Promise<PartHealth> {
    try {
      const q = await this.deps.queue.depth();
      return { status: q.queued > QUEUE_DEGRADED_DEPTH ? 'degraded' : 'healthy', depth: q.queued, activeExecutions: q.running };
    } catch (err) {
      return { status: 'unhealthy', message: (err as Error).message };
    }
  }

  private async cache(): Promise<PartHealth> {
    const redis = this.deps.redis;
    if (!redis)
      return {
        status: 'healthy',
        message: 'in-process (REDIS_URL not set)',
        memoryUsage: process.memoryUsage().heapUsed,
        operations: this.deps.requests.total,
      };
    try {
      const started = performance.now();
      await redis.ping();
      const info = await redis.info();
      const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
      return {
        status: 'healthy',
        responseTime: Math.round((performance.now() - started) * 1000) / 1000,
        memoryUsage: field('used_memory'),
        operations: field('total_commands_processed'),
      };
    } catch (err) {
      return { status: 'unhealthy', message: (err as Error).message };
    }
  }

  private async engine(): Promise<PartHealth> {
    try {
      const { engineHealth } = await this.deps.operations.execute<{ engineHealth: { status: string; activeExecutions: number } }>(
        `query EngineHealth { engineHealth { status activeExecutions } }`,
      );
      return { status: 'healthy', activeExecutions: engineHealth.activeExecutions, engineStatus: engineHealth.status };
    } catch (err) {
      return { status: 'unhealthy', engineStatus: 'unreachable', message: (err as Error).message };
    }
  }

  private async agents(): Promise<PartHealth> {
    const r = await healthStore.activeTasks(this.deps.db);
    return {
      status: 'healthy',
      activeExecutions: r.running,
      queuedTasks: r.queued,
      capacityUtilization: Math.round((r.running / AGENT_CONCURRENCY) * 10_000) / 100,
    };
  }

  /** In-process subgraphs are healthy when this answer is given; remote ones answer their /health. */
  private async subgraphs(): Promise<Record<string, PartHealth & { url?: string }>> {
    const out: Record<string, PartHealth & { url?: string }> = {};
    await Promise.all(
      SUBGRAPH_NAMES.map(async (name) => {
        const url = this.deps.subgraphUrls[name];
        if (!url) {
          out[name] = { status: 'healthy', message: 'in-process' };
          return;
        }
        const started = performance.now();
        try {
          const res = await fetch(new URL('/health', url), { signal: AbortSignal.timeout(2000) });
          out[name] = { status: res.ok ? 'healthy' : 'unhealthy', url, responseTime: Math.round((performance.now() - started) * 1000) / 1000 };
        } catch (err) {
          out[name] = { status: 'unhealthy', url, message: (err as Error).message };
        }
      }),
    );
    return Object.fromEntries(SUBGRAPH_NAMES.map((n) => [n, out[n]!]));
  }

  private async rateLimits(ctx: RequestContext): Promise<SystemHealth['rateLimits']> {
    const p = ctx.principal;
    if (p.kind !== 'apiKey' || !ctx.rateLimit) return { tier: null, requestsPerMinute: null, concurrentExecutions: null };
    const minute = ctx.rateLimit.limits.perMinute;
    const n = await healthStore.activeTasksOfKey(this.deps.db, p.keyId);
    const limit = TIER_LIMITS[p.tier].concurrentExecutions;
    const current = minute.limit - minute.remaining;
    return {
      tier: p.tier,
      requestsPerMinute: { limit: minute.limit, current, utilizationPercentage: Math.round((current / minute.limit) * 10_000) / 100 },
      concurrentExecutions: { limit, current: n, utilizationPercentage: Math.round((n / limit) * 10_000) / 100 },
    };
  }
}
