/** The part of autocannon 9's API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  namespace autocannon {
    interface RawRequest {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      [key: string]: unknown;
    }
    interface Request extends RawRequest {
      setupRequest?: (req: RawRequest, context: Record<string, unknown>) => RawRequest | null;
      onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void;
    }
    interface Options {
      url: string;
      connections?: number;
      pipelining?: number;
      duration?: number;
      amount?: number;
      timeout?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      requests?: Request[];
      warmup?: { connections?: number; duration?: number };
      title?: string;
      /** A false answer counts the response in `mismatches`. */
      verifyBody?: (body: string) => boolean;
    }
    interface Histogram {
      min: number;
      max: number;
      average: number;
      mean: number;
      stddev: number;
      total?: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
      p99_9: number;
    }
    interface Result {
      title?: string;
      url: string;
      requests: Histogram & { sent: number; total: number };
      latency: Histogram & { totalCount: number };
      throughput: Histogram;
      duration: number;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      '1xx': number;
      '2xx': number;
      '3xx': number;
      '4xx': number;
      '5xx': number;
      statusCodeStats: Record<string, { count: number }>;
      start: Date;
      finish: Date;
      warmup?: Result;
    }
    interface Instance extends PromiseLike<Result> {
      stop(): void;
      on(event: string, listener: (...args: never[]) => void): this;
    }
  }
  function autocannon(opts: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
