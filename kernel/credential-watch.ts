import type { Edge, Presented } from './edge';
import { AppError } from './errors';
import type { EventBus } from './events';
import type { Logger } from './logger';
import type { RequestContext } from './subgraph';
import { TOPIC } from './topics';

/** setTimeout's longest wait (2^31 - 1 ms, about 24 days): a later expiry re-arms the timer when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * How often a key of an open connection is checked again with no event (through the key cache):
 * the bound on a revocation whose event was lost with a dropped LISTEN or Redis connection.
 */
const KEY_RECHECK_MS = 60_000;

/** What a watched connection does when its credential may have changed, and when it ended. */
export interface WatchHandlers {
  /**
   * The credential still holds after a change that may concern it (`context` carries the principal
   * as it is now): re-check what the connection reads, with the same rules as a request. A refusal
   * thrown here (see isRefusal) ends the connection with it.
   */
  changed(context: RequestContext): Promise<void>;
  /** The credential ended, or `changed` refused it: end the connection with `error`. Called once; the watch has stopped. */
  ended(error: AppError): void;
}

/** One watched connection. */
export interface Watch {
  /** The connection's context, with the principal as last checked. */
  readonly context: RequestContext;
  /** Settles once the check under way has (undefined: none is); an event waits for it, so none is served on a credential that just ended. */
  readonly checking: Promise<void> | undefined;
  /** Stops watching (the connection closed). */
  stop(): void;
}

/** An error that refuses the caller (a request would get 401, 403 or 404 now), as opposed to one that fails for the moment. */
export function isRefusal(err: unknown): err is AppError {
  return err instanceof AppError && (err.status === 401 || err.status === 403 || err.status === 404);
}

/**
 * Connections that outlive the request that admitted them (graphql-ws subscriptions, followed
 * log streams) end when their credential does. Each is checked again, with the same rules as a
 * request: at the credential's expiry (a timer), when its key changes (revoked, its expiry moved:
 * `apiKey.changed`) and when an infrastructure person's rights change (deleted, roles, a
 * membership: `infra.access.changed`). Events arrive from every process of the deployment through
 * the bus; nothing is read while nothing changes, apart from a key's periodic check through the
 * key cache (KEY_RECHECK_MS).
 */
export class CredentialWatch {
  private readonly byKey = new Map<string, Set<Watched>>();
  private readonly byPerson = new Map<string, Set<Watched>>();

  constructor(private readonly opts: { edge: Pick<Edge, 'recheck'>; events: EventBus; logger: Logger }) {
    opts.events.subscribe(TOPIC.apiKeyChanged, ({ id }) => {
      for (const w of [...(this.byKey.get(id) ?? [])]) w.check({ fresh: true, changed: true });
    });
    opts.events.subscribe(TOPIC.infraAccessChanged, ({ userId }) => {
      const concerned = userId === undefined ? [...this.byPerson.values()].flatMap((set) => [...set]) : [...(this.byPerson.get(userId) ?? [])];
      for (const w of concerned) w.check({ fresh: true, changed: true });
    });
  }

  /**
   * Watches the connection admitted with `presented` (`context` from Edge.admit) until it stops.
   * Start it before the connection's own authorizing checks, so a change while they run is seen.
   * Anonymous connections have no credential to lose.
   */
  watch(presented: Presented, context: RequestContext, handlers: WatchHandlers): Watch {
    const p = context.principal;
    const index =
      p.kind === 'apiKey' ? { map: this.byKey, id: p.keyId } : p.kind === 'user' && p.service === 'infra' ? { map: this.byPerson, id: p.userId } : null;
    if (p.kind !== 'apiKey' && p.kind !== 'user') return { context, checking: undefined, stop: () => undefined };
    let set: Set<Watched> | undefined;
    const watched = new Watched(presented, context, handlers, this.opts, () => {
      set?.delete(watched);
      if (index && set?.size === 0 && index.map.get(index.id) === set) index.map.delete(index.id);
    });
    if (index) {
      set = index.map.get(index.id) ?? new Set();
      index.map.set(index.id, set);
      set.add(watched);
    }
    // The admission may have read a key cached before a change whose event came in since: check it
    // once now (through the cache, which that event emptied), which also learns when it expires.
    watched.check({ fresh: false, changed: false });
    if (p.kind === 'apiKey') watched.every(KEY_RECHECK_MS);
    return watched;
  }
}

class Watched implements Watch {
  checking: Promise<void> | undefined;
  private pending: { fresh: boolean; changed: boolean } | undefined;
  private stopped = false;
  private expiry?: NodeJS.Timeout;
  private periodic?: NodeJS.Timeout;

  constructor(
    private readonly presented: Presented,
    public context: RequestContext,
    private readonly handlers: WatchHandlers,
    private readonly opts: { edge: Pick<Edge, 'recheck'>; logger: Logger },
    private readonly unindex: () => void,
  ) {}

  /** Checks again (`fresh`: a key past its cache; `changed`: the connection's reads too), after the check under way if there is one. */
  check(what: { fresh: boolean; changed: boolean }): void {
    if (this.stopped) return;
    this.pending = { fresh: what.fresh || !!this.pending?.fresh, changed: what.changed || !!this.pending?.changed };
    this.checking ??= Promise.resolve().then(() => this.drain());
  }

  every(ms: number): void {
    this.periodic = setInterval(() => this.check({ fresh: false, changed: false }), ms);
    this.periodic.unref();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.expiry);
    clearInterval(this.periodic);
    this.unindex();
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending && !this.stopped) {
        const what = this.pending;
        this.pending = undefined;
        await this.once(what);
      }
    } finally {
      this.checking = undefined;
    }
  }

  private async once({ fresh, changed }: { fresh: boolean; changed: boolean }): Promise<void> {
    try {
      const { principal, expiresAt } = await this.opts.edge.recheck(this.presented, fresh);
      if (this.stopped) return;
      this.context = { ...this.context, principal };
      this.arm(expiresAt);
      if (changed) await this.handlers.changed(this.context);
    } catch (err) {
      if (this.stopped) return;
      if (isRefusal(err)) {
        this.stop();
        this.handlers.ended(err);
        return;
      }
      // The database or a subgraph is away: the connection stays until a check can answer.
      this.opts.logger.warn('an open connection could not be checked again', { err });
    }
  }

  /** At the expiry, a fresh check (which then refuses the credential); a later expiry than a timer can wait re-arms it then. */
  private arm(expiresAt: Date | null): void {
    clearTimeout(this.expiry);
    if (!expiresAt) return;
    const wait = Math.min(Math.max(0, expiresAt.getTime() - Date.now()), MAX_TIMER_MS);
    this.expiry = setTimeout(() => this.check({ fresh: true, changed: false }), wait);
    this.expiry.unref();
  }
}
