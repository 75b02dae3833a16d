import type { FastifyReply, FastifyRequest } from 'fastify';
import { EdgeRejection, newRequestId, type Presented } from './edge';
import type { Envelope } from './envelopes';
import { AppError, errors } from './errors';
import type { Logger } from './logger';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once per request by the route that answers it (the REST surfaces, /webhook), read by its error paths. */
    requestId?: string;
  }
}

/**
 * What every HTTP route needs, whoever serves it: the REST surfaces (rest-adapter/), the GraphQL
 * and webhook routes (server/), and the routes a service serves itself (streams, Prometheus text,
 * OAuth callbacks). It lives here because those three never import each other.
 */

export function presentedCredentials(req: FastifyRequest, engineKeyHeader = false): Presented {
  const query = req.query as Record<string, unknown> | undefined;
  return {
    authorization: req.headers.authorization,
    engineKey: engineKeyHeader ? (req.headers['x-engine-api-key'] as string | undefined) : undefined,
    apiKeyHeader: req.headers['x-api-key'] as string | undefined,
    queryKey: typeof query?.api_key === 'string' ? query.api_key : undefined,
    ip: req.ip,
    userAgent: req.headers['user-agent'],
    origin: requestOrigin(req),
  };
}

/** `scheme://host[:port]` of a request as Fastify sees it (X-Forwarded-Proto/Host only when trustProxy). */
export function requestOrigin(req: FastifyRequest): string | undefined {
  const host = req.host;
  return host && /^[A-Za-z0-9.\-:\[\]]+$/.test(host) ? `${req.protocol}://${host}` : undefined;
}

/**
 * The answer to an error in a route a service serves itself (streams, Prometheus text): an edge
 * refusal keeps its headers (limits, Retry-After), an AppError its status, anything else is a
 * logged 500; all in the surface's envelope.
 */
export function sendError(reply: FastifyReply, err: unknown, envelope: Envelope, logger: Logger): FastifyReply {
  const requestId = reply.request.requestId ?? newRequestId();
  let appError: AppError;
  if (err instanceof EdgeRejection) {
    reply.headers(err.headers);
    appError = err.error;
  } else if (err instanceof AppError) {
    appError = err;
  } else {
    logger.error('unhandled error in a service route', { err, url: reply.request.url });
    appError = errors.internal(requestId);
  }
  if (reply.sent || reply.raw.headersSent) {
    reply.raw.end();
    return reply;
  }
  return reply.code(appError.status).send(envelope.error(appError, { requestId, timestamp: new Date().toISOString() }));
}

/** Content-Disposition of a file sent as a download: an ASCII fallback and RFC 5987's UTF-8 form, so any name is safe in the header. */
export function attachment(fileName: string | null): string {
  const name = fileName ?? 'file';
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
