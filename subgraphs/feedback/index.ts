/**
 * Feature-request service (spec 3, section B) — projects, requests, votes, comments and
 * moderation, for people signed in with GitHub or Google.
 *
 * Owns: the `feedback` schema (users, projects, moderators, requests, votes, comments), through
 *   user/project/request stores.
 * Calls: no other service (GitHub and Google for the OAuth code exchange).
 * Publishes: feedbackRequestUpdated. Sessions are HS256 JWTs (audience `feedback`,
 *   kernel/auth/jwt.ts) valid TOKEN_TTL_SECONDS, accepted on `/feedback/api/v1` and on `/graphql`
 *   alike. Serves: the OAuth redirects (they are not JSON); the code exchange is the
 *   `signInWithProvider` operation's.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errors } from '../../kernel/errors';
import type { Kernel } from '../../kernel/platform';
import type { ServiceModule } from '../../kernel/subgraph';
import { envelopes } from '../../kernel/envelopes';
import { requestOrigin } from '../../kernel/http';
import { FeedbackProjectResolver, FeedbackResolver, toUser, type SignIn } from './feedback.resolver';
import { FeedbackService } from './feedback.service';
import { Feedback1763769601400 } from './migrations/1763769601400-feedback';
import { WebAvatars1763769601835 } from './migrations/1763769601835-web-avatars';
import { authorizeUrl, configured, exchange, type Provider } from './oauth';
import { TOPIC } from '../../kernel/topics';

export const TOKEN_TTL_SECONDS = 7 * 24 * 3600;
const PREFIX = '/feedback/api/v1';
const STATE_COOKIE = 'fb_oauth_state';

export const feedback: ServiceModule<Kernel> = {
  name: 'feedback',
  surface: 'feedback',
  migrations: [Feedback1763769601400, WebAvatars1763769601835],
  subscriptions: [
    {
      field: 'requestUpdated',
      topic: TOPIC.feedbackRequestUpdated,
      filter: (payload: { requestId: string }, args) => payload.requestId === args.requestId,
      query: 'featureRequest',
    },
  ],
  resolvers: [FeedbackResolver, FeedbackProjectResolver],
  build: (kernel) => {
    const service = new FeedbackService(kernel.db, kernel.events, kernel.logger);
    const signIn: SignIn = async (provider, code, redirectUri) => {
      if (provider !== 'github' && provider !== 'google') throw errors.field('provider', 'must be github or google');
      if (!code) throw errors.field('code', 'code is required');
      const profile = await exchange(kernel.config, provider, code, redirectUri);
      const user = await service.upsertUser(profile);
      const token = await kernel.tokens.issue({ userId: user.id, service: 'feedback', roles: [], permissions: [] }, TOKEN_TTL_SECONDS);
      return { token, expiresIn: TOKEN_TTL_SECONDS, user: toUser(user) };
    };
    return {
      instances: [new FeedbackResolver(service, signIn), new FeedbackProjectResolver(service)],
      http: (app) => {
        app.register(async (scope) => registerSignIn(scope, kernel, signIn));
      },
    };
  },
};

/**
 * `GET /auth/{github,google}` starts the flow: a random state in an HttpOnly cookie and in the
 * provider's redirect. The callback checks the state when one comes back, exchanges the code,
 * and redirects to `{FEEDBACK_FRONTEND_URL}/auth/callback?token=<JWT>` — or `?error=<code>&message=`
 * when anything fails (never a 500).
 */
function registerSignIn(scope: FastifyInstance, kernel: Kernel, signIn: SignIn): void {
  const frontend = kernel.config.feedbackFrontendUrl;
  const callbackUri = (req: FastifyRequest, provider: Provider) => `${kernel.config.publicUrl ?? requestOrigin(req) ?? ''}${PREFIX}/auth/${provider}/callback`;
  const back = (reply: FastifyReply, query: Record<string, string>) =>
    reply
      .header('set-cookie', `${STATE_COOKIE}=; Max-Age=0; Path=${PREFIX}/auth; HttpOnly; SameSite=Lax`)
      .header('cache-control', 'no-store')
      .redirect(`${frontend}/auth/callback?${new URLSearchParams(query)}`, 302);
  const provider = (req: FastifyRequest): Provider | undefined => {
    const p = (req.params as { provider: string }).provider;
    return p === 'github' || p === 'google' ? p : undefined;
  };
  const unknown = (reply: FastifyReply) => reply.code(404).send(envelopes.feedback.error(errors.notFound('identity provider', 'must be github or google')));

  scope.get(`${PREFIX}/auth/:provider`, async (req, reply) => {
    const p = provider(req);
    if (!p) return unknown(reply);
    if (!configured(kernel.config, p)) {
      const err = new AppError('service_unavailable', `Sign-in with ${p} is not configured (${p.toUpperCase()}_CLIENT_ID and _CLIENT_SECRET)`);
      return reply.code(503).send(envelopes.feedback.error(err));
    }
    const state = randomBytes(24).toString('base64url');
    reply.header(
      'set-cookie',
      `${STATE_COOKIE}=${state}; Max-Age=600; Path=${PREFIX}/auth; HttpOnly; SameSite=Lax${req.protocol === 'https' ? '; Secure' : ''}`,
    );
    return reply.header('cache-control', 'no-store').redirect(authorizeUrl(kernel.config, p, callbackUri(req, p), state), 302);
  });

  scope.get(`${PREFIX}/auth/:provider/callback`, async (req, reply) => {
    const p = provider(req);
    if (!p) return unknown(reply);
    const q = req.query as Record<string, unknown>;
    if (typeof q.error === 'string') return back(reply, { error: 'access_denied', message: String(q.error_description ?? q.error).slice(0, 300) });
    if (q.state !== undefined) {
      const cookie =
        (req.headers.cookie ?? '')
          .split(/;\s*/)
          .find((c) => c.startsWith(`${STATE_COOKIE}=`))
          ?.slice(STATE_COOKIE.length + 1) ?? '';
      const given = Buffer.from(String(q.state));
      if (!cookie || given.length !== cookie.length || !timingSafeEqual(given, Buffer.from(cookie))) {
        return back(reply, { error: 'invalid_state', message: 'The sign-in was not started from this browser, or it expired: start again' });
      }
    }
    if (typeof q.code !== 'string' || !q.code) return back(reply, { error: 'missing_code', message: 'The identity provider sent no code' });
    try {
      const session = await signIn(p, q.code, callbackUri(req, p));
      return back(reply, { token: session.token });
    } catch (err) {
      const e = err instanceof AppError ? err : errors.internal();
      if (!(err instanceof AppError)) kernel.logger.error('sign-in failed', { err, provider: p });
      return back(reply, { error: e.code, message: e.message });
    }
  });
}
