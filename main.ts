// First: tracing patches node:http, undici, pg and ioredis as they load (a no-op without an OTLP endpoint).
import './kernel/tracing/register';
import 'reflect-metadata';
// Before @apollo/gateway: its telemetry packages, unused, are not loaded.
import './kernel/adapters/apollo-telemetry';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, SUBGRAPH_NAMES, type Config, type SubgraphName } from './kernel/config';
import { createKernel, type Kernel } from './kernel/platform';
import type { Clock } from './kernel/clock';
import type { FastifyInstance } from 'fastify';
import {
  buildSubgraph,
  createExecutor,
  subgraphSpec,
  type BuiltService,
  type BuiltSubgraph,
  type ServiceModule,
  type SubgraphExecutor,
} from './kernel/subgraph';
import { buildSubgraphServer } from './kernel/subgraph-server';
import { remoteDoor } from './kernel/door';
import { composeSupergraphCached, type SubgraphSdl } from './gateway/compose';
import { CredentialWatch } from './kernel/credential-watch';
import { Edge } from './kernel/edge';
import { presentedCredentials } from './kernel/http';
import { PlatformGateway } from './gateway/gateway';
import { attachSubscriptions } from './gateway/subscriptions';
import { surfaces } from './rest-adapter';
import { buildApp, HttpFront, serveDoor } from './server/http';
import { services } from './subgraphs';
import { stopTracing } from './kernel/tracing';
import { trimWhenIdle } from './kernel/memory';

/**
 * One codebase, several process roles:
 *   all (default)     gateway + REST + every subgraph in-process + workers
 *   gateway           gateway + REST; subgraphs named in SUBGRAPH_URLS are remote, others local
 *   subgraph <name>   one subgraph alone on PORT (POST /graphql)
 *   worker            job workers only
 *   migrate           apply migrations and exit
 */
export type Role = 'all' | 'gateway' | 'subgraph' | 'worker' | 'migrate';

export interface RunningPlatform {
  port: number;
  url: string;
  kernel: Kernel;
  /** The services this process hosts, as built (tests and benchmarks reach their parts through them). */
  services: Partial<Record<SubgraphName, BuiltService>>;
  /** The bootstrap key generated at this start, if one was. */
  generatedKey?: string;
  stop(): Promise<void>;
}

const migrations = services.flatMap((s) => s.migrations);
const subscriptionRoutes = services.flatMap((s) => s.subscriptions);

export interface PlatformOptions {
  role?: 'all' | 'gateway';
  /** Subgraphs built elsewhere, composed beside the platform's own (tests use it). */
  extraSubgraphs?: BuiltSubgraph[];
  /** More HTTP routes on the same server (the benchmark's baseline handler). */
  extraRoutes?: (app: FastifyInstance, kernel: Kernel, edge: Edge) => void;
  /** The kernel's clock (kernel/clock.ts); the wall clock unless a test gives one it skips forward. */
  clock?: Clock;
  /** Told each step of the start in a readable line (the command line prints them; the JSON log is unchanged). */
  progress?: (line: string) => void;
}

/** The gateway process: `all` also runs every subgraph and the workers in-process. */
export async function startPlatform(config: Config, opts: PlatformOptions = {}): Promise<RunningPlatform> {
  const role = opts.role ?? 'all';
  const front = new HttpFront();
  const port = await front.listen(config.port, config.host);
  opts.progress?.(databaseStep(config));
  const kernel = await createKernel(config, { migrations, migrate: true, distributedEvents: role !== 'all', name: role, clock: opts.clock });
  const generatedKey = await kernel.keys.ensureBootstrap({ plain: config.bootstrapApiKey, dataDir: config.dataDir });

  const remote = config.subgraphUrls as Record<string, string>;
  const hosted = buildServices(kernel, remote);
  const fronted = frontedServices(kernel, remote);
  const gateway = await startGateway(kernel, hosted, remote, opts.extraSubgraphs);
  const edge = new Edge({
    keys: kernel.keys,
    limiter: kernel.rateLimiter,
    tokens: kernel.tokens,
    publicUrl: config.publicUrl,
    anonymousPerMinute: config.anonymousRateLimit,
  });
  const watch = new CredentialWatch({ edge, events: kernel.events, logger: kernel.logger });
  let draining = false;
  const app = buildApp({
    front,
    gateway,
    edge,
    surfaces,
    logger: kernel.logger,
    trustProxy: config.trustProxy,
    tracesUiUrl: config.tracesUiUrl,
    isDraining: () => draining,
    requests: kernel.requests,
    doors: [
      ...hosted.flatMap(({ built }) => built.doors ?? []),
      ...services
        .filter((module) => remote[module.name])
        .flatMap((module) => (module.doors ?? []).map((prefix) => remoteDoor(prefix, remote[module.name]!, kernel.secrets.internal))),
    ],
  });
  for (const { built } of [...hosted, ...fronted]) {
    await built.http?.(app, {
      admit: (req, opts) => edge.admit(presentedCredentials(req, opts?.engineKeyHeader)),
      watch: (req, context, handlers) => watch.watch(presentedCredentials(req), context, handlers),
      fastGet: (prefix, answer) => front.fastGet(prefix, answer),
    });
  }
  opts.extraRoutes?.(app, kernel, edge);
  // Seeding and recovery before the first request: /health says `starting` until they are done.
  opts.progress?.("Seeding the agents' prompts and resuming work left in flight…");
  await startServices(hosted);
  await front.attach(app);
  const subscriptions = attachSubscriptions({
    server: front.server,
    path: '/graphql',
    gateway,
    edge,
    watch,
    events: kernel.events,
    routes: subscriptionRoutes,
    logger: kernel.logger,
  });
  if (role === 'all') await kernel.queue.start();
  kernel.logger.info('platform ready', { port, role, graphql: `http://localhost:${port}/graphql` });
  trimWhenIdle();

  return {
    port,
    url: `http://127.0.0.1:${port}`,
    kernel,
    services: builtServices(hosted),
    generatedKey,
    async stop() {
      draining = true;
      const log = kernel.logger;
      const forced = setTimeout(() => front.server.closeAllConnections(), 15_000);
      for (const { built } of [...hosted, ...fronted]) built.drain?.();
      await Promise.all([front.close(), subscriptions.close()]);
      clearTimeout(forced);
      log.debug('stopped accepting requests');
      for (const { built } of [...hosted, ...fronted]) await built.stop?.();
      await kernel.queue.stop({ graceMs: 10_000 });
      log.debug('workers stopped');
      await gateway.stop();
      log.debug('gateway stopped');
      await kernel.close();
      log.debug('closed');
    },
  };
}

export async function startSubgraph(config: Config, name: SubgraphName): Promise<RunningPlatform> {
  const service = services.find((s) => s.name === name);
  if (!service) throw new Error(`Unknown subgraph "${name}"; known: ${services.map((s) => s.name).join(', ')}`);
  const kernel = await createKernel(config, { migrations, migrate: true, distributedEvents: true, name: `subgraph:${name}` });
  // Its operations plan over the whole supergraph: the other services run in this process too (kernel.operations).
  const hosted = buildServices(kernel, {});
  const gateway = await startGateway(kernel, hosted, {});
  const app = buildSubgraphServer(gateway.built[name]!, kernel.secrets.internal, kernel.logger);
  const own = hosted.find((h) => h.module === service)!.built;
  for (const door of own.doors ?? []) serveDoor(app, door, kernel.secrets.internal, kernel.logger);
  await own.start?.();
  await app.listen({ port: config.port, host: config.host });
  const port = (app.server.address() as { port: number }).port;
  kernel.logger.info('subgraph ready', { subgraph: name, port });
  trimWhenIdle();
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    kernel,
    services: builtServices(hosted),
    async stop() {
      await app.close();
      await gateway.stop();
      await kernel.close();
    },
  };
}

export async function startWorker(config: Config): Promise<RunningPlatform> {
  const kernel = await createKernel(config, { migrations, migrate: true, distributedEvents: true, name: 'worker' });
  const hosted = buildServices(kernel, {}); // every service's job handlers
  // The jobs call other services' operations (kernel.operations): the worker plans over the supergraph too.
  const gateway = await startGateway(kernel, hosted, {});
  await startServices(hosted);
  await kernel.queue.start();
  kernel.logger.info('worker ready', { concurrency: config.workerConcurrency });
  trimWhenIdle();
  return {
    port: 0,
    url: '',
    kernel,
    services: builtServices(hosted),
    async stop() {
      await kernel.queue.stop({ graceMs: 10_000 });
      await gateway.stop();
      await kernel.close();
    },
  };
}

/**
 * Every process plans over the whole supergraph: the gateway serves clients with it, and every
 * role lets its services call each other's public operations through it (kernel.operations).
 * Subgraphs named in `remote` are reached over HTTP; all others are built and run in-process.
 */
async function startGateway(kernel: Kernel, hosted: Hosted[], remote: Record<string, string>, extra: BuiltSubgraph[] = []) {
  const local: Record<string, SubgraphExecutor> = {};
  const built: Record<string, BuiltSubgraph> = {};
  const sdls: SubgraphSdl[] = [];
  for (const service of services) {
    if (remote[service.name]) sdls.push({ name: service.name, sdl: committedSdl(service.name), url: remote[service.name] });
  }
  for (const h of hosted) built[h.module.name] = await buildSubgraph(subgraphSpec(h.module, h.built, kernel.audit));
  for (const b of [...Object.values(built), ...extra]) {
    local[b.name] = createExecutor(b.schema, kernel.logger);
    // The SDL is printed only if the cache has no supergraph composed from these sources.
    sdls.push({
      name: b.name,
      source: b.source,
      get sdl() {
        return b.sdl;
      },
    });
  }
  const gateway = new PlatformGateway({
    supergraphSdl: composeSupergraphCached(sdls, path.join(kernel.config.dataDir, 'cache')),
    local,
    remote,
    internalSecret: kernel.secrets.internal,
    logger: kernel.logger,
    introspection: kernel.config.graphql.introspection,
  });
  await gateway.start();
  kernel.operations.bind((request, context) => gateway.execute(request, context));
  return Object.assign(gateway, { built });
}

interface Hosted {
  module: ServiceModule<Kernel>;
  built: BuiltService;
}

/** Phases 1 and 2 for the services this process hosts (all but the remote ones): built, job handlers registered. */
function buildServices(kernel: Kernel, remote: Record<string, string>): Hosted[] {
  return services
    .filter((module) => !remote[module.name])
    .map((module) => {
      const built = module.build(kernel);
      built.jobs?.();
      return { module, built };
    });
}

/**
 * The services whose subgraph runs in another process but which serve HTTP of their own (short-link
 * redirects, sign-in redirects, followed log streams): clients reach those routes at the gateway,
 * so the gateway builds the service for them alone — no subgraph, no jobs, no start (the subgraph's
 * process runs those); both work on the same database.
 */
function frontedServices(kernel: Kernel, remote: Record<string, string>): Hosted[] {
  return services.filter((module) => remote[module.name] && module.servesHttp).map((module) => ({ module, built: module.build(kernel) }));
}

function builtServices(hosted: Hosted[]): RunningPlatform['services'] {
  return Object.fromEntries(hosted.map((h) => [h.module.name, h.built]));
}

/** The start phase of the services this process hosts (seeding, recovery, timers). */
async function startServices(hosted: Hosted[]): Promise<void> {
  for (const { built } of hosted) await built.start?.();
}

/** What the database step is about to do, in words: a first start creates the embedded cluster, which takes a while. */
function databaseStep(config: Config): string {
  if (config.databaseUrl) return 'Connecting to PostgreSQL (DATABASE_URL) and applying migrations…';
  const where = displayPath(path.join(config.dataDir, 'postgres'));
  return existsSync(path.join(config.dataDir, 'postgres'))
    ? `Starting the embedded PostgreSQL server (${where}) and applying migrations…`
    : `Creating the database cluster in ${where} (first start: about 20 s), then applying migrations…`;
}

/** A path as the reader typed it: relative to the working directory when it lies inside it. */
function displayPath(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

/** The lines a person reads once the platform answers: where to go, and where the admin key is. */
export function readyBanner(config: Config, platform: Pick<RunningPlatform, 'port' | 'generatedKey'>): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const base = config.publicUrl ?? `http://${host}:${platform.port}`;
  const keyFile = path.join(config.dataDir, 'bootstrap-key');
  const key = platform.generatedKey
    ? `${displayPath(keyFile)} (generated now; also printed once in the log)`
    : config.bootstrapApiKey
      ? 'the value of BOOTSTRAP_API_KEY'
      : existsSync(keyFile)
        ? `${displayPath(keyFile)} (generated at the first start)`
        : 'none generated: this database already holds keys (an admin key creates more)';
  return [
    '',
    `Platform ready at ${base}`,
    `  Dashboard     ${base}/dashboard`,
    `  API docs      ${base}/docs`,
    `  GraphQL       ${base}/graphql`,
    `  Admin key     ${key}`,
    'Ctrl-C stops it cleanly.',
    '',
  ].join('\n');
}

function committedSdl(name: string): string {
  return readFileSync(path.join(__dirname, '..', 'schema', 'subgraphs', `${name}.graphql`), 'utf8');
}

async function cli(): Promise<void> {
  const [roleArg = 'all', name] = process.argv.slice(2);
  const role = roleArg as Role;
  const config = loadConfig();
  // Handlers first: a signal during start (migrations, seeding) drains once start has finished.
  let running: RunningPlatform | undefined;
  let signalled: string | undefined;
  const shutdown = (signal: string) => {
    if (!running) {
      signalled ??= signal;
      return;
    }
    const platform = running;
    running = undefined;
    platform.kernel.logger.info('draining', { signal });
    // The spans of the drain itself are exported before the process exits.
    void platform
      .stop()
      .then(
        () => 0,
        (err) => {
          platform.kernel.logger.error('unclean shutdown', { err });
          return 1;
        },
      )
      .then(async (code) => {
        await stopTracing();
        process.exit(code);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // Readable lines on stdout (the JSON log goes to stderr): always for `all`, the role people start by hand.
  const say = role === 'all' || process.stdout.isTTY ? (line: string) => process.stdout.write(`${line}\n`) : undefined;
  switch (role) {
    case 'all':
    case 'gateway':
      running = await startPlatform(config, { role, progress: say });
      say?.(readyBanner(config, running));
      break;
    case 'subgraph':
      if (!SUBGRAPH_NAMES.includes(name as SubgraphName)) throw new Error(`usage: main.js subgraph <${SUBGRAPH_NAMES.join('|')}>`);
      running = await startSubgraph(config, name as SubgraphName);
      break;
    case 'worker':
      running = await startWorker(config);
      break;
    case 'migrate': {
      const kernel = await createKernel(config, { migrations, migrate: true, name: 'migrate' });
      await kernel.close();
      return;
    }
    default:
      throw new Error(`Unknown role "${roleArg}": all, gateway, subgraph <name>, worker or migrate`);
  }
  if (signalled) shutdown(signalled);
}

if (require.main === module) {
  cli().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
