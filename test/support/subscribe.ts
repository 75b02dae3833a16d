import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

/**
 * A graphql-ws client on `baseUrl`'s `/graphql` (`http://` is turned into `ws://`). It never
 * retries: a refused connection must surface as the subscription's error, not as a silent
 * reconnect loop. `authorization` is the whole header value (`Bearer …`); none is anonymous.
 * `lazy: false` keeps the socket open with no subscription (so the server's close is the one seen).
 */
export function wsClient(baseUrl: string, authorization?: string, opts: { lazy?: boolean } = {}): Client {
  return createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: authorization ? { authorization } : {},
    retryAttempts: 0,
    lazy: opts.lazy ?? true,
    // A non-lazy client's connection problems reach its `closed` listeners; nothing to print.
    onNonLazyError: () => undefined,
  });
}

/**
 * One running subscription: what it received so far, and ways to wait for more. `T` is the shape
 * of one value the test expects: `data`, or `errors` where the server refused that event (e.g.
 * `Gql<{ taskUpdated: Task }>` from ./answers).
 */
export interface Subscription<Result = unknown> {
  /** Every value the server sent, in order (a value may carry `errors` instead of `data`). */
  readonly events: Result[];
  /** Errors that ended the subscription (a refusal is one). */
  readonly errors: unknown[];
  /** Settles when the server completes or errors the subscription. */
  readonly done: Promise<void>;
  /** Waits for `count` events, an error or `timeoutMs`, whichever comes first; never throws (the caller asserts what arrived). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  /** Resolves with the first event `match` accepts, or when the subscription ends (then undefined); fails after `timeoutMs` listing the events seen. */
  until(match: (event: Result) => boolean, timeoutMs?: number): Promise<Result | undefined>;
}

/** Subscribes `query` on `client` and records what arrives. */
export function subscribe<Result = unknown>(client: Client, query: string, variables: Record<string, unknown> = {}): Subscription<Result> {
  const events: Result[] = [];
  const errors: unknown[] = [];
  let ended = false;
  // Waiters re-check on every arrival instead of polling, so a test waits no longer than it must.
  const waiters = new Set<() => void>();
  const wake = () => waiters.forEach((w) => w());
  const done = new Promise<void>((resolve) => {
    client.subscribe(
      { query, variables },
      {
        next: (value) => (events.push(value as Result), wake()),
        error: (err) => (errors.push(err), (ended = true), resolve(), wake()),
        complete: () => ((ended = true), resolve(), wake()),
      },
    );
  });
  function wait<R>(check: () => R | undefined, timeoutMs: number, onTimeout: () => R | Error): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const settle = (r: R | Error) => {
        waiters.delete(poke);
        clearTimeout(timer);
        r instanceof Error ? reject(r) : resolve(r);
      };
      const poke = () => {
        const r = check();
        if (r !== undefined) settle(r);
      };
      const timer = setTimeout(() => settle(onTimeout()), timeoutMs);
      waiters.add(poke);
      poke();
    });
  }
  return {
    events,
    errors,
    done,
    waitFor: (count, timeoutMs = 5000) =>
      wait(
        () => (events.length >= count || errors.length > 0 || ended ? true : undefined),
        timeoutMs,
        () => true,
      ).then(() => undefined),
    until: (match, timeoutMs = 10_000) =>
      wait(
        () => {
          const hit = events.find(match);
          return hit ? { hit } : ended ? { hit: undefined } : undefined;
        },
        timeoutMs,
        () => new Error(`no matching event within ${timeoutMs} ms: ${JSON.stringify(events).slice(0, 1000)}`),
      ).then((r) => r.hit),
  };
}
