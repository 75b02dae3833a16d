/**
 * Link service: short links, optionally behind a password or PIN.
 *
 * Owns: the `links` schema, through link.store.ts.
 * Calls: no other service.
 * Publishes: linksChanged (every process's redirect cache). Serves: `GET /links/{slug}` and its gate
 * form straight from that cache, since a redirect must not cost a GraphQL operation (rules as `verifyLink`).
 */
import './codes';
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pageCsp } from '../../kernel/csp';
import { AppError, errors } from '../../kernel/errors';
import { textProblem } from '../../kernel/input-policy';
import type { Kernel } from '../../kernel/platform';
import type { Logger } from '../../kernel/logger';
import { anonymousAuditContext, type AuditTrail } from '../../kernel/audit';
import type { FastGet, ServiceModule } from '../../kernel/subgraph';
import { LINKS_ENVELOPE } from './envelope';
import { gatePage, simplePage, unlockCookie, unlocked } from './link.gate';
import { LinkResolver } from './link.resolver';
import { LinkService, unavailable } from './link.service';
import type { LinkView } from './link.store';
import { Links1763769601300 } from './migrations/1763769601300-links';
import { VisitsCheckedPerBatch1765100000000 } from './migrations/1765100000000-visits-checked-per-batch';

export const links: ServiceModule<Kernel> = {
  name: 'links',
  surface: 'links',
  servesHttp: true,
  migrations: [Links1763769601300, VisitsCheckedPerBatch1765100000000],
  subscriptions: [],
  resolvers: [LinkResolver],
  build: (kernel) => {
    const service = new LinkService(kernel.db, kernel.events, (err) => kernel.logger.warn('link visits not written yet', { err }));
    const cookieKey = createHash('sha256').update(`link-unlock:${kernel.secrets.internal}`).digest();
    return {
      instances: [new LinkResolver(service)],
      http: (app, deps) => {
        app.register(async (scope) => registerPublicLinks(scope, service, cookieKey, kernel.audit, kernel.logger));
        deps.fastGet('/links/', redirectFromMemory(service));
      },
      /** Draining: the visits still buffered are written before the database closes. */
      stop: () => service.flush(),
    };
  },
};

/**
 * The gate page's form posts to itself, and the answer redirects to the destination, which
 * browsers check against form-action too: any http(s) destination, never a script URL.
 */
const GATE_CSP = pageCsp({ 'form-action': "'self' http: https:" });

function registerPublicLinks(scope: FastifyInstance, service: LinkService, cookieKey: Buffer, audit: AuditTrail, logger: Logger): void {
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  const html = (reply: FastifyReply, status: number, page: string) =>
    reply
      .code(status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', GATE_CSP)
      .header('x-content-type-options', 'nosniff')
      .send(page);
  const secure = (req: FastifyRequest) => req.protocol === 'https';
  // An unlock that failed unexpectedly (its audit entry could not be written, the database is
  // gone) answers 500 in the route's own form, as a refusal does: the page, or the links envelope.
  const refusal = (err: unknown): AppError => {
    if (err instanceof AppError) return err;
    logger.error('link unlock failed', { err });
    return errors.internal();
  };

  const visit = (req: FastifyRequest, reply: FastifyReply, link: LinkView) => {
    service.recordVisit(link, visitOf(req.headers));
    return reply.code(302).headers(redirectHeaders(link)).send();
  };

  const find = async (req: FastifyRequest, reply: FastifyReply): Promise<LinkView | undefined> => {
    const slug = (req.params as { slug: string }).slug;
    const link = textProblem(slug) ? null : await service.bySlugCached(slug);
    if (!link) {
      html(reply, 404, simplePage(404, 'Not found', 'There is no such link.'));
      return undefined;
    }
    const gone = unavailable(link);
    if (gone) {
      html(reply, 410, simplePage(410, 'Gone', gone === 'expired' ? 'This link has expired.' : 'This link is no longer active.'));
      return undefined;
    }
    return link;
  };

  scope.get('/links/:slug', async (req, reply) => {
    const link = await find(req, reply);
    if (!link) return reply;
    if (link.protectionType === 'none' || unlocked(cookieKey, link, req.headers.cookie)) return visit(req, reply, link);
    return html(reply, 200, gatePage(link));
  });

  // The gate page's form (works without JavaScript): the same verification as verifyLink.
  scope.post('/links/:slug', async (req, reply) => {
    const link = await find(req, reply);
    if (!link) return reply;
    if (link.protectionType === 'none') return visit(req, reply, link);
    const form = (req.body ?? {}) as Record<string, string>;
    try {
      // Recorded as verifyLink, the mutation this form stands beside (field names only), in the unlock's own transaction.
      const secret = { password: form.password, pin: form.pin };
      await audit.recording(anonymousAuditContext(req), 'links', 'verifyLink', { id: link.id, ...secret }, () => service.verify(link.id, secret, req.ip));
    } catch (thrown) {
      const err = refusal(thrown);
      if (err.code === 'too_many_attempts') reply.header('retry-after', String(err.details.retryAfter));
      return html(
        reply,
        err.status,
        gatePage(link, err.code === 'validation_error' ? `Enter the ${link.protectionType === 'pin' ? 'PIN' : 'password'}.` : err.message),
      );
    }
    reply.header('set-cookie', unlockCookie(cookieKey, link, secure(req)));
    return visit(req, reply, link);
  });

  // The REST verify sets the same cookie, so a client page that verified is not asked again.
  scope.post('/links/api/links/:id/verify', async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === 'string' ? v : v == null ? undefined : String(v));
    try {
      if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body))
        throw errors.field('body', 'must be a JSON object with password or pin');
      const id = (req.params as { id: string }).id;
      const secret = { password: str(body.password), pin: str(body.pin) };
      const link = await audit.recording(anonymousAuditContext(req), 'links', 'verifyLink', { id, ...secret }, () => service.verify(id, secret, req.ip));
      reply.header('set-cookie', unlockCookie(cookieKey, link, secure(req))).header('cache-control', 'no-store');
      return reply.send(LINKS_ENVELOPE.success({ id: link.id, slug: link.slug, destination: link.url }));
    } catch (thrown) {
      const err = refusal(thrown);
      if (err.code === 'too_many_attempts') reply.header('retry-after', String(err.details.retryAfter));
      return reply.code(err.status).send(LINKS_ENVELOPE.error(err));
    }
  });
}

/**
 * `GET /links/{slug}` of a public link the cache holds, answered before routing (ServiceHttpDeps.fastGet):
 * the same checks, visit and answer as the route's, without its framework work. Anything else (a
 * miss, a protected, expired or inactive link, a path the route would decode) goes on to the route.
 */
function redirectFromMemory(service: LinkService): FastGet {
  return (req, res, rest) => {
    const query = rest.indexOf('?');
    // A slug the cache holds a link for is plain [A-Za-z0-9_-]: the raw path segment is the slug itself.
    const link = service.cached(query < 0 ? rest : rest.slice(0, query));
    if (!link || link.protectionType !== 'none' || unavailable(link)) return false;
    service.recordVisit(link, visitOf(req.headers));
    res.writeHead(302, { ...redirectHeaders(link), 'content-length': '0' }).end();
    return true;
  };
}

/** The headers of a redirect to a link's destination, on either path. */
function redirectHeaders(link: LinkView): Record<string, string> {
  return { location: link.url, 'cache-control': 'no-store' };
}

function visitOf(headers: IncomingHttpHeaders) {
  return {
    referrer: header(headers, 'referer'),
    userAgent: header(headers, 'user-agent'),
    country: header(headers, 'cf-ipcountry') ?? header(headers, 'x-country-code'),
  };
}

function header(headers: IncomingHttpHeaders, name: string): string | null {
  const v = headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s && !textProblem(s) ? s : null;
}
