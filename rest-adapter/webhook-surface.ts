import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DOORS_PATH, handedOver, META_LENGTH_HEADER, sendDoorReply } from '../kernel/door';
import { SIGNATURE_HEADER } from '../kernel/auth/handoff';
import { envelopes } from '../kernel/envelopes';
import { AppError, errors } from '../kernel/errors';
import type { Logger } from '../kernel/logger';
import { newRequestId, type Edge } from '../kernel/edge';
import { requestOrigin } from '../kernel/http';
import type { DoorReply, HttpDoor } from '../kernel/subgraph';

/**
 * Inbound workflow webhooks on `/webhook/<path>`: any allowed method and content type, the raw body
 * kept byte for byte (HMAC signatures are computed over it). Each request goes to the engine's door:
 * its trigger in this process, or (a split deployment's gateway) the engine's own server, which
 * answers it on `/doors/webhook` (registerWebhookDoorEndpoint) and whose answer is relayed as it
 * arrives. The trigger's own authentication applies, not API keys. The engine decides the status,
 * headers and body (answers documented in docs/engine.md).
 */

/** Where the engine's door is mounted. */
export const WEBHOOK_PREFIX = '/webhook';
export const WEBHOOK_BODY_LIMIT = 5 * 1024 * 1024;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** What a handed-over request may add to the body: its signed description. */
const DESCRIPTION_LIMIT = 1024 * 1024;

export interface WebhookSurfaceDeps {
  logger: Logger;
  edge: Pick<Edge, 'baseUrl'>;
  /** The engine's door: in this process, or its server's (kernel/door.ts remoteDoor). */
  door: HttpDoor;
}

const fail = (req: FastifyRequest, reply: FastifyReply, err: AppError) =>
  reply
    .code(err.status)
    .header('x-request-id', req.requestId ?? newRequestId())
    .send(envelopes.webhook.error(err));

/** The raw body as bytes, errors in the webhook envelope; `tooLarge` runs when the body is over its limit. */
function rawScope(scope: FastifyInstance, bodyLimit: number, logger: Logger, tooLarge: (req: FastifyRequest) => Promise<AppError>) {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_req, body, done) => done(null, body));
  scope.setErrorHandler(async (err: FastifyError, req, reply) => {
    if (err?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return fail(req, reply, await tooLarge(req));
    if (err instanceof AppError) return fail(req, reply, err);
    if (typeof err?.statusCode === 'number' && err.statusCode < 500) return fail(req, reply, errors.validation([{ field: 'request', message: err.message }]));
    logger.error('unhandled error on /webhook', { err, url: req.url });
    return fail(req, reply, errors.internal(req.requestId));
  });
}

export function registerWebhookSurface(app: FastifyInstance, deps: WebhookSurfaceDeps): void {
  const forward = (req: FastifyRequest, body: Buffer, bodyTooLarge: boolean): Promise<DoorReply> => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const request = {
      path: (req.params as Record<string, string>)['*'] ?? '',
      method: req.method,
      headers,
      query: { ...(req.query as Record<string, unknown>) },
      body,
      bodyTooLarge,
      baseUrl: deps.edge.baseUrl({ origin: requestOrigin(req) }),
    };
    return deps.door.receive(request, req.ip ?? null, req.requestId);
  };

  app.register(
    async (scope) => {
      rawScope(scope, WEBHOOK_BODY_LIMIT, deps.logger, async (req) => {
        // The trigger logs the refusal (rejected, payload_too_large); the answer is 413 whatever the path.
        req.requestId ??= newRequestId();
        await forward(req, Buffer.alloc(0), true).catch(() => undefined);
        return new AppError('PAYLOAD_TOO_LARGE', 'The webhook payload exceeds 5 MB', { limit_bytes: WEBHOOK_BODY_LIMIT });
      });
      scope.setNotFoundHandler((req, reply) => fail(req, reply, errors.notFound('webhook', req.url.split('?')[0]!)));
      scope.route({
        method: [...METHODS],
        url: '/*',
        handler: async (req, reply) => {
          req.requestId = newRequestId();
          const answer = await forward(req, Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0), false);
          // A file a workflow answers with is piped as it is read from where it is kept.
          return sendDoorReply(reply.header('x-request-id', req.requestId), answer);
        },
      });
    },
    { prefix: WEBHOOK_PREFIX },
  );
}

/**
 * The engine's server in a split deployment: `POST /doors/webhook` answers the requests a gateway
 * hands over (kernel/door.ts), signed with the internal secret; anything else is refused.
 */
export function registerWebhookDoorEndpoint(app: FastifyInstance, deps: { door: HttpDoor; secret: string; logger: Logger }): void {
  app.register(async (scope) => {
    rawScope(
      scope,
      WEBHOOK_BODY_LIMIT + DESCRIPTION_LIMIT,
      deps.logger,
      async () => new AppError('PAYLOAD_TOO_LARGE', 'The webhook payload exceeds 5 MB', { limit_bytes: WEBHOOK_BODY_LIMIT }),
    );
    scope.post(`${DOORS_PATH}${WEBHOOK_PREFIX}`, async (req, reply) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const handed = handedOver(raw, req.headers[META_LENGTH_HEADER], req.headers[SIGNATURE_HEADER], deps.secret);
      if (!handed) throw new AppError('unauthorized', 'Only a gateway of this platform hands requests over');
      req.requestId = handed.requestId || newRequestId();
      const answer = await deps.door.receive(handed.request, handed.sourceIp, req.requestId);
      return sendDoorReply(reply.header('x-request-id', req.requestId), answer);
    });
  });
}
