/**
 * Feature-request service: projects, requests, votes, comments and moderation, for people signed in
 * with GitHub or Google (or sessions minted with the platform admin key).
 *
 * Owns: the `feedback` schema, through its stores.
 * Calls: no other service (GitHub and Google for the OAuth code exchange).
 * Publishes: feedbackRequestUpdated. Sessions are HS256 JWTs (audience `feedback`) valid on both
 * `/feedback/api/v1` and `/graphql`. Serves: the OAuth redirects, which are not JSON.
 */
import './codes';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errors } from '../../kernel/errors';
import type { Kernel } from '../../kernel/platform';
import { anonymousAuditContext } from '../../kernel/audit';
import type { ServiceModule } from '../../kernel/subgraph';
import { FEEDBACK_ENVELOPE } from './envelope';
import { requestOrigin } from '../../kernel/http';
import { isPlatformAdmin } from '../../kernel/auth/principal';
import { FeatureRequestResolver, FeedbackProjectResolver, FeedbackResolver, toUser, type LocalSignIn, type SignIn } from './feedback.resolver';
import type { UserView } from './user.store';
import { LocalSignIn1763769601871 } from './migrations/1763769601871-local-sign-in';
import { FeedbackService, SIGNIN_STATE_TTL_SECONDS } from './feedback.service';
import { Feedback1763769601400 } from './migrations/1763769601400-feedback';
import { SigninStates1763769601834 } from './migrations/1763769601834-signin-states';
import { WebAvatars1763769601835 } from './migrations/1763769601835-web-avatars';
import { FeedbackRowVersions1763769601882 } from './migrations/1763769601882-row-versions';
import { authorizeUrl, configured, exchange, type Provider } from './oauth';
import { TOPIC } from '../../kernel/topics';

export const TOKEN_TTL_SECONDS = 7 * 24 * 3600;
const PREFIX = '/feedback/api/v1';
const STATE_COOKIE = 'fb_oauth_state';

export const feedback: ServiceModule<Kernel> = {
  name: 'feedback',
  surface: 'feedback',
  servesHttp: true,
  migrations: [Feedback1763769601400, SigninStates1763769601834, WebAvatars1763769601835, LocalSignIn1763769601871, FeedbackRowVersions1763769601882],
  subscriptions: [
    {
      field: 'requestUpdated',
      topic: TOPIC.feedbackRequestUpdated,
      filter: (payload: { requestId: string }, args) => payload.requestId === args.requestId,
      query: 'featureRequest',
      version: 'version',
    },
    {
      field: 'requestsUpdated',
      topic: TOPIC.feedbackRequestUpdated,
      filter: (payload: { projectId: string }, args) => payload.projectId === args.projectId,
      query: 'featureRequest',
      version: 'version',
      entity: { arg: 'requestId', id: (payload: { requestId: string }) => payload.requestId },
      // Subscribed to as the project's requests are read (a private project's only by those who may
      // see it); its first state is the board's: most votes first.
      check: () =>
        'query($projectId: ID!, $limit: Int!) { featureRequests(projectId: $projectId, limit: $limit, sort: "votes_count", order: "desc") { requests { id } } }',
      members: (data) => (data as { featureRequests: { requests: { id: string }[] } }).featureRequests.requests.map((r) => r.id),
    },
  ],
  resolvers: [FeedbackResolver, FeedbackProjectResolver, FeatureRequestResolver],
  build: (kernel) => {
    const service = new FeedbackService(kernel.db, kernel.events, kernel.logger);
    const session = async (user: UserView) => {
      const token = await kernel.tokens.issue({ userId: user.id, service: 'feedback', roles: [], permissions: [] }, TOKEN_TTL_SECONDS);
      return { token, expiresIn: TOKEN_TTL_SECONDS, user: toUser(user) };
    };
    const signIn: SignIn = async (provider, code, redirectUri) => {
      if (provider !== 'github' && provider !== 'google') throw errors.field('provider', 'must be github or google');
      if (!code) throw errors.field('code', 'code is required');
      const profile = await exchange(kernel.config, provider, code, redirectUri);
      return session(await service.upsertUser(profile));
    };
    // Off unless configured: whoever holds the admin key could then act as any person.
    const localSignIn: LocalSignIn = async (principal, email, name) => {
      if (!kernel.config.feedbackLocalSignIn) {
        throw new AppError('service_unavailable', 'Local sign-in is disabled: set FEEDBACK_LOCAL_SIGNIN=true to enable it', {
          setting: 'FEEDBACK_LOCAL_SIGNIN',
        });
      }
      if (!isPlatformAdmin(principal))
        throw errors.insufficientPermissions('*', principal.kind === 'apiKey' || principal.kind === 'user' ? principal.permissions : []);
      return session(await service.localUser(email, name));
    };
    return {
      instances: [new FeedbackResolver(service, signIn, localSignIn), new FeedbackProjectResolver(service), new FeatureRequestResolver()],
      http: (app) => {
        app.register(async (scope) => registerSignIn(scope, kernel, service, signIn));
      },
    };
  },
};

/**
 * `GET /auth/{github,google}` starts the flow: a random state, kept by the service (single use,
 * SIGNIN_STATE_TTL_SECONDS), in an HttpOnly cookie and in the provider's redirect. The callback
 * takes a sign-in only when its `state` equals the cookie and is a state the service issued for
 * this provider, unexpired and unused — else 400 `invalid_state` in the feedback envelope, before
 * anything else is read (no code is exchanged: a login CSRF has nothing to replay). Past that it
 * exchanges the code and redirects to `{FEEDBACK_FRONTEND_URL}/auth/callback?token=<JWT>` — or
 * `?error=<code>&message=` when the provider refused or failed (never a 500).
 */
function registerSignIn(scope: FastifyInstance, kernel: Kernel, service: FeedbackService, signIn: SignIn): void {
  const frontend = kernel.config.feedbackFrontendUrl;
  const callbackUri = (req: FastifyRequest, provider: Provider) => `${kernel.config.publicUrl ?? requestOrigin(req) ?? ''}${PREFIX}/auth/${provider}/callback`;
  const clearCookie = `${STATE_COOKIE}=; Max-Age=0; Path=${PREFIX}/auth; HttpOnly; SameSite=Lax`;
  const back = (reply: FastifyReply, query: Record<string, string>) =>
    reply
      .header('set-cookie', clearCookie)
      .header('cache-control', 'no-store')
      .redirect(`${frontend}/auth/callback?${new URLSearchParams(query)}`, 302);
  const provider = (req: FastifyRequest): Provider | undefined => {
    const p = (req.params as { provider: string }).provider;
    return p === 'github' || p === 'google' ? p : undefined;
  };
  const unknown = (reply: FastifyReply) => reply.code(404).send(FEEDBACK_ENVELOPE.error(errors.notFound('identity provider', 'must be github or google')));

  scope.get(`${PREFIX}/auth/:provider`, async (req, reply) => {
    const p = provider(req);
    if (!p) return unknown(reply);
    if (!configured(kernel.config, p)) {
      const err = new AppError('service_unavailable', `Sign-in with ${p} is not configured (${p.toUpperCase()}_CLIENT_ID and _CLIENT_SECRET)`);
      return reply.code(503).send(FEEDBACK_ENVELOPE.error(err));
    }
    const state = await service.newSignInState(p);
    reply.header(
      'set-cookie',
      `${STATE_COOKIE}=${state}; Max-Age=${SIGNIN_STATE_TTL_SECONDS}; Path=${PREFIX}/auth; HttpOnly; SameSite=Lax${req.protocol === 'https' ? '; Secure' : ''}`,
    );
    return reply.header('cache-control', 'no-store').redirect(authorizeUrl(kernel.config, p, callbackUri(req, p), state), 302);
  });

  scope.get(`${PREFIX}/auth/:provider/callback`, async (req, reply) => {
    const p = provider(req);
    if (!p) return unknown(reply);
    const q = req.query as Record<string, unknown>;
    const state = typeof q.state === 'string' ? q.state : '';
    const cookie = cookieOf(req, STATE_COOKIE);
    // The compare first (constant time), so only the browser's own state is ever used up; a
    // callback forged into the browser leaves the cookie of a sign-in it has under way alone.
    const own = state !== '' && cookie !== '' && sameText(state, cookie);
    if (!own || !(await service.takeSignInState(p, state))) {
      if (own) reply.header('set-cookie', clearCookie);
      const err = new AppError('invalid_state', 'This sign-in was not started from this browser, expired or was already used: start again', {
        provider: p,
      });
      return reply.code(400).header('cache-control', 'no-store').send(FEEDBACK_ENVELOPE.error(err));
    }
    if (typeof q.error === 'string') return back(reply, { error: 'access_denied', message: String(q.error_description ?? q.error).slice(0, 300) });
    if (typeof q.code !== 'string' || !q.code) return back(reply, { error: 'missing_code', message: 'The identity provider sent no code' });
    try {
      const redirectUri = callbackUri(req, p);
      const code = q.code;
      // Recorded as signInWithProvider, the mutation this callback's exchange stands beside (field names only), in the person's upsert.
      const session = await kernel.audit.recording(anonymousAuditContext(req), 'feedback', 'signInWithProvider', { provider: p, code, redirectUri }, () =>
        signIn(p, code, redirectUri),
      );
      return back(reply, { token: session.token });
    } catch (err) {
      const e = err instanceof AppError ? err : errors.internal();
      if (!(err instanceof AppError)) kernel.logger.error('sign-in failed', { err, provider: p });
      return back(reply, { error: e.code, message: e.message });
    }
  });
}

/** A cookie of the request, or '' when absent. */
function cookieOf(req: FastifyRequest, name: string): string {
  const pair = (req.headers.cookie ?? '').split(/;\s*/).find((c) => c.startsWith(`${name}=`));
  return pair?.slice(name.length + 1) ?? '';
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
