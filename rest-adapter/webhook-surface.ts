import { Readable } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ANONYMOUS } from '../kernel/auth/principal';
import { envelopes } from '../kernel/envelopes';
import { AppError, errors, fromGraphQLError } from '../kernel/errors';
import type { Logger } from '../kernel/logger';
import { newRequestId, type Edge } from '../kernel/edge';
import { requestOrigin } from '../kernel/http';
import type { DoorReply, HttpDoor } from '../kernel/subgraph';
import type { OperationGateway } from './surface';

/**
 * Inbound workflow webhooks on `/webhook/<path>`: any allowed method and content type, the raw body
 * kept byte for byte (HMAC signatures are computed over it). Each request goes to the engine's trigger,
 * directly when the engine runs in this process, else as one `receiveWebhook` operation through the
 * gateway as an anonymous caller: the trigger's own authentication applies, not API keys. The engine
 * decides the status, headers and body (answers documented in docs/engine.md).
 */

/** Where the engine's door is mounted. */
export const WEBHOOK_PREFIX = '/webhook';
export const WEBHOOK_BODY_LIMIT = 5 * 1024 * 1024;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** Headers a workflow may not set on the answer: the server owns the framing. */
const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer']);

const RECEIVE = /* GraphQL */ `
  mutation ReceiveWebhook($request: WorkflowWebhookRequestInput!) {
    receiveWebhook(request: $request) {
      status
      headers
      body
    }
  }
`;

export interface WebhookSurfaceDeps {
  gateway: Pick<OperationGateway, 'prepare'>;
  logger: Logger;
  edge: Pick<Edge, 'baseUrl'>;
  /** The engine's door when the engine runs in this process (else its `receiveWebhook` operation runs). */
  door?: HttpDoor;
}

export function registerWebhookSurface(app: FastifyInstance, deps: WebhookSurfaceDeps): void {
  app.register(
    async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_req, body, done) => done(null, body));
      // One fixed operation: prepared once, executed without Apollo Server's per-request pipeline.
      const receive = deps.gateway.prepare(RECEIVE);

      const forward = async (req: FastifyRequest, body: Buffer, bodyTooLarge: boolean): Promise<DoorReply> => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        const baseUrl = deps.edge.baseUrl({ origin: requestOrigin(req) });
        const path = (req.params as Record<string, string>)['*'] ?? '';
        if (deps.door)
          return deps.door.receive(
            { path, method: req.method, headers, query: { ...(req.query as Record<string, unknown>) }, body, bodyTooLarge, baseUrl },
            req.ip ?? null,
          );
        const result = await receive(
          {
            request: {
              path,
              method: req.method,
              headers,
              query: { ...(req.query as Record<string, unknown>) },
              body: body.toString('base64'),
              bodyEncoding: 'base64',
              bodyTooLarge,
            },
          },
          { principal: ANONYMOUS, requestId: req.requestId ?? newRequestId(), ip: req.ip, userAgent: req.headers['user-agent'], baseUrl },
        );
        if (result.errors?.length) throw fromGraphQLError(result.errors[0]!);
        return result.data!.receiveWebhook as DoorReply;
      };

      const fail = (req: FastifyRequest, reply: FastifyReply, err: AppError) =>
        reply
          .code(err.status)
          .header('x-request-id', req.requestId ?? newRequestId())
          .send(envelopes.webhook.error(err));

      scope.setErrorHandler(async (err: FastifyError, req, reply) => {
        if (err?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
          // The trigger logs the refusal (rejected, payload_too_large); the answer is 413 whatever the path.
          await forward(req, Buffer.alloc(0), true).catch(() => undefined);
          return fail(req, reply, new AppError('PAYLOAD_TOO_LARGE', 'The webhook payload exceeds 5 MB', { limit_bytes: WEBHOOK_BODY_LIMIT }));
        }
        if (err instanceof AppError) return fail(req, reply, err);
        if (typeof err?.statusCode === 'number' && err.statusCode < 500)
          return fail(req, reply, errors.validation([{ field: 'request', message: err.message }]));
        deps.logger.error('unhandled error on /webhook', { err, url: req.url });
        return fail(req, reply, errors.internal(req.requestId));
      });
      scope.setNotFoundHandler((req, reply) => fail(req, reply, errors.notFound('webhook', req.url.split('?')[0]!)));

      scope.route({
        method: [...METHODS],
        url: '/*',
        handler: async (req, reply) => {
          req.requestId = newRequestId();
          const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
          const answer = await forward(req, body, false);
          reply.code(answer.status).header('x-request-id', req.requestId);
          for (const [name, value] of Object.entries(answer.headers ?? {})) {
            if (!HOP_BY_HOP.has(name.toLowerCase())) reply.header(name, value);
          }
          const hasType = Object.keys(answer.headers ?? {}).some((h) => h.toLowerCase() === 'content-type');
          if (answer.body === null || answer.body === undefined || answer.body === '') return reply.send();
          // A file a workflow answers with, piped as it is read from where it is kept; a caller gone stops the reads.
          if (answer.body instanceof Readable) {
            const stream = answer.body;
            if (!hasType) reply.header('content-type', 'application/octet-stream');
            if (answer.length !== undefined) reply.header('content-length', String(answer.length));
            reply.raw.on('close', () => stream.destroy());
            return reply.send(stream);
          }
          // A file a workflow answers with (n8n's Respond to Webhook, binary), byte for byte.
          if (Buffer.isBuffer(answer.body)) {
            if (!hasType) reply.header('content-type', 'application/octet-stream');
            return reply.send(answer.body);
          }
          if (typeof answer.body === 'string') {
            if (!hasType) reply.header('content-type', 'text/plain; charset=utf-8');
            return reply.send(answer.body);
          }
          if (!hasType) reply.header('content-type', 'application/json; charset=utf-8');
          return reply.send(JSON.stringify(answer.body));
        },
      });
    },
    { prefix: WEBHOOK_PREFIX },
  );
}
