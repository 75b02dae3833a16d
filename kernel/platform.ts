import { createHash } from 'node:crypto';
import type Redis from 'ioredis';
import { newRedis } from './redis';
import type { DataSource } from 'typeorm';
import { realClock, type Clock } from './clock';
import type { Config } from './config';
import { createDataSource } from './db/data-source';
import { resolveDatabase, type Database } from './db/database';
import { kernelMigrations } from './db/migrations';
import { createEventBus, type EventBus, type EventTransport } from './events';
import { createLlmProvider, type LlmProvider } from './llm';
import { createLogger, type Logger } from './logger';
import { Operations } from './operations';
import { Queue } from './queue';
import { RateLimiter } from './rate-limit';
import { loadSecret } from './secrets';
import { WebhookSender } from './webhooks';
import { ApiKeyService } from './auth/api-key.service';
import { TokenSigner } from './auth/jwt';
import { RequestStats } from './request-stats';
import { AuditTrail } from './audit';

/** Everything a service stands on, built once per process. */
export interface Kernel {
  config: Config;
  logger: Logger;
  database: Database;
  db: DataSource;
  events: EventBus;
  queue: Queue;
  /** When things are due (kernel/clock.ts): the wall clock unless a test gives another. */
  clock: Clock;
  webhooks: WebhookSender;
  keys: ApiKeyService;
  rateLimiter: RateLimiter;
  llm: LlmProvider;
  /** Other services' public operations (kernel/operations.ts). */
  operations: Operations;
  redis?: Redis;
  secrets: { internal: string; jwt: string };
  /** Signs and verifies the feedback and infrastructure services' user tokens. */
  tokens: TokenSigner;
  /** The HTTP responses this process has given. */
  requests: RequestStats;
  /** Every change through any surface (kernel/audit): the subgraphs record their mutations in it. */
  audit: AuditTrail;
  close(): Promise<void>;
}

export interface KernelOptions {
  /** Migrations of the services this process hosts (the kernel's are always added). */
  migrations?: Function[];
  /** Apply pending migrations (start does; `npm run migrate` does only this). */
  migrate?: boolean;
  /** Whether other processes must see this one's events (split mode). */
  distributedEvents?: boolean;
  name?: string;
  /** The clock due times are read on; tests pass one they can skip forward (never set by configuration). */
  clock?: Clock;
}

export async function createKernel(config: Config, opts: KernelOptions = {}): Promise<Kernel> {
  const logger = createLogger(config.logLevel, opts.name ? { process: opts.name } : {});
  const database = await resolveDatabase(config, logger);
  const db = createDataSource({
    url: database.url,
    migrations: [...kernelMigrations, ...(opts.migrations ?? [])],
    poolSize: config.dbPoolSize,
    applicationName: opts.name,
  });
  await db.initialize();
  if (opts.migrate) await migrate(db, logger);

  const redis = config.redisUrl ? newRedis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true }) : undefined;
  const transport: EventTransport = config.redisUrl
    ? { kind: 'redis', url: config.redisUrl }
    : opts.distributedEvents
      ? { kind: 'postgres', url: database.url, notify: (channel, payload) => db.query('SELECT pg_notify($1, $2)', [channel, payload]) }
      : { kind: 'memory' };
  const events = await createEventBus(transport, logger);

  const secrets = {
    internal: loadSecret(config.dataDir, 'internal-secret', config.internalSecret),
    jwt: loadSecret(config.dataDir, 'jwt-secret', config.jwtSecret),
  };
  const clock = opts.clock ?? realClock;
  const queue = new Queue({
    db,
    events,
    logger,
    clock,
    concurrency: config.workerConcurrency,
    staleAfterMs: config.workerStaleAfterMs,
    heartbeatMs: Math.min(5_000, Math.floor(config.workerStaleAfterMs / 6)),
    pollMs: config.workerPollMs,
  });
  const webhooks = new WebhookSender({
    db,
    queue,
    logger,
    policy: { allowHttp: config.webhookAllowHttp, allowPrivateNetworks: config.outboundAllowPrivateNetworks },
    encryptionKey: createHash('sha256').update(`webhook-secrets:${secrets.internal}`).digest(),
  });
  webhooks.registerWorker();
  const keys = new ApiKeyService(db, events, logger);
  const audit = new AuditTrail(db, logger);
  // The retention sweep runs where jobs run (the worker role).
  queue.onLifecycle(
    () => audit.startSweeping(config.audit.retentionDays),
    () => audit.stopSweeping(),
  );

  let closed = false;
  return {
    config,
    logger,
    database,
    db,
    events,
    queue,
    clock,
    webhooks,
    keys,
    rateLimiter: new RateLimiter(redis),
    operations: new Operations(),
    llm: createLlmProvider(config.llm, logger),
    redis,
    secrets,
    tokens: new TokenSigner(secrets.jwt),
    requests: new RequestStats(),
    audit,
    async close() {
      if (closed) return;
      closed = true;
      await keys.usage.flush();
      logger.debug('usage flushed');
      await events.close();
      logger.debug('events closed');
      redis?.disconnect();
      await db.destroy();
      logger.debug('database pool closed');
      await database.stop();
    },
  };
}

/** Applies pending migrations; an advisory lock keeps processes starting together from racing. */
async function migrate(db: DataSource, logger: Logger): Promise<void> {
  const lock = db.createQueryRunner();
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(7270001)');
    const applied = await db.runMigrations({ transaction: 'each' });
    if (applied.length) logger.info('applied migrations', { migrations: applied.map((m) => m.name) });
  } finally {
    await lock.query('SELECT pg_advisory_unlock(7270001)').catch(() => undefined);
    await lock.release();
  }
}
