import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError } from './errors';
import type { Tier } from './auth/principal';

/**
 * Per-key rate limits by tier. Counters live in memory, or in Redis when
 * REDIS_URL is set so that several gateway processes share them.
 *
 * Burst: a key may exceed its per-minute limit by (burst − perMinute) requests, drawn from a
 * pool that refills every hour; so one minute can carry up to `burst` requests, but not every
 * minute. X-RateLimit-Burst-Remaining is what can still be sent right now (minute + pool).
 */
export interface TierLimits {
  perMinute: number;
  perHour: number;
  perDay: number;
  burst: number;
  concurrentExecutions: number;
}

export const TIER_LIMITS: Record<Tier, TierLimits> = {
  free: { perMinute: 10, perHour: 300, perDay: 5_000, burst: 15, concurrentExecutions: 2 },
  starter: { perMinute: 60, perHour: 2_000, perDay: 40_000, burst: 100, concurrentExecutions: 10 },
  professional: { perMinute: 300, perHour: 12_000, perDay: 200_000, burst: 500, concurrentExecutions: 50 },
  enterprise: { perMinute: 1_000, perHour: 50_000, perDay: 1_000_000, burst: 2_000, concurrentExecutions: 200 },
};

/** The infrastructure service's limits: requests per hour per API key and per signed-in person. */
export const INFRA_HOURLY_LIMITS = { perKey: 1000, perUser: 5000 };

export interface WindowStatus {
  limit: number;
  remaining: number;
  resetAt: Date;
}

/** What a key has left; computed at the edge on every request and handed to the subgraphs. */
export interface RateLimitSnapshot {
  tier: Tier;
  limits: { perMinute: WindowStatus; perHour: WindowStatus; perDay: WindowStatus };
  burst: { limit: number; remaining: number };
}

type Window = 'minute' | 'hour' | 'day' | 'burst';
const SECONDS: Record<Window, number> = { minute: 60, hour: 3_600, day: 86_400, burst: 3_600 };
const LABEL: Record<'minute' | 'hour' | 'day', string> = { minute: '1m', hour: '1h', day: '1d' };

export class RateLimiter {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(private readonly redis?: Redis) {}

  /** Counts one request of a key; throws RATE_LIMIT_EXCEEDED (with the snapshot attached) when over. */
  async consume(keyId: string, tier: Tier): Promise<RateLimitSnapshot> {
    const limits = TIER_LIMITS[tier];
    const now = Date.now();
    const minute = await this.take(this.limiter(tier, 'minute', limits.perMinute), keyId);
    let pool: RateLimiterRes | null;
    let minuteExceeded = false;
    if (minute.ok) {
      pool = await this.limiter(tier, 'burst', limits.burst - limits.perMinute).get(keyId);
    } else {
      const drawn = await this.take(this.limiter(tier, 'burst', limits.burst - limits.perMinute), keyId);
      pool = drawn.res;
      minuteExceeded = !drawn.ok;
    }
    // A request refused by a shorter window does not count against the longer ones.
    const hourLimiter = this.limiter(tier, 'hour', limits.perHour);
    const dayLimiter = this.limiter(tier, 'day', limits.perDay);
    const hour = minuteExceeded ? await this.peek(hourLimiter, keyId, limits.perHour) : await this.take(hourLimiter, keyId);
    const day = !hour.ok || minuteExceeded ? await this.peek(dayLimiter, keyId, limits.perDay) : await this.take(dayLimiter, keyId);

    const status = (res: RateLimiterRes, limit: number): WindowStatus => ({
      limit,
      remaining: Math.max(0, res.remainingPoints),
      resetAt: new Date(now + res.msBeforeNext),
    });
    const poolRemaining = pool ? Math.max(0, pool.remainingPoints) : limits.burst - limits.perMinute;
    const snapshot: RateLimitSnapshot = {
      tier,
      limits: {
        perMinute: status(minute.res, limits.perMinute),
        perHour: status(hour.res, limits.perHour),
        perDay: status(day.res, limits.perDay),
      },
      burst: { limit: limits.burst, remaining: Math.max(0, minute.res.remainingPoints) + poolRemaining },
    };
    const exceeded: ['minute' | 'hour' | 'day', RateLimiterRes, number] | undefined = minuteExceeded
      ? ['minute', minute.res, limits.perMinute]
      : !hour.ok
        ? ['hour', hour.res, limits.perHour]
        : !day.ok
          ? ['day', day.res, limits.perDay]
          : undefined;
    if (exceeded) {
      const [window, res, limit] = exceeded;
      throw new RateLimitExceeded(snapshot, limit, LABEL[window], Math.max(1, Math.ceil(res.msBeforeNext / 1000)));
    }
    return snapshot;
  }

  /**
   * An endpoint-specific limit on top of the tier's (prompt tests per minute, chain executions…).
   * Throws RATE_LIMIT_EXCEEDED when over.
   */
  /** Counts one event against a named limit of `points` per `durationSeconds`; the window's standing, or RATE_LIMIT_EXCEEDED. */
  async consumeNamed(name: string, key: string, points: number, durationSeconds: number, tier?: Tier): Promise<WindowStatus> {
    const limiter = this.get(`named:${name}:${points}:${durationSeconds}`, points, durationSeconds);
    const taken = await this.take(limiter, key);
    if (!taken.ok) {
      const retryAfter = Math.max(1, Math.ceil(taken.res.msBeforeNext / 1000));
      throw new AppError('RATE_LIMIT_EXCEEDED', `Rate limit of ${points} per ${durationSeconds} s for ${name} exceeded`, {
        limit: points,
        window: `${durationSeconds}s`,
        retryAfter,
        tier,
      });
    }
    return { limit: points, remaining: Math.max(0, taken.res.remainingPoints), resetAt: new Date(Date.now() + taken.res.msBeforeNext) };
  }

  private async take(limiter: RateLimiterAbstract, key: string): Promise<{ ok: boolean; res: RateLimiterRes }> {
    try {
      return { ok: true, res: await limiter.consume(key) };
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return { ok: false, res: rejection };
      throw rejection; // the store failed: surface it rather than let traffic through unmetered
    }
  }

  private async peek(limiter: RateLimiterAbstract, key: string, points: number): Promise<{ ok: boolean; res: RateLimiterRes }> {
    const res = await limiter.get(key);
    return { ok: true, res: res ?? new RateLimiterRes(points, limiter.duration * 1000, 0, false) };
  }

  private limiter(tier: Tier, window: Window, points: number): RateLimiterAbstract {
    return this.get(`tier:${tier}:${window}`, points, SECONDS[window]);
  }

  private get(name: string, points: number, duration: number): RateLimiterAbstract {
    let limiter = this.limiters.get(name);
    if (!limiter) {
      const opts = { points: Math.max(1, points), duration, keyPrefix: `rl:${name}` };
      limiter = this.redis ? new RateLimiterRedis({ ...opts, storeClient: this.redis }) : new RateLimiterMemory(opts);
      this.limiters.set(name, limiter);
    }
    return limiter;
  }
}

export class RateLimitExceeded extends AppError {
  constructor(
    readonly snapshot: RateLimitSnapshot,
    limit: number,
    window: string,
    readonly retryAfter: number,
  ) {
    super('RATE_LIMIT_EXCEEDED', `Rate limit exceeded: ${limit} requests per ${window} for the ${snapshot.tier} tier`, {
      limit,
      window,
      retryAfter,
      tier: snapshot.tier,
    });
  }
}

/** The five headers of every key-authenticated response. */
export function rateLimitHeaders(s: RateLimitSnapshot): Record<string, string> {
  return {
    'x-ratelimit-limit': String(s.limits.perMinute.limit),
    'x-ratelimit-remaining': String(s.limits.perMinute.remaining),
    'x-ratelimit-reset': String(Math.ceil(s.limits.perMinute.resetAt.getTime() / 1000)),
    'x-ratelimit-tier': s.tier,
    'x-ratelimit-burst-remaining': String(s.burst.remaining),
  };
}
