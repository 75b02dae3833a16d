import 'reflect-metadata';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import type { Gql, Links } from './support/answers';
import { startTestPlatform, type Answer, type TestPlatform } from './support/platform';

/**
 * The link service: links with password or PIN
 * protection, the public short link and its gate page, the per-address lockout, visits, owners.
 */

let p: TestPlatform;
let destination: http.Server;
let dest: string;
let owner: string;
let other: string;
const PASSWORD = 'correct horse battery';
const answers: Answer<unknown>[] = [];

beforeAll(async () => {
  p = await startTestPlatform({ TRUST_PROXY: 'true' });
  destination = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1>Destination ${req.url}</h1>`));
  await new Promise<void>((r) => destination.listen(0, '127.0.0.1', r));
  dest = `http://127.0.0.1:${(destination.address() as AddressInfo).port}/landing`;
  owner = (await p.createKey({ service: 'links', permissions: ['link:write', 'link:read'] })).key;
  other = (await p.createKey({ service: 'links', permissions: ['link:write', 'link:read'] })).key;
  assert.match(owner, /^lnk_live_/);
});
afterAll(async () => {
  await p?.stop();
  destination?.close();
});

/** A link as the links surface answers it (the fields the checks read). */
interface LinkView {
  id: string;
  slug: string;
  url: string;
  destination: string;
  user_id: string;
  is_active: boolean;
  protection_type: string;
  protection_hint: string | null;
  content_classification: string;
  expires_at: string | null;
  visits: number;
}

/** Every answer is kept: the last test scans them all for secrets. */
async function call<T = Links<LinkView>>(method: string, path: string, o: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}) {
  const res = await p.rest<T>(method, path, { key: o.key === undefined ? owner : o.key, body: o.body, headers: o.headers });
  answers.push(res);
  return res;
}
const create = (body: Record<string, unknown>, key = owner) => call('POST', '/links/api/links', { key, body });
const visit = (slug: string, headers: Record<string, string> = {}) => fetch(`${p.url}/links/${slug}`, { redirect: 'manual', headers });
const verify = (id: string, body: Record<string, unknown>, address = '198.51.100.1') =>
  call('POST', `/links/api/links/${id}/verify`, { key: null, body, headers: { 'x-forwarded-for': address } });

describe('POST /links/api/links', () => {
  test('a public link: 201 with the documented fields; GET /links/{slug} redirects 302 and counts the visit', async () => {
    const res = await create({ url: dest, custom_slug: 'docs-home', content_classification: 'work' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    const l = res.body.data;
    assert.deepEqual(
      {
        slug: l.slug,
        url: l.url,
        is_active: l.is_active,
        protection_type: l.protection_type,
        content_classification: l.content_classification,
        expires_at: l.expires_at,
      },
      { slug: 'docs-home', url: dest, is_active: true, protection_type: 'none', content_classification: 'work', expires_at: null },
    );
    assert.match(l.user_id, /^[0-9a-f-]{36}$/);
    const r = await visit('docs-home', { referer: 'https://news.example/', 'user-agent': 'tests/1.0', 'cf-ipcountry': 'NL' });
    assert.equal(r.status, 302);
    assert.equal(r.headers.get('location'), dest);
    const visits = await call<Links<{ visits: { referrer: string | null; user_agent: string | null; country: string | null }[] }>>(
      'GET',
      `/links/api/links/${l.id}/visits`,
    );
    assert.equal(visits.status, 200);
    assert.deepEqual(
      visits.body.data.visits.map((v) => [v.referrer, v.user_agent, v.country]),
      [['https://news.example/', 'tests/1.0', 'NL']],
    );
    assert.equal((await call('GET', `/links/api/links/${l.id}`)).body.data.visits, 1);
  });

  test('a slug visited before it existed: once created, GET /links/{slug} redirects at once (no cached "no such link")', async () => {
    assert.equal((await visit('not-yet')).status, 404);
    assert.equal((await create({ url: dest, custom_slug: 'not-yet' })).status, 201);
    const res = await visit('not-yet');
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), dest);
  });

  test('a link served from memory (its second visit on) answers as the route did, and counts every visit with its own headers', async () => {
    const made = (await create({ url: dest, custom_slug: 'warm-home' })).body.data;
    // The first visit reads the link from the database and fills the cache; the next ones are answered from it.
    const from = (n: number) => ({ referer: `https://ref${n}.example/`, 'user-agent': `tests/${n}`, 'x-country-code': `C${n}` });
    const answers = [];
    for (const [n, path] of ['warm-home', 'warm-home', 'warm-home?utm_source=mail', 'warm-home'].entries()) answers.push(await visit(path, from(n)));
    const seen = answers.map((r) => ({
      status: r.status,
      location: r.headers.get('location'),
      cacheControl: r.headers.get('cache-control'),
      length: r.headers.get('content-length'),
    }));
    assert.deepEqual(seen, Array(4).fill({ status: 302, location: dest, cacheControl: 'no-store', length: '0' }));
    assert.deepEqual(await Promise.all(answers.map((r) => r.text())), ['', '', '', '']);
    const visits = await call<Links<{ visits: { referrer: string | null; user_agent: string | null; country: string | null }[] }>>(
      'GET',
      `/links/api/links/${made.id}/visits`,
    );
    assert.deepEqual(
      visits.body.data.visits.map((v) => [v.referrer, v.user_agent, v.country]).sort(),
      [0, 1, 2, 3].map((n) => [`https://ref${n}.example/`, `tests/${n}`, `C${n}`]),
    );
    assert.equal((await call('GET', `/links/api/links/${made.id}`)).body.data.visits, 4);
    // HEAD, a trailing slash and a percent-encoded slug are the route's: the same link, the same answer.
    assert.equal((await fetch(`${p.url}/links/warm-home`, { method: 'HEAD', redirect: 'manual' })).status, 302);
    assert.equal((await visit('warm-home/')).status, 302);
    assert.equal((await visit('warm%2Dhome')).headers.get('location'), dest);
  });

  test('a link cached while public is refused from the moment it expires: 410, not a redirect', async () => {
    await create({ url: dest, custom_slug: 'short-lived', expires_at: new Date(Date.now() + 1500).toISOString() });
    assert.equal((await visit('short-lived')).status, 302);
    assert.equal((await visit('short-lived')).status, 302, 'answered from memory');
    await new Promise((r) => setTimeout(r, 1700));
    const late = await visit('short-lived');
    assert.equal(late.status, 410);
    assert.equal(late.headers.get('location'), null);
    assert.match(await late.text(), /expired/);
  });

  test('a random slug when none is given; 409 for a taken slug; bad input named field by field', async () => {
    const random = await create({ url: dest });
    assert.equal(random.status, 201);
    assert.match(random.body.data.slug, /^[A-Za-z0-9_-]{3,64}$/);
    const taken = await create({ url: dest, custom_slug: 'docs-home' });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error.code, 'resource_already_exists');
    const fields = async (body: Record<string, unknown>) => {
      const res = await create(body);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.success, false);
      return res.body.error.details.errors!.map((e) => e.field).sort();
    };
    assert.deepEqual(await fields({ url: 'ftp://files.example/x' }), ['url']);
    assert.deepEqual(await fields({ url: dest, custom_slug: 'api' }), ['custom_slug']);
    assert.deepEqual(await fields({ url: dest, password: 'abc' }), ['password']);
    assert.deepEqual(await fields({ url: dest, pin: '12345' }), ['pin']);
    assert.deepEqual(await fields({ url: dest, password: 'long enough', pin: '1234' }), ['pin']);
    assert.deepEqual(await fields({ url: dest, content_classification: 'secret' }), ['content_classification']);
    assert.deepEqual(await fields({ url: dest, remove_protection: true }), ['remove_protection']);
    assert.equal((await create({ url: dest }, '')).status, 401);
    const cpKey = (await p.createKey({ permissions: ['link:write'] })).key;
    assert.equal((await create({ url: dest }, cpKey)).status, 403, 'a control-plane key (without *) is not a link key');
  });
});

describe('protected links', () => {
  let id: string;

  test('password: stored as an argon2id hash; the gate page has no destination, escapes the hint, is not cached', async () => {
    const res = await create({ url: dest, custom_slug: 'secret-plan', password: PASSWORD, protection_hint: '<b>the "usual"</b> & more' });
    assert.equal(res.status, 201);
    id = res.body.data.id;
    assert.equal(res.body.data.protection_type, 'password');
    const [{ secret_hash }] = await p.platform.kernel.db.query(`SELECT secret_hash FROM links.links WHERE id = $1`, [id]);
    assert.match(secret_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    const gate = await visit('secret-plan');
    assert.equal(gate.status, 200);
    assert.equal(gate.headers.get('cache-control'), 'no-store');
    const page = await gate.text();
    assert.ok(!page.includes(dest) && !page.includes('landing'), 'no destination in the gate page');
    assert.ok(page.includes('&#60;b&#62;the &#34;usual&#34;&#60;&#47;b&#62; &#38; more'), 'the hint is HTML-escaped');
    assert.ok(!page.includes('<b>the'));
    assert.ok(!/<script/i.test(page), 'works without JavaScript');
    const lookup = await call('GET', '/links/api/links/slug/secret-plan', { key: null });
    assert.equal(lookup.status, 200);
    assert.equal(lookup.body.data.destination, '');
    assert.equal(lookup.body.data.protection_type, 'password');
    assert.equal((await call('GET', '/links/api/links/slug/docs-home', { key: null })).body.data.destination, dest);
  });

  test('verify: wrong 401 invalid_credentials; right 200 with the destination and an unlock cookie the short link honours', async () => {
    const wrong = await verify(id, { password: 'nope nope' }, '198.51.100.9');
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error.code, 'invalid_credentials');
    const right = await verify(id, { password: PASSWORD }, '198.51.100.9');
    assert.equal(right.status, 200, JSON.stringify(right.body));
    assert.equal(right.body.data.destination, dest);
    const cookie = right.headers.get('set-cookie')!;
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.match(cookie, /Path=\/links\/secret-plan/);
    const back = await visit('secret-plan', { cookie: cookie.split(';')[0]! });
    assert.equal(back.status, 302);
    assert.equal(back.headers.get('location'), dest);
    const forged = await visit('secret-plan', { cookie: cookie.split(';')[0]!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) });
    assert.equal(forged.status, 200, 'a tampered cookie opens nothing');
  });

  test('lockout: 5 failures from one address in 15 minutes, then 429 with Retry-After even with the right password; another address is not affected', async () => {
    const hashing = Date.now();
    for (let i = 0; i < 5; i++) assert.equal((await verify(id, { password: `wrong ${i}` }, '203.0.113.50')).status, 401);
    const hashed = Date.now() - hashing;
    const locked = await verify(id, { password: PASSWORD }, '203.0.113.50');
    assert.equal(locked.status, 429);
    assert.equal(locked.body.error.code, 'too_many_attempts');
    const retry = Number(locked.headers.get('retry-after'));
    assert.ok(retry > 800 && retry <= 900, `Retry-After ${retry}`);
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) assert.equal((await verify(id, { password: PASSWORD }, '203.0.113.50')).status, 429);
    // Against the five refusals that hashed, measured the same way just before (a busy machine slows both).
    const refused = Date.now() - t0;
    assert.ok(refused < hashed / 2, `a locked-out caller is answered without hashing (${refused} ms against ${hashed} ms with hashing)`);
    assert.equal((await verify(id, { password: PASSWORD }, '203.0.113.51')).status, 200, 'another address');
    // Successes are recorded but do not count.
    for (let i = 0; i < 6; i++) assert.equal((await verify(id, { password: PASSWORD }, '203.0.113.52')).status, 200);
    const rows = await p.platform.kernel.db.query(`SELECT ip, success FROM links.attempts WHERE link_id = $1 AND ip = '203.0.113.52'`, [id]);
    assert.equal(rows.length, 6);
    assert.ok(rows.every((r: { success: unknown }) => r.success));
  });

  test('PATCH: pin replaces the password (old cookies no longer open it); remove_protection makes it public', async () => {
    const pin = await call('PATCH', `/links/api/links/${id}`, { body: { pin: '482913', protection_hint: 'the vault' } });
    assert.equal(pin.status, 200, JSON.stringify(pin.body));
    assert.equal(pin.body.data.protection_type, 'pin');
    assert.equal((await verify(id, { password: PASSWORD }, '198.51.100.20')).status, 401);
    assert.equal((await verify(id, { pin: '482913' }, '198.51.100.20')).status, 200);
    const open = await call('PATCH', `/links/api/links/${id}`, { body: { remove_protection: true } });
    assert.equal(open.body.data.protection_type, 'none');
    assert.equal(open.body.data.protection_hint, null);
    assert.equal((await visit('secret-plan')).status, 302, 'the cache followed the change');
    const both = await call('PATCH', `/links/api/links/${id}`, { body: { remove_protection: true, pin: '1234' } });
    assert.equal(both.status, 400);
  });
});

describe('owners, lifetimes and GraphQL', () => {
  test('another key can neither read, change, delete nor list the link', async () => {
    const mine = (await create({ url: dest, custom_slug: 'mine-only' })).body.data;
    for (const [method, path, body] of [
      ['GET', `/links/api/links/${mine.id}`],
      ['PATCH', `/links/api/links/${mine.id}`, { url: dest }],
      ['DELETE', `/links/api/links/${mine.id}`],
      ['GET', `/links/api/links/${mine.id}/visits`],
    ] as const) {
      const res = await call(method, path, { key: other, body });
      assert.equal(res.status, 404, `${method} ${path}`);
    }
    assert.deepEqual((await call<Links<{ links: LinkView[] }>>('GET', '/links/api/links', { key: other })).body.data.links, []);
    const listed = (await call<Links<{ links: LinkView[]; pagination: { total: number } }>>('GET', '/links/api/links?limit=2')).body.data;
    assert.equal(listed.links.length, 2);
    assert.ok(listed.pagination.total >= 4);
    assert.equal((await call('DELETE', `/links/api/links/${mine.id}`)).status, 200);
    assert.equal((await visit('mine-only')).status, 404);
  });

  test('a deleted link takes its visits with it, those stored and those still waiting to be written', async () => {
    const stored = (n: string) => p.platform.kernel.db.query(`SELECT count(*)::int AS n FROM links.visits WHERE link_id = $1`, [n]);
    const kept = (await create({ url: dest, custom_slug: 'gone-stored' })).body.data;
    for (let i = 0; i < 3; i++) assert.equal((await visit('gone-stored')).status, 302);
    // Reading the visits writes those buffered first.
    assert.equal((await call<Links<{ visits: unknown[] }>>('GET', `/links/api/links/${kept.id}/visits`)).body.data.visits.length, 3);
    assert.deepEqual(await stored(kept.id), [{ n: 3 }]);
    assert.equal((await call('DELETE', `/links/api/links/${kept.id}`)).status, 200);
    assert.deepEqual(await stored(kept.id), [{ n: 0 }]);
    // Visited, then deleted before the visits' batch is written (every 100 ms): the batch skips them.
    const late = (await create({ url: dest, custom_slug: 'gone-waiting' })).body.data;
    const other = (await create({ url: dest, custom_slug: 'still-here' })).body.data;
    for (const slug of ['gone-waiting', 'still-here', 'gone-waiting']) assert.equal((await visit(slug)).status, 302);
    assert.equal((await call('DELETE', `/links/api/links/${late.id}`)).status, 200);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(await stored(late.id), [{ n: 0 }]);
    assert.deepEqual(await stored(other.id), [{ n: 1 }], 'the batch still writes the visits of the links that remain');
    assert.equal((await call('GET', `/links/api/links/${other.id}`)).body.data.visits, 1);
  });

  test('expired or inactive: 410; unknown: 404', async () => {
    const expired = (await create({ url: dest, custom_slug: 'too-late', expires_at: new Date(Date.now() - 1000).toISOString() })).body.data;
    assert.equal((await visit('too-late')).status, 410);
    assert.equal((await verify(expired.id, { password: 'whatever' })).status, 410);
    const paused = (await create({ url: dest, custom_slug: 'on-hold' })).body.data;
    assert.equal((await visit('on-hold')).status, 302);
    await call('PATCH', `/links/api/links/${paused.id}`, { body: { is_active: false } });
    assert.equal((await visit('on-hold')).status, 410);
    assert.equal((await visit('no-such-link')).status, 404);
  });

  test('every operation is GraphQL too: createLink, link, links, linkVisits, updateLink, verifyLink, deleteLink', async () => {
    const created = await p.graphql<Gql<{ createLink: { id: string } }>>(
      `mutation { createLink(input: {url: "${dest}", customSlug: "via-gql", pin: "1234"}) { id slug protectionType } }`,
      {},
      owner,
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const gid = created.body.data.createLink.id;
    const read = await p.graphql<Gql<{ link: { slug: string } }>>(
      `query($id: ID!) { link(id: $id) { slug visits } links(limit: 50) { pagination { total } } linkVisits(id: $id) { visits { at } } }`,
      { id: gid },
      owner,
    );
    assert.equal(read.body.data.link.slug, 'via-gql');
    const v = await p.graphql<Gql<{ verifyLink: { destination: string } }>>(
      `mutation($id: ID!) { verifyLink(id: $id, pin: "1234") { destination } }`,
      { id: gid },
      null,
    );
    assert.equal(v.body.data.verifyLink.destination, dest);
    const denied = await p.graphql<Gql<never>>(`query($id: ID!) { link(id: $id) { slug } }`, { id: gid }, null);
    assert.equal(denied.body.errors![0].extensions.code, 'missing_authorization');
    const gone = await p.graphql<Gql<{ deleteLink: { id: string } }>>(`mutation($id: ID!) { deleteLink(id: $id) { id } }`, { id: gid }, owner);
    assert.equal(gone.body.data.deleteLink.id, gid);
  });

  test('no answer ever carried a password, a PIN or a hash', () => {
    const text = JSON.stringify(answers.map((a) => a.body));
    for (const secret of [PASSWORD, '482913', '$argon2']) assert.ok(!text.includes(secret), `no ${secret} in any answer`);
    assert.ok(answers.length > 30);
  });
});

describe('the gate page in a real browser (headless Chromium)', () => {
  test('type the password, land on the destination; a wrong one shows the error on the gate page', async () => {
    await create({ url: dest, custom_slug: 'browser-gate', password: 'open sesame', protection_hint: 'a classic' });
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage({ javaScriptEnabled: false });
      await page.goto(`${p.url}/links/browser-gate`);
      assert.match((await page.textContent('.hint')) ?? '', /a classic/);
      await page.fill('#secret', 'wrong guess');
      await page.click('button[type=submit]');
      assert.match((await page.textContent('.notice')) ?? '', /Wrong password/);
      await page.fill('#secret', 'open sesame');
      await Promise.all([page.waitForURL(dest), page.click('button[type=submit]')]);
      assert.equal(await page.textContent('h1'), 'Destination /landing');
      // The unlock cookie: the next visit goes straight through.
      await page.goto(`${p.url}/links/browser-gate`);
      assert.equal(page.url(), dest);
    } finally {
      await browser.close();
    }
  });
});

describe('visits are batched, and none is lost when the platform drains', () => {
  test('200 redirects, then an immediate stop: every visit is stored and counted', async () => {
    const q = await startTestPlatform();
    const key = (await q.createKey({ service: 'links', permissions: ['link:write', 'link:read'] })).key;
    const made = await q.rest('POST', '/links/api/links', { key, body: { url: 'https://example.com/x', custom_slug: 'drained' } });
    assert.equal(made.status, 201);
    const statuses = await Promise.all(Array.from({ length: 200 }, () => fetch(`${q.url}/links/drained`, { redirect: 'manual' }).then((r) => r.status)));
    assert.ok(statuses.every((s) => s === 302));
    await q.stop({ keepDatabase: true });
    const { Client } = await import('pg');
    const pg = new Client({ connectionString: q.db.url });
    await pg.connect();
    try {
      const [row] = (await pg.query(`SELECT visits, (SELECT count(*)::int FROM links.visits) AS stored FROM links.links WHERE slug = 'drained'`)).rows;
      assert.deepEqual(row, { visits: 200, stored: 200 });
    } finally {
      await pg.end();
      await q.db.drop();
    }
  });
});
