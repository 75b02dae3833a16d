import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerExplorer } from './explorer';

let app: FastifyInstance;
let origin: string;

beforeAll(async () => {
  app = Fastify();
  registerExplorer(app, {
    path: '/graphql',
    fallback: (_req, reply) => reply.code(418).send({ handledBy: 'fallback' }),
  });
  origin = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(() => app.close());

async function getPage() {
  const res = await fetch(`${origin}/graphql`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
  return { res, html: await res.text() };
}

function references(html: string): string[] {
  return [...html.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
}

test('GET /graphql asking for HTML gets the GraphiQL page with a strict CSP', async () => {
  const { res, html } = await getPage();
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(html, /<div id="graphiql"/);
  assert.match(html, /data-endpoint="\/graphql"/);
  assert.match(html, /Bearer &lt;your API key&gt;/);
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  assert.doesNotMatch(html, /<style/, 'no inline style element');
});

test('every script and stylesheet is served by this server', async () => {
  const { html } = await getPage();
  const refs = references(html);
  assert.equal(refs.filter((r) => r.endsWith('.js') || r.includes('.js?')).length, 4);
  assert.equal(refs.filter((r) => r.includes('.css')).length, 2);
  for (const ref of refs) {
    assert.doesNotMatch(ref, /^(https?:)?\/\//, `${ref} points at another host`);
    assert.ok(ref.startsWith('/graphql/explorer/'), ref);
  }
  assert.doesNotMatch(html, /https?:\/\//);
});

test('each referenced asset is served with its content type and a long cache', async () => {
  const { html } = await getPage();
  for (const ref of references(html)) {
    const res = await fetch(`${origin}${ref}`);
    assert.equal(res.status, 200, ref);
    const expected = ref.includes('.css') ? /^text\/css/ : /^text\/javascript/;
    assert.match(res.headers.get('content-type') ?? '', expected, ref);
    assert.match(res.headers.get('cache-control') ?? '', /max-age=31536000/, ref);
    assert.ok((await res.arrayBuffer()).byteLength > 0, ref);
  }
  const graphiql = await fetch(`${origin}${references(html).find((r) => r.includes('graphiql.min.js'))}`);
  assert.match(await graphiql.text(), /createFetcher/);
});

test('unknown explorer assets are 404', async () => {
  const res = await fetch(`${origin}/graphql/explorer/nope.js`);
  assert.equal(res.status, 404);
  await res.arrayBuffer();
});

test('GET /graphql without text/html goes to the fallback', async () => {
  for (const accept of ['application/json', 'application/graphql-response+json, application/json;q=0.9', undefined]) {
    const res = await fetch(`${origin}/graphql?query=%7B__typename%7D`, { headers: accept ? { accept } : {} });
    assert.equal(res.status, 418, String(accept));
    assert.deepEqual(await res.json(), { handledBy: 'fallback' });
    assert.equal(res.headers.get('content-security-policy'), null);
  }
});

test('without a fallback, non-HTML GETs are not found', async () => {
  const bare = Fastify();
  registerExplorer(bare, { path: '/graphql' });
  const res = await bare.inject({ method: 'GET', url: '/graphql', headers: { accept: 'application/json' } });
  assert.equal(res.statusCode, 404);
  await bare.close();
});
