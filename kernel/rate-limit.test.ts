import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { AppError } from './errors';
import { RateLimiter, RateLimitExceeded, TIER_LIMITS, rateLimitHeaders } from './rate-limit';

async function drain(limiter: RateLimiter, key: string, tier: 'free' | 'starter') {
  let allowed = 0;
  for (;;) {
    try {
      await limiter.consume(key, tier);
      allowed++;
    } catch (err) {
      assert.ok(err instanceof RateLimitExceeded);
      return { allowed, err };
    }
  }
}

test('the documented tier table', () => {
  assert.deepEqual(TIER_LIMITS.free, { perMinute: 10, perHour: 300, perDay: 5_000, burst: 15, concurrentExecutions: 2 });
  assert.deepEqual(TIER_LIMITS.enterprise, { perMinute: 1_000, perHour: 50_000, perDay: 1_000_000, burst: 2_000, concurrentExecutions: 200 });
});

test('a minute allows the burst once; the pool does not refill with the minute', async () => {
  const limiter = new RateLimiter();
  const { allowed, err } = await drain(limiter, 'k1', 'free');
  assert.equal(allowed, 15);
  assert.deepEqual(err.details, { limit: 10, window: '1m', retryAfter: err.retryAfter, tier: 'free' });
  assert.equal(rateLimitHeaders(err.snapshot)['x-ratelimit-burst-remaining'], '0');
});

test('refused requests do not count against the hour', async () => {
  const limiter = new RateLimiter();
  await drain(limiter, 'k2', 'free');
  for (let i = 0; i < 5; i++) await assert.rejects(limiter.consume('k2', 'free'), RateLimitExceeded);
  const { snapshot } = (await limiter.consume('k2', 'free').catch((e) => e)) as RateLimitExceeded;
  assert.equal(snapshot.limits.perHour.remaining, TIER_LIMITS.free.perHour - 15);
});

test('named endpoint limits', async () => {
  const limiter = new RateLimiter();
  for (let i = 0; i < 3; i++) await limiter.consumeNamed('prompt-test', 'k', 3, 60, 'free');
  await assert.rejects(
    limiter.consumeNamed('prompt-test', 'k', 3, 60, 'free'),
    (e) => e instanceof AppError && e.code === 'RATE_LIMIT_EXCEEDED' && e.details.limit === 3,
  );
});

test('Redis counters are shared between limiters (gateway processes)', async (t) => {
  const url = process.env.TEST_REDIS_URL;
  if (!url) return t.skip('TEST_REDIS_URL is not set (.ci/run sets it)');
  const [r1, r2] = [new Redis(url), new Redis(url)];
  const key = `k-${randomUUID()}`;
  const a = new RateLimiter(r1);
  const b = new RateLimiter(r2);
  for (let i = 0; i < 8; i++) await a.consume(key, 'free');
  const s = await b.consume(key, 'free');
  assert.equal(s.limits.perMinute.remaining, 1);
  const { allowed } = await drain(b, key, 'free');
  assert.equal(allowed, 6);
  r1.disconnect();
  r2.disconnect();
});
