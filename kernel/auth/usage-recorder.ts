import type { DataSource } from 'typeorm';
import type { Logger } from '../logger';

interface Pending {
  count: number;
  lastUsedAt: Date;
  lastIp: string | null;
}

/**
 * Key usage (last use, address, per-day counters) is written in batches, once a second, so a key
 * check never waits for a write. One statement updates every key used since the last flush.
 */
export class UsageRecorder {
  private pending = new Map<string, Pending>();
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: DataSource,
    private readonly logger: Logger,
    private readonly intervalMs = 1000,
  ) {}

  record(keyId: string, ip?: string): void {
    const entry = this.pending.get(keyId);
    if (entry) {
      entry.count++;
      entry.lastUsedAt = new Date();
      entry.lastIp = ip ?? entry.lastIp;
    } else {
      this.pending.set(keyId, { count: 1, lastUsedAt: new Date(), lastIp: ip ?? null });
    }
    this.timer ??= setTimeout(() => void this.flush(), this.intervalMs);
  }

  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.flushing.then(() => (batch.size ? this.write(batch) : undefined));
    return this.flushing;
  }

  private async write(batch: Map<string, Pending>): Promise<void> {
    const ids = [...batch.keys()];
    const counts = ids.map((id) => batch.get(id)!.count);
    const times = ids.map((id) => batch.get(id)!.lastUsedAt.toISOString());
    const ips = ids.map((id) => batch.get(id)!.lastIp);
    try {
      await this.db.query(
        `WITH b AS (SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::text[]) AS b(id, n, at, ip)),
         u AS (
           UPDATE platform.api_keys k SET request_count = k.request_count + b.n,
             last_used_at = greatest(k.last_used_at, b.at), last_used_ip = coalesce(b.ip, k.last_used_ip)
           FROM b WHERE k.id = b.id RETURNING k.id
         )
         INSERT INTO platform.api_key_usage (key_id, day, requests)
         SELECT b.id, (b.at AT TIME ZONE 'UTC')::date, b.n FROM b JOIN u ON u.id = b.id
         ON CONFLICT (key_id, day) DO UPDATE SET requests = platform.api_key_usage.requests + excluded.requests`,
        [ids, counts, times, ips],
      );
    } catch (err) {
      this.logger.warn('could not record API key usage', { err, keys: ids.length });
    }
  }
}
