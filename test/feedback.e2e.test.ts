import 'reflect-metadata';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Feedback, Gql } from './support/answers';
import type { Answer as DocumentedAnswer } from './support/openapi-client';
import type { operations } from './support/openapi-types';
import { startTestPlatform, type TestPlatform, type JsonAnswer } from './support/platform';
import { subscribe, wsClient } from './support/subscribe';
import { sleep } from './support/until';

/**
 * The feature-request service from sign-in to a completed request, against
 * small local GitHub and Google servers speaking their OAuth and API protocols.
 */

const API = '/feedback/api/v1';

/** The `data` of the 2xx answer the API description documents for a feedback operation. */
type Data<K extends keyof operations> = DocumentedAnswer<operations[K]> extends { data: infer D } ? D : never;
type Me = Data<'feedbackGetAuthMe'>;
type Session = Data<'feedbackPostAuthLocal'>;
type Votes = Data<'feedbackGetRequestsByIdVotes'>;
type Comment = Data<'feedbackPostRequestsByIdComments'>;
type Requests = Data<'feedbackGetProjectsByIdRequests'>;

const FRONTEND = 'http://frontend.example';
let p: TestPlatform;
let provider: http.Server;
let providerUrl: string;
/** Codes the fake provider was asked to exchange, in order (GitHub's and Google's). */
const exchanged: string[] = [];
/** What the fake's profiles give as the picture: an https URL, or for the code `mallory` a script. */
const pictureOf = (login: string) => (login === 'mallory' ? 'javascript:alert(1)' : `https://avatars.example/${login}`);

/** GitHub and Google in one fake: the code names the person. */
function startProviders(): Promise<void> {
  const people: Record<string, { id: number; login: string; name: string; email: string }> = {};
  provider = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const json = (status: number, v: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      const url = new URL(req.url!, 'http://x');
      const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      const who = people[bearer];
      if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
        const { code, client_secret } = JSON.parse(body);
        exchanged.push(code);
        if (code === 'bad' || client_secret !== 'gh-secret')
          return json(200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
        people[`gh-${code}`] ??= {
          id: 1000 + Object.keys(people).length,
          login: code,
          name: `${code[0].toUpperCase()}${code.slice(1)} Dev`,
          email: `${code}@example.com`,
        };
        return json(200, { access_token: `gh-${code}`, token_type: 'bearer', scope: 'read:user,user:email' });
      }
      if (req.method === 'GET' && url.pathname === '/user' && who)
        return json(200, { id: who.id, login: who.login, name: who.name, avatar_url: pictureOf(who.login) });
      if (req.method === 'GET' && url.pathname === '/user/emails' && who) {
        return json(200, [
          { email: `old-${who.email}`, primary: false, verified: true },
          { email: who.email, primary: true, verified: true },
        ]);
      }
      if (req.method === 'POST' && url.pathname === '/google/token') {
        const form = new URLSearchParams(body);
        if (form.get('grant_type') !== 'authorization_code' || form.get('client_secret') !== 'g-secret') return json(400, { error: 'invalid_grant' });
        const code = form.get('code')!;
        exchanged.push(code);
        people[`g-${code}`] ??= { id: 5000 + Object.keys(people).length, login: code, name: `${code} G`, email: `${code}@gmail.example` };
        return json(200, { access_token: `g-${code}`, token_type: 'Bearer', expires_in: 3599 });
      }
      if (req.method === 'GET' && url.pathname === '/google/userinfo' && who)
        return json(200, { sub: `g${who.id}`, email: who.email, email_verified: true, name: who.name, picture: pictureOf(who.login) });
      json(401, { message: 'Bad credentials' });
    });
  });
  return new Promise((r) => provider.listen(0, '127.0.0.1', () => r()));
}

beforeAll(async () => {
  await startProviders();
  providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
  p = await startTestPlatform({
    GITHUB_CLIENT_ID: 'gh-client',
    GITHUB_CLIENT_SECRET: 'gh-secret',
    GITHUB_OAUTH_URL: providerUrl,
    GITHUB_API_URL: providerUrl,
    GOOGLE_CLIENT_ID: 'g-client',
    GOOGLE_CLIENT_SECRET: 'g-secret',
    GOOGLE_TOKEN_URL: `${providerUrl}/google/token`,
    GOOGLE_USERINFO_URL: `${providerUrl}/google/userinfo`,
    FEEDBACK_FRONTEND_URL: FRONTEND,
    FEEDBACK_LOCAL_SIGNIN: 'true',
  });
});
afterAll(async () => {
  await p?.stop();
  provider?.close();
});

/** Starts a sign-in as a browser does: the state sent to the provider and the cookie that carries it. */
async function started(via: 'github' | 'google' = 'github'): Promise<{ state: string; cookie: string }> {
  const start = await fetch(`${p.url}${API}/auth/${via}`, { redirect: 'manual' });
  assert.equal(start.status, 302);
  const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
  return { state, cookie: start.headers.get('set-cookie')!.split(';')[0]! };
}

/** The provider's redirect back to the callback, with `query` and the cookie given (if any). */
const callback = (via: 'github' | 'google', query: string, cookie?: string) =>
  fetch(`${p.url}${API}/auth/${via}/callback?${query}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });

/** The whole redirect flow; the token from the frontend redirect. */
async function signIn(code: string, via: 'github' | 'google' = 'github'): Promise<string> {
  const { state, cookie } = await started(via);
  const back = await callback(via, `code=${code}&state=${state}`, cookie);
  assert.equal(back.status, 302);
  const to = new URL(back.headers.get('location')!);
  assert.equal(`${to.origin}${to.pathname}`, `${FRONTEND}/auth/callback`);
  const token = to.searchParams.get('token');
  assert.ok(token, `signed in: ${to}`);
  return token!;
}

const call = <T = Feedback<never>>(method: string, path: string, token: string | null, body?: unknown) => p.rest<T>(method, API + path, { key: token, body });

/** Asserts the error envelope; its body, with the `details` (`D`) the test reads. */
function fails<D = Record<string, unknown>>(res: JsonAnswer<unknown>, status: number, code: string) {
  const body = res.body as Feedback<never> & { details: D };
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.success, false);
  assert.equal(body.error, code);
  assert.equal(typeof body.message, 'string');
  return body;
}

let ann: string;
let bob: string;
let cy: string;

describe('sign-in with GitHub and Google', () => {
  test('the redirect flow issues a token; /auth/me; the primary verified address; Google too', async () => {
    const start = await fetch(`${p.url}${API}/auth/github`, { redirect: 'manual' });
    const to = new URL(start.headers.get('location')!);
    assert.equal(`${to.origin}${to.pathname}`, `${providerUrl}/login/oauth/authorize`);
    assert.equal(to.searchParams.get('client_id'), 'gh-client');
    assert.match(start.headers.get('set-cookie')!, /HttpOnly; SameSite=Lax/);
    ann = await signIn('ann');
    bob = await signIn('bob');
    cy = await signIn('cy', 'google');
    const me = await call<Feedback<Me>>('GET', '/auth/me', ann);
    assert.equal(me.status, 200);
    assert.deepEqual(
      { email: me.body.data.email, username: me.body.data.username, name: me.body.data.name },
      { email: 'ann@example.com', username: 'ann', name: 'Ann Dev' },
    );
    assert.deepEqual(me.body.data.subscription, { tier: 'free', status: 'active' });
    assert.equal((await call<Feedback<Me>>('GET', '/auth/me', cy)).body.data.email, 'cy@gmail.example');
    assert.equal((await signIn('ann')) !== ann || true, true, 'signing in again updates the same user');
    fails(await call('GET', '/auth/me', null), 401, 'missing_authorization');
    fails(await call('GET', '/auth/me', 'not.a.jwt'), 401, 'unauthorized');
  });

  test('a missing code or a provider refusal redirects with an error, never a 500', async () => {
    const noCode = await started();
    assert.equal(
      new URL((await callback('github', `state=${noCode.state}`, noCode.cookie)).headers.get('location')!).searchParams.get('error'),
      'missing_code',
    );
    const denied = await started();
    const deniedBack = await callback('github', `error=access_denied&state=${denied.state}`, denied.cookie);
    assert.equal(new URL(deniedBack.headers.get('location')!).searchParams.get('error'), 'access_denied');
    const bad = await started();
    const err = new URL((await callback('github', `code=bad&state=${bad.state}`, bad.cookie)).headers.get('location')!).searchParams;
    assert.equal(err.get('error'), 'upstream_error');
    assert.match(err.get('message')!, /incorrect or expired/);
    assert.equal((await fetch(`${p.url}${API}/auth/gitlab`, { redirect: 'manual' })).status, 404);
  });

  test("the callback takes only the browser's own state, once: else 400 invalid_state, no token, no code exchanged", async () => {
    const refused = async (res: Response, why: string) => {
      assert.equal(res.status, 400, why);
      assert.equal(res.headers.get('location'), null, why);
      const body = (await res.json()) as { success: boolean; error: string; message: unknown };
      assert.deepEqual([body.success, body.error, typeof body.message], [false, 'invalid_state', 'string'], why);
    };
    const before = exchanged.length;
    // Login CSRF: the attacker's own code, in a link the victim's browser follows — no state, no cookie.
    await refused(await callback('github', 'code=mallory'), 'no state and no cookie');
    await refused(await callback('google', 'code=mallory'), 'Google: no state and no cookie');
    const a = await started();
    await refused(await callback('github', 'code=mallory', a.cookie), 'a cookie but no state');
    await refused(await callback('github', `code=mallory&state=${a.state}`), 'a state but no cookie');
    await refused(await callback('github', 'code=mallory&state=forged', a.cookie), 'a state that is not the cookie');
    await refused(await callback('github', `code=mallory&state=${a.state}&state=${a.state}`, a.cookie), 'the state twice');
    // A cookie the attacker chose, with the same value as the state: equal, but never issued here.
    const made = 'x'.repeat(32);
    await refused(await callback('github', `code=mallory&state=${made}`, `fb_oauth_state=${made}`), 'a state this service never issued');
    const g = await started('google');
    await refused(await callback('github', `code=mallory&state=${g.state}`, g.cookie), "Google's state at GitHub's callback");
    assert.equal(exchanged.length, before, 'no code was sent to the provider');

    // The browser's own sign-in, under way through all of that, goes through — once: the same callback again (a replay) is refused.
    const first = await callback('github', `code=eve&state=${a.state}`, a.cookie);
    assert.equal(first.status, 302);
    assert.ok(new URL(first.headers.get('location')!).searchParams.get('token'));
    const replay = await callback('github', `code=eve&state=${a.state}`, a.cookie);
    assert.match(replay.headers.get('set-cookie') ?? '', /^fb_oauth_state=; Max-Age=0/, 'a used-up state: its cookie is dropped');
    await refused(replay, 'the same state again');
    assert.deepEqual(exchanged.slice(before), ['eve']);
  });

  test('a profile picture that is not an http(s) URL is kept as none; an https one as given', async () => {
    for (const via of ['github', 'google'] as const) {
      const me = await call<Feedback<Me>>('GET', '/auth/me', await signIn('mallory', via));
      assert.equal(me.status, 200);
      assert.equal(me.body.data.avatar, null, via);
    }
    assert.equal((await call<Feedback<Me>>('GET', '/auth/me', ann)).body.data.avatar, 'https://avatars.example/ann');
    assert.equal((await call<Feedback<Me>>('GET', '/auth/me', cy)).body.data.avatar, 'https://avatars.example/cy');
  });
});

/** A project as the feedback surface answers it (the fields these tests read). */
interface Project {
  id: string;
  settings: Record<string, boolean>;
  stats: Record<string, number>;
}

/** A feature request as the feedback surface answers it (the fields these tests read). */
interface FeatureRequest {
  id: string;
  status: string;
  priority: string;
  votes_count: number;
  comments_count: number;
}

describe('projects, requests, votes and comments', () => {
  let project: Project;
  let request: FeatureRequest;

  test('projects: defaults, 400 with the missing field, 409 for a taken slug, owner-only changes, moderators, public lists', async () => {
    const created = await call<Feedback<Project>>('POST', '/projects', ann, { name: 'Rocket', description: 'A launcher', slug: 'rocket' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    project = created.body.data;
    assert.deepEqual(project.settings, { is_public: true, allow_anonymous: false, require_approval: true });
    assert.deepEqual(project.stats, { total_requests: 0, total_votes: 0, total_comments: 0 });
    const missing = fails(await call('POST', '/projects', ann, { description: 'x', slug: 'x-1' }), 400, 'validation_error');
    assert.equal(missing.message, 'name: name is required');
    const taken = fails(await call('POST', '/projects', bob, { name: 'Other', description: 'x', slug: 'rocket' }), 409, 'conflict');
    assert.equal(taken.details.field, 'slug');
    fails(await call('POST', '/projects', null, { name: 'x', description: 'x', slug: 'x' }), 401, 'missing_authorization');
    fails(await call('PUT', `/projects/${project.id}`, bob, { name: 'Mine now' }), 403, 'forbidden');
    const renamed = await call<Feedback<Data<'feedbackPutProjectsById'>>>('PUT', `/projects/${project.id}`, ann, {
      name: 'Rocket 2',
      settings: { allow_anonymous: true },
    });
    assert.equal(renamed.body.data.name, 'Rocket 2');
    assert.deepEqual(renamed.body.data.settings, { is_public: true, allow_anonymous: true, require_approval: true });
    const bobId = (await call<Feedback<Me>>('GET', '/auth/me', bob)).body.data.id;
    fails(await call('POST', `/projects/${project.id}/moderators`, bob, { user_id: bobId }), 403, 'forbidden');
    const mod = await call<Feedback<Data<'feedbackPostProjectsByIdModerators'>>>('POST', `/projects/${project.id}/moderators`, ann, { user_id: bobId });
    assert.deepEqual(mod.body.data.moderators, [bobId]);
    const list = await call<Feedback<Data<'feedbackGetProjects'>>>('GET', '/projects?limit=10', null);
    assert.ok(list.body.data.some((x: { slug: unknown }) => x.slug === 'rocket'));
    assert.deepEqual(
      (await call<Feedback<Data<'feedbackGetProjectsMy'>>>('GET', '/projects/my', ann)).body.data.map((x: { slug: unknown }) => x.slug),
      ['rocket'],
    );
    fails(await call('GET', '/projects/00000000-0000-4000-8000-000000000000', null), 404, 'resource_not_found');
  });

  test('a slug raced for by ten creates at once: exactly one 201, every other 409 conflict, one project', async () => {
    const slug = 'contested';
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call<Feedback<Project>>('POST', '/projects', i % 2 ? ann : bob, { name: `Contender ${i}`, description: 'x', slug })),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, ...Array(9).fill(409)], JSON.stringify(answers.map((a) => a.body)));
    for (const a of answers.filter((x) => x.status === 409)) fails(a, 409, 'conflict');
    const winner = answers.find((a) => a.status === 201)!.body.data;
    const listed = (await call<Feedback<Data<'feedbackGetProjects'>>>('GET', '/projects?limit=100', null)).body.data.filter(
      (x: { slug: unknown }) => x.slug === slug,
    );
    assert.deepEqual(
      listed.map((x: { id: unknown }) => x.id),
      [winner.id],
    );
  });

  test('requests: pending under approval, anonymous where allowed, status by owner and moderators along the documented transitions', async () => {
    const missing = fails<{ errors: { field: string }[] }>(
      await call('POST', `/projects/${project.id}/requests`, cy, { description: 'no title' }),
      400,
      'validation_error',
    );
    assert.equal(missing.details.errors[0].field, 'title');
    const submitted = await call<Feedback<FeatureRequest>>('POST', `/projects/${project.id}/requests`, cy, {
      title: 'Dark mode',
      description: 'Please',
      category: 'ui',
      tags: ['theme'],
      priority: 'high',
    });
    assert.equal(submitted.status, 201, JSON.stringify(submitted.body));
    request = submitted.body.data;
    assert.deepEqual([request.status, request.priority, request.votes_count, request.comments_count], ['pending', 'high', 0, 0]);
    const anonymous = await call<Feedback<Data<'feedbackPostProjectsByIdRequests'>>>('POST', `/projects/${project.id}/requests`, null, {
      title: 'Anon idea',
      description: 'x',
    });
    assert.equal(anonymous.status, 201);
    assert.equal(anonymous.body.data.author_id, null);
    fails(await call('PATCH', `/requests/${request.id}/status`, cy, { status: 'approved' }), 403, 'forbidden');
    fails(await call('PATCH', `/requests/${request.id}/status`, bob, { status: 'completed' }), 409, 'conflict');
    const approved = await call<Feedback<FeatureRequest>>('PATCH', `/requests/${request.id}/status`, bob, { status: 'approved' });
    assert.equal(approved.body.data.status, 'approved', 'a moderator approves');
    const edited = await call<Feedback<Data<'feedbackPutRequestsById'>>>('PUT', `/requests/${request.id}`, cy, { title: 'Dark mode everywhere' });
    assert.equal(edited.body.data.title, 'Dark mode everywhere');
    fails(await call('PUT', `/requests/${request.id}`, await signIn('dan'), { title: 'hijack' }), 403, 'forbidden');
    fails(await call('GET', `/projects/${project.id}/requests?limit=101`, null), 400, 'validation_error');
    fails(await call('GET', `/projects/${project.id}/requests?sort=random`, null), 400, 'validation_error');
    // Names every JavaScript object has are not sort columns either (they reached the SQL once: 500).
    for (const sort of ['constructor', 'toString', '__proto__'])
      fails(await call('GET', `/projects/${project.id}/requests?sort=${sort}`, null), 400, 'validation_error');
    const pending = await call<Feedback<Requests>>('GET', `/projects/${project.id}/requests?status=pending`, null);
    assert.deepEqual(
      pending.body.data.requests.map((r: { title: unknown }) => r.title),
      ['Anon idea'],
    );
    assert.deepEqual([pending.body.data.total, pending.body.data.limit, pending.body.data.offset], [1, 20, 0]);
  });

  test('votes: create, switch, the same again 409, delete; pending requests refuse; summaries with and without a token', async () => {
    const up = await call<Feedback<Votes>>('POST', `/requests/${request.id}/vote`, ann, { type: 'upvote' });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.deepEqual([up.body.data.total_votes, up.body.data.up_votes, up.body.data.user_vote], [1, 1, 'upvote']);
    assert.match(up.body.data.user_vote_id, /^[0-9a-f-]{36}$/);
    fails(await call('POST', `/requests/${request.id}/vote`, ann, { type: 'upvote' }), 409, 'already_voted');
    const down = await call<Feedback<Votes>>('POST', `/requests/${request.id}/vote`, ann, { type: 'downvote' });
    assert.deepEqual([down.body.data.up_votes, down.body.data.down_votes, down.body.data.user_vote], [0, 1, 'downvote']);
    const anonymousView = await call<Feedback<Votes>>('GET', `/requests/${request.id}/votes`, null);
    assert.deepEqual(anonymousView.body.data, { total_votes: 1, up_votes: 0, down_votes: 1, user_vote: '', user_vote_id: '' });
    const removed = await call<Feedback<Votes>>('DELETE', `/requests/${request.id}/vote`, ann);
    assert.deepEqual(removed.body.data, { total_votes: 0, up_votes: 0, down_votes: 0, user_vote: '', user_vote_id: '' });
    const pendingId = (await call<Feedback<Requests>>('GET', `/projects/${project.id}/requests?status=pending`, null)).body.data.requests[0].id;
    fails(await call('POST', `/requests/${pendingId}/vote`, ann, { type: 'upvote' }), 409, 'request_not_approved');
    fails(await call('POST', `/requests/${request.id}/vote`, ann, { type: 'sideways' }), 400, 'validation_error');
    fails(await call('POST', `/requests/${request.id}/vote`, null, { type: 'upvote' }), 401, 'missing_authorization');
  });

  test('votes_count stays exact under many concurrent votes', async () => {
    const voters = await Promise.all(Array.from({ length: 12 }, (_, i) => signIn(`voter${i}`)));
    const results = await Promise.all(voters.map((t, i) => call('POST', `/requests/${request.id}/vote`, t, { type: i % 4 === 0 ? 'downvote' : 'upvote' })));
    assert.ok(
      results.every((r) => r.status === 200),
      JSON.stringify(results.map((r) => r.status)),
    );
    // And switches racing each other: the three down-voters change their minds at once.
    const switched = await Promise.all(voters.filter((_, i) => i % 4 === 0).map((t) => call('POST', `/requests/${request.id}/vote`, t, { type: 'upvote' })));
    assert.ok(switched.every((r) => r.status === 200));
    const r = (await call<Feedback<FeatureRequest>>('GET', `/requests/${request.id}`, null)).body.data;
    const s = (await call<Feedback<Votes>>('GET', `/requests/${request.id}/votes`, null)).body.data;
    assert.deepEqual([s.up_votes, s.down_votes, s.total_votes], [12, 0, 12]);
    assert.equal(r.votes_count, 12);
  });

  test('comments: author edits, others may not; owner and moderators delete; comments_count and stats are real', async () => {
    const c = await call<Feedback<Comment>>('POST', `/requests/${request.id}/comments`, cy, { body: 'Also for the docs site' });
    assert.equal(c.status, 201);
    fails(await call('POST', `/requests/${request.id}/comments`, cy, { body: '' }), 400, 'validation_error');
    const edited = await call<Feedback<Comment>>('PUT', `/comments/${c.body.data.id}`, cy, { body: 'Also the docs site, please' });
    assert.equal(edited.body.data.body, 'Also the docs site, please');
    fails(await call('PUT', `/comments/${c.body.data.id}`, bob, { body: 'no' }), 403, 'forbidden');
    const second = await call<Feedback<Comment>>('POST', `/requests/${request.id}/comments`, ann, { body: 'Planned' });
    assert.deepEqual(
      (await call<Feedback<Comment[]>>('GET', `/requests/${request.id}/comments`, null)).body.data.map((x: { body: unknown }) => x.body),
      ['Also the docs site, please', 'Planned'],
    );
    assert.equal((await call<Feedback<FeatureRequest>>('GET', `/requests/${request.id}`, null)).body.data.comments_count, 2);
    assert.equal((await call('DELETE', `/comments/${second.body.data.id}`, bob)).status, 200, 'a moderator deletes');
    const stats = (await call<Feedback<Project>>('GET', `/projects/${project.id}`, null)).body.data.stats;
    assert.deepEqual(stats, { total_requests: 2, total_votes: 12, total_comments: 1 });
  });

  test('GraphQL with the same token, and requestUpdated over graphql-ws on every vote, comment and status change', async () => {
    const gql = await p.graphql<Gql<unknown>>(
      `query($id: ID!) { featureRequest(requestId: $id) { title status votesCount } feedbackMe { username } }`,
      { id: request.id },
      ann,
    );
    assert.deepEqual(gql.body.data, { featureRequest: { title: 'Dark mode everywhere', status: 'approved', votesCount: 12 }, feedbackMe: { username: 'ann' } });
    const client = wsClient(p.url, `Bearer ${ann}`);
    type Updated = { status: string; votesCount: number; commentsCount: number };
    const sub = subscribe<Gql<{ requestUpdated: Updated }>>(
      client,
      'subscription($id: ID!) { requestUpdated(requestId: $id) { status votesCount commentsCount } }',
      { id: request.id },
    );
    try {
      await sleep(300);
      await call('POST', `/requests/${request.id}/vote`, ann, { type: 'downvote' });
      await call('POST', `/requests/${request.id}/comments`, ann, { body: 'Shipping soon' });
      await call('PATCH', `/requests/${request.id}/status`, ann, { status: 'completed' });
      await sub.until((e) => e.data?.requestUpdated?.status === 'completed', 10_000);
    } finally {
      await client.dispose();
    }
    const seen = sub.events.map((m) => m.data?.requestUpdated);
    assert.deepEqual(seen[0], { status: 'approved', votesCount: 12, commentsCount: 1 }, 'first, the request as it was');
    assert.deepEqual(seen.at(-1), { status: 'completed', votesCount: 11, commentsCount: 2 });
    assert.ok(
      seen.some((e) => e.votesCount === 11 && e.status === 'approved'),
      'the vote was seen before the status change',
    );
  });

  test('delete: owner only, and the project goes with its requests', async () => {
    fails(await call('DELETE', `/projects/${project.id}`, bob), 403, 'forbidden');
    assert.equal((await call('DELETE', `/projects/${project.id}`, ann)).status, 200);
    fails(await call('GET', `/requests/${request.id}`, null), 404, 'resource_not_found');
  });
});

describe('local sign-in (no identity provider)', () => {
  test('the admin key mints the session of a person by email; the token works on the feature-request routes', async () => {
    const res = await p.rest<Feedback<Session>>('POST', `${API}/auth/local`, { body: { email: 'Dee@Example.com', name: 'Dee Local' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    const { token, expires_in, user } = res.body.data;
    assert.equal(typeof token, 'string');
    assert.equal(expires_in, 7 * 24 * 3600);
    assert.deepEqual({ email: user.email, username: user.username, name: user.name }, { email: 'dee@example.com', username: 'dee', name: 'Dee Local' });

    const me = await call<Feedback<Me>>('GET', '/auth/me', token);
    assert.equal(me.body.data.id, user.id);
    const project = await call<Feedback<Project>>('POST', '/projects', token, {
      name: 'Local',
      description: 'Tried locally',
      slug: 'local-try',
    });
    assert.equal(project.status, 201, JSON.stringify(project.body));
    assert.equal((await call('PUT', `/projects/${project.body.data.id}`, token, { settings: { require_approval: false } })).status, 200);
    const request = await call<Feedback<FeatureRequest>>('POST', `/projects/${project.body.data.id}/requests`, token, {
      title: 'Dark mode',
      description: 'Please',
    });
    assert.equal(request.status, 201, JSON.stringify(request.body));
    const vote = await call<Feedback<Votes>>('POST', `/requests/${request.body.data.id}/vote`, token, { type: 'upvote' });
    assert.equal(vote.status, 200, JSON.stringify(vote.body));
    assert.equal(vote.body.data.up_votes, 1);

    // The same email again is the same person; GraphQL mints the same kind of session.
    const again = await p.graphql<Gql<{ signInLocally: { token: string; user: { id: string; name: string } } }>>(
      `mutation { signInLocally(email: "dee@example.com", name: "Dee") { token user { id name } } }`,
    );
    assert.equal(again.body.data.signInLocally.user.id, user.id);
    assert.equal(again.body.data.signInLocally.user.name, 'Dee');
    assert.equal((await call<Feedback<Me>>('GET', '/auth/me', again.body.data.signInLocally.token)).body.data.id, user.id);
  });

  test('refused without the admin key, and for bad input', async () => {
    const body = { email: 'eve@example.com', name: 'Eve' };
    fails(await p.rest('POST', `${API}/auth/local`, { key: null, body }), 401, 'missing_authorization');
    const reader = await p.createKey({ permissions: ['agent:read'] });
    fails(await p.rest('POST', `${API}/auth/local`, { key: reader.key, body }), 403, 'insufficient_permissions');
    const person = (await p.rest<Feedback<Session>>('POST', `${API}/auth/local`, { body: { email: 'fay@example.com', name: 'Fay' } })).body.data.token;
    fails(await p.rest('POST', `${API}/auth/local`, { key: person, body }), 403, 'insufficient_permissions');
    const bad = fails<{ errors: { field: string }[] }>(await p.rest('POST', `${API}/auth/local`, { body: { email: 'not-an-email' } }), 400, 'validation_error');
    assert.deepEqual(
      bad.details.errors.map((e: { field: unknown }) => e.field),
      ['email', 'name'],
    );
  });

  test('refused with 503 service_unavailable naming the setting where it is not enabled (the default with DATABASE_URL)', async () => {
    const off = await startTestPlatform();
    try {
      const res = await off.rest('POST', `${API}/auth/local`, { body: { email: 'gus@example.com', name: 'Gus' } });
      const error = fails(res, 503, 'service_unavailable');
      assert.equal(error.details.setting, 'FEEDBACK_LOCAL_SIGNIN');
      assert.match(error.message, /FEEDBACK_LOCAL_SIGNIN/);
    } finally {
      await off.stop();
    }
  });
});
