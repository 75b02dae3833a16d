import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type Redis from 'ioredis';
import { newRedis } from './redis';
import type { Logger } from './logger';
import type { Registry, Topics } from './topics';

/**
 * Publish/subscribe for state changes (task, execution, orchestration, key events, job
 * cancellation). Subscribers in this process are always called directly; with a transport the
 * event also reaches other processes: PostgreSQL LISTEN/NOTIFY, or Redis when REDIS_URL is set.
 * Payloads are small (ids and states): subscribers refetch what they need.
 */

export type EventHandler<P = unknown> = (payload: P) => void;

/**
 * Typed by a registry of topics and their payloads (kernel/topics.ts, the default): a topic not in
 * it, or a payload of another shape, does not compile. Every bus of a deployment shares one channel,
 * so the registry is the platform's; only kernel tests give one of their own.
 */
export interface EventBus<T extends Registry = Topics> {
  publish<K extends keyof T & string>(topic: K, payload: T[K]): Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe<K extends keyof T & string>(topic: K, handler: EventHandler<T[K]>): () => void;
  close(): Promise<void>;
}

interface Envelope {
  origin: string;
  topic: string;
  payload: unknown;
}

const CHANNEL = 'platform_events';

// The transports move any name and payload; the registry is the callers' contract (createEventBus).
class LocalBus<T extends Registry> implements EventBus<T> {
  protected readonly emitter = new EventEmitter();
  protected readonly origin = randomUUID();
  constructor() {
    this.emitter.setMaxListeners(0);
  }
  async publish<K extends keyof T & string>(topic: K, payload: T[K]): Promise<void> {
    this.deliver(topic, payload);
  }
  subscribe<K extends keyof T & string>(topic: K, handler: EventHandler<T[K]>): () => void {
    this.emitter.on(topic, handler);
    return () => this.emitter.off(topic, handler);
  }
  protected deliver(topic: string, payload: unknown): void {
    for (const handler of this.emitter.listeners(topic) as EventHandler[]) {
      try {
        handler(payload);
      } catch {
        // a failing subscriber must not break the publisher or the other subscribers
      }
    }
  }
  protected receive(raw: string): void {
    const env = JSON.parse(raw) as Envelope;
    if (env.origin !== this.origin) this.deliver(env.topic, env.payload);
  }
  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

class PostgresBus<T extends Registry> extends LocalBus<T> {
  private listener?: Client;
  private closed = false;
  constructor(
    private readonly url: string,
    private readonly notify: (channel: string, payload: string) => Promise<unknown>,
    private readonly logger: Logger,
  ) {
    super();
  }
  async start(): Promise<void> {
    const client = new Client({ connectionString: this.url, application_name: 'platform-events' });
    client.on('notification', (msg) => msg.payload && this.receive(msg.payload));
    client.on('error', (err) => {
      if (this.closed) return;
      this.logger.warn('event listener connection lost; reconnecting', { err });
      setTimeout(() => void this.start().catch(() => undefined), 1000);
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.listener = client;
  }
  override async publish(topic: string, payload: unknown): Promise<void> {
    this.deliver(topic, payload);
    await this.notify(CHANNEL, JSON.stringify({ origin: this.origin, topic, payload } satisfies Envelope));
  }
  override async close(): Promise<void> {
    this.closed = true;
    await super.close();
    await this.listener?.end().catch(() => undefined);
  }
}

class RedisBus<T extends Registry> extends LocalBus<T> {
  private readonly pub: Redis;
  private readonly sub: Redis;
  constructor(url: string) {
    super();
    this.pub = newRedis(url, { lazyConnect: false, maxRetriesPerRequest: 3 });
    this.sub = newRedis(url, { lazyConnect: false });
    this.sub.on('message', (_channel, raw: string) => this.receive(raw));
  }
  async start(): Promise<void> {
    await this.sub.subscribe(CHANNEL);
  }
  override async publish(topic: string, payload: unknown): Promise<void> {
    this.deliver(topic, payload);
    await this.pub.publish(CHANNEL, JSON.stringify({ origin: this.origin, topic, payload } satisfies Envelope));
  }
  override async close(): Promise<void> {
    await super.close();
    this.sub.disconnect();
    this.pub.disconnect();
  }
}

export type EventTransport =
  { kind: 'memory' } | { kind: 'postgres'; url: string; notify: (channel: string, payload: string) => Promise<unknown> } | { kind: 'redis'; url: string };

export async function createEventBus<T extends Registry = Topics>(transport: EventTransport, logger: Logger): Promise<EventBus<T>> {
  switch (transport.kind) {
    case 'memory':
      return new LocalBus<T>();
    case 'postgres': {
      const bus = new PostgresBus<T>(transport.url, transport.notify, logger);
      await bus.start();
      return bus;
    }
    case 'redis': {
      const bus = new RedisBus<T>(transport.url);
      await bus.start();
      return bus;
    }
  }
}
