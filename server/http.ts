import { createServer, ServerResponse, type IncomingMessage, type OutgoingHttpHeaders, type Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { HeaderMap } from '@apollo/server';
import { envelopeOf, envelopes } from '../kernel/envelopes';
import { AppError, errors, tracedDetails } from '../kernel/errors';
import { assertAcceptableJson, assertAcceptableParams } from '../kernel/input-policy';
import { bodyTooLarge, useJsonBodyParser } from '../kernel/json-body';
import type { Logger } from '../kernel/logger';
import { EdgeRejection, newRequestId, type Edge } from '../kernel/edge';
import { presentedCredentials } from '../kernel/http';
import { registerDashboard } from '../gateway/dashboard';
import { registerExplorer } from '../gateway/explorer';
import type { PlatformGateway } from '../gateway/gateway';
import { registerSurface, type Surface } from '../rest-adapter/surface';
import { registerWebhookDoorEndpoint, registerWebhookSurface, WEBHOOK_PREFIX } from '../rest-adapter/webhook-surface';
import { registerDocs, registerLanding } from './docs';
import type { FastGet, HttpDoor } from '../kernel/subgraph';
import type { RequestStats } from '../kernel/request-stats';

/*
 * server/ sits above gateway/ and rest-adapter/: this is where the one HTTP server mounts both
 * (/graphql, the REST surfaces, /webhook, /docs), so the two stay siblings that never import
 * each other. main.ts builds it.
 */

/** GraphQL requests may carry workflow payloads of up to 5 MB. */
const GRAPHQL_BODY_LIMIT = 6 * 1024 * 1024;

/**
 * The one HTTP server of a gateway process. It listens before the platform is ready so that
 * /health can answer 503 while migrations run and the supergraph is composed; once `attach`
 * is called every request goes to the Fastify app.
 */
export class HttpFront {
  readonly server: Server;
  private handler?: (req: IncomingMessage, res: ServerResponse) => void;
  private stats?: RequestStats;
  private readonly fastGets: { prefix: string; answer: FastGet }[] = [];

  constructor() {
    // Every response is counted as its head is written, with the time since its request arrived,
    // by the response itself (node's documented ServerResponse option): no listener or hook chain
    // per request, which cost measurably more on the read paths.
    const front = this;
    class CountedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
      private readonly arrivedAt = performance.now();
      private counted = false;
      override writeHead(statusCode: number, ...rest: unknown[]): this {
        if (!this.counted) {
          this.counted = true;
          front.stats?.record(statusCode, performance.now() - this.arrivedAt);
        }
        // (statusCode, statusMessage?, headers?) or (statusCode, headers?), passed on as given
        return super.writeHead(statusCode, ...(rest as [OutgoingHttpHeaders?]));
      }
    }
    this.server = createServer({ ServerResponse: CountedResponse }, (req, res) => {
      if (this.handler) return this.handler(req, res);
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end(JSON.stringify(req.url === '/health' ? { status: 'starting' } : { error: 'service_unavailable', message: 'The platform is starting' }));
    });
    this.server.keepAliveTimeout = 65_000;
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        const address = this.server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  /** Counts every response from now on (the metrics service reads them). */
  countInto(stats: RequestStats): void {
    this.stats = stats;
  }

  /** GETs under `prefix` that `answer` may answer before any routing (ServiceHttpDeps.fastGet); before `attach`. */
  fastGet(prefix: string, answer: FastGet): void {
    this.fastGets.push({ prefix, answer });
  }

  async attach(app: FastifyInstance): Promise<void> {
    await app.ready();
    const fastGets = this.fastGets;
    if (!fastGets.length) {
      this.handler = (req, res) => app.routing(req, res);
      return;
    }
    this.handler = (req, res) => {
      if (req.method === 'GET') {
        const url = req.url!;
        for (const { prefix, answer } of fastGets) {
          if (!url.startsWith(prefix)) continue;
          try {
            if (answer(req, res, url.slice(prefix.length))) return;
          } catch {
            // Nothing answered (an answer's first step is to decide): the routes answer, and report what fails there.
          }
          if (res.headersSent) return;
        }
      }
      app.routing(req, res);
    };
  }

  /** Stop accepting connections; in-flight requests finish. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }
}

export interface AppDeps {
  front: HttpFront;
  gateway: PlatformGateway;
  edge: Edge;
  surfaces: Surface[];
  logger: Logger;
  trustProxy: boolean;
  isDraining: () => boolean;
  /** Counts every response (the metrics service reads it). */
  requests?: RequestStats;
  /** TRACES_UI_URL, for the dashboard's trace links. */
  tracesUiUrl?: string;
  /** The raw HTTP doors of the services this process hosts: each handed to the surface serving its prefix. */
  doors?: HttpDoor[];
}

export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    serverFactory: (handler) => {
      void handler;
      return deps.front.server;
    },
    trustProxy: deps.trustProxy,
    logger: false,
    bodyLimit: GRAPHQL_BODY_LIMIT,
    return503OnClosing: false,
    // A trailing slash names the same resource as the path without it, on every surface
    // and page (served, not redirected: a redirected POST would lose its body).
    routerOptions: { ignoreTrailingSlash: true },
    // A path that is not valid percent-encoding (`/dashboard/%`), or a path parameter longer than
    // any id (over 100 characters), names no resource: 404, as any unknown path.
    // (Its only other error is an async route constraint's, and no route has one.)
    frameworkErrors: (_err, req, reply) => {
      void notFound(req as FastifyRequest, reply as FastifyReply);
    },
  });

  /**
   * A path no route serves: 404 in the envelope of the surface its prefix falls under (a surface
   * answers its own unknown paths; this one sees those it could not route), else in the /v1
   * envelope with code NOT_FOUND — never a framework's default body.
   */
  const notFound = (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0]!;
    const meta = { requestId: newRequestId(), timestamp: new Date().toISOString() };
    const surface = deps.surfaces.find((s) => s.prefix && (path === s.prefix || path.startsWith(`${s.prefix}/`)));
    if (surface) return reply.code(404).send(envelopeOf(surface.envelope).error(errors.notFound('route', `${req.method} ${path}`), meta));
    return reply.code(404).send(envelopes.v1.error(new AppError('NOT_FOUND', `Nothing is served at ${req.method} ${path}`, { path }), meta));
  };
  app.setNotFoundHandler(notFound);

  if (deps.requests) deps.front.countInto(deps.requests);

  app.get('/health', async (_req, reply) => (deps.isDraining() ? reply.code(503).send({ status: 'draining' }) : reply.send({ status: 'ok' })));

  const graphql = async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.method === 'GET') acceptableQueryString(req.query as Record<string, unknown>);
    const requestId = newRequestId();
    let admission;
    try {
      admission = await deps.edge.admit(presentedCredentials(req), requestId);
    } catch (err) {
      if (!(err instanceof EdgeRejection)) throw err;
      return sendGraphQLError(reply.headers(err.headers), err.error);
    }
    const document = req.method === 'GET' ? (req.query as Record<string, unknown>)?.query : (req.body as Record<string, unknown> | undefined)?.query;
    if (typeof document === 'string' && /__schema|__type\b/.test(document)) {
      try {
        await deps.edge.admitIntrospection(admission.context, admission.headers);
      } catch (err) {
        if (!(err instanceof EdgeRejection)) throw err;
        return sendGraphQLError(reply.headers(err.headers), err.error);
      }
    }
    reply.headers(admission.headers);
    if (req.method === 'POST') {
      const answer = await deps.gateway.executeHttp(req.body, admission.context);
      if (answer) {
        return reply.code(answer.status).header('content-type', 'application/json; charset=utf-8').header('cache-control', 'no-store').send(answer.body);
      }
    }
    const headers = new HeaderMap();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const response = await deps.gateway.apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: {
        method: req.method,
        headers,
        search: req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '',
        body: req.body,
      },
      context: async () => admission.context,
    });
    for (const [name, value] of response.headers) reply.header(name, value);
    reply.code(response.status ?? 200);
    if (response.body.kind === 'complete') return reply.send(response.body.string);
    // Incremental delivery: stream the chunks as Apollo produces them.
    reply.hijack();
    reply.raw.writeHead(response.status ?? 200, Object.fromEntries(response.headers));
    for await (const chunk of response.body.asyncIterator) reply.raw.write(chunk);
    reply.raw.end();
  };

  useJsonBodyParser(app);
  app.post('/graphql', graphql);
  registerExplorer(app, { path: '/graphql', fallback: graphql });
  registerDashboard(app, { tracesUiUrl: deps.tracesUiUrl });
  registerLanding(app);

  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err instanceof AppError) return sendGraphQLError(reply, err);
    const tooLarge = bodyTooLarge(err, GRAPHQL_BODY_LIMIT);
    if (tooLarge) return sendGraphQLError(reply, tooLarge);
    deps.logger.error('unhandled error on /graphql', { err });
    return sendGraphQLError(reply, new AppError('internal_server_error', 'An internal error occurred'));
  });

  for (const surface of deps.surfaces) registerSurface(app, surface, deps);
  registerDocs(app, deps.surfaces, deps.gateway.schema);
  const unserved = deps.doors?.find((d) => d.prefix !== WEBHOOK_PREFIX);
  if (unserved) throw new Error(`No surface serves the door ${unserved.prefix}`);
  const webhooks = deps.doors?.find((d) => d.prefix === WEBHOOK_PREFIX);
  if (webhooks) registerWebhookSurface(app, { ...deps, door: webhooks });
  return app;
}

/** A service's door on its own server (split mode), for the gateways that hand its requests over. */
export function serveDoor(app: FastifyInstance, door: HttpDoor, secret: string, logger: Logger): void {
  if (door.prefix !== WEBHOOK_PREFIX) throw new Error(`No surface serves the door ${door.prefix}`);
  registerWebhookDoorEndpoint(app, { door, secret, logger });
}

/** GET /graphql carries the operation in the query string: the same input policy as a JSON body. */
function acceptableQueryString(query: Record<string, unknown>): void {
  assertAcceptableParams(query);
  for (const name of ['variables', 'extensions']) {
    const raw = query[name];
    if (typeof raw !== 'string') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      continue; // Apollo answers malformed JSON itself
    }
    assertAcceptableJson(parsed, name);
  }
}

function sendGraphQLError(reply: FastifyReply, err: AppError) {
  return reply.code(err.status).send({
    errors: [{ message: err.message, extensions: { code: err.code, http: { status: err.status }, details: tracedDetails(err.details) } }],
  });
}
