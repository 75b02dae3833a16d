/**
 * What this process has answered: counted once per HTTP response (server/http.ts), read by the
 * metrics service's sampler and its Prometheus endpoint. Counters only grow; readers take deltas.
 */
export class RequestStats {
  total = 0;
  successful = 0;
  /** 4xx: the caller's mistake (also 429). */
  clientErrors = 0;
  /** 5xx. */
  serverErrors = 0;
  private readonly durations: number[] = [];
  private next = 0;

  record(status: number, durationMs: number): void {
    this.total += 1;
    if (status >= 500) this.serverErrors += 1;
    else if (status >= 400) this.clientErrors += 1;
    else this.successful += 1;
    // The last 1,000 response times, for the health view's latency figure.
    if (this.durations.length < 1000) this.durations.push(durationMs);
    else this.durations[this.next] = durationMs;
    this.next = (this.next + 1) % 1000;
  }

  /** p-quantile (0..1) of the recent response times in ms; null before any response. */
  latency(q: number): number | null {
    if (!this.durations.length) return null;
    const sorted = [...this.durations].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  }
}
