import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, readBody } from '../test/support/net';
import { AppError } from './errors';
import { createGuardedLookup, guardedFetch, isPrivateAddress, validateCallbackUrl, type OutboundPolicy } from './outbound';

const OPEN: OutboundPolicy = { allowHttp: true, allowPrivateNetworks: true };
const GUARDED: OutboundPolicy = { allowHttp: true, allowPrivateNetworks: false };

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function rejectsWith(code: string, details: Record<string, unknown> = {}) {
  return (err: unknown) => {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    for (const [k, v] of Object.entries(details)) assert.equal(err.details[k], v, `details.${k}`);
    return true;
  };
}

describe('isPrivateAddress', () => {
  const privateOnes = [
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '255.255.255.255',
    '224.0.0.1',
    '198.18.0.1',
    '::1',
    '::',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::a00:1',
    '2002:7f00:1::1',
    '[::1]',
    'not-an-ip',
    '',
  ];
  const publicOnes = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '93.184.216.34', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8'];
  for (const ip of privateOnes) it(`${ip || '(empty)'} is not public`, () => assert.equal(isPrivateAddress(ip), true));
  for (const ip of publicOnes) it(`${ip} is public`, () => assert.equal(isPrivateAddress(ip), false));
});

describe('validateCallbackUrl', () => {
  const strict = { allowHttp: false, allowPrivateNetworks: false };
  it('accepts a public https URL', () => validateCallbackUrl('https://hooks.example.com/x?y=1', strict));
  const cases: [string, string, { allowHttp: boolean; allowPrivateNetworks?: boolean }][] = [
    ['not a url', 'invalid_url', strict],
    ['', 'missing', strict],
    ['http://hooks.example.com/', 'protocol_not_allowed', strict],
    ['ftp://hooks.example.com/', 'protocol_not_allowed', { allowHttp: true }],
    ['https://user:pass@hooks.example.com/', 'credentials_not_allowed', strict],
    ['https://127.0.0.1/', 'private_address', strict],
    ['https://[::ffff:127.0.0.1]/', 'private_address', strict],
    ['https://localhost/', 'private_address', strict],
  ];
  for (const [url, reason, policy] of cases) {
    it(`refuses ${url || '(empty)'} (${reason})`, () =>
      assert.throws(() => validateCallbackUrl(url, policy, 'callback_url'), rejectsWith('WEBHOOK_INVALID', { reason, field: 'callback_url' })));
  }
  it('accepts http and private hosts when the policy allows them', () => {
    validateCallbackUrl('http://127.0.0.1:8080/hook', { allowHttp: true, allowPrivateNetworks: true });
  });
});

describe('createGuardedLookup', () => {
  const call = (resolved: { address: string; family: number }[], all: boolean) =>
    new Promise<unknown>((resolve, reject) =>
      createGuardedLookup({ allowPrivateNetworks: false }, undefined, async () => resolved)('rebind.example', { all }, (err, address, family) =>
        err ? reject(err) : resolve(all ? address : { address, family }),
      ),
    );

  it('refuses a host when any resolved address is private', async () => {
    await assert.rejects(
      call(
        [
          { address: '93.184.216.34', family: 4 },
          { address: '127.0.0.1', family: 4 },
        ],
        true,
      ),
      rejectsWith('WEBHOOK_INVALID', { reason: 'private_address', address: '127.0.0.1' }),
    );
  });
  it('passes public addresses through in both callback shapes', async () => {
    const addrs = [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800::1', family: 6 },
    ];
    assert.deepEqual(await call(addrs, true), addrs);
    assert.deepEqual(await call(addrs, false), { address: '93.184.216.34', family: 4 });
  });
});

describe('guardedFetch', () => {
  let server: http.Server;
  let port: number;
  let base: string;
  const seen: Seen[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      void readBody(req).then((body) => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        if (req.url === '/redirect') {
          res.writeHead(302, { Location: `${base}/elsewhere` }).end();
        } else if (req.url === '/big') {
          res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
          for (let i = 0; i < 3; i++) res.write(Buffer.alloc(1024 * 1024, 0x61));
          res.end();
        } else if (req.url === '/hang') {
          // never answers
        } else {
          res.writeHead(201, { 'Content-Type': 'application/json', 'X-Echo': req.headers['x-test'] ?? '' });
          res.end(JSON.stringify({ ok: true }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses private, loopback, link-local and mapped literal addresses without connecting', async () => {
    const before = seen.length;
    for (const host of ['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '0.0.0.0', '2130706433', '10.0.0.1', '169.254.169.254', '[fe80::1]']) {
      await assert.rejects(guardedFetch(`http://${host}:${port}/`, {}, GUARDED), rejectsWith('WEBHOOK_INVALID', { reason: 'private_address' }), host);
    }
    assert.equal(seen.length, before);
  });

  it('refuses a hostname that resolves to loopback (checked in lookup, also for https)', async () => {
    const before = seen.length;
    await assert.rejects(guardedFetch(`http://localhost:${port}/`, {}, GUARDED), rejectsWith('WEBHOOK_INVALID', { reason: 'private_address' }));
    await assert.rejects(
      guardedFetch(`https://localhost:${port}/`, {}, { allowHttp: false, allowPrivateNetworks: false }),
      rejectsWith('WEBHOOK_INVALID', { reason: 'private_address' }),
    );
    assert.equal(seen.length, before);
  });

  it('refuses http unless allowed, and other protocols always', async () => {
    await assert.rejects(
      guardedFetch(`${base}/`, {}, { allowHttp: false, allowPrivateNetworks: true }),
      rejectsWith('WEBHOOK_INVALID', { reason: 'protocol_not_allowed' }),
    );
    for (const url of ['ftp://127.0.0.1/', 'file:///etc/passwd', 'data:text/plain,hi']) {
      await assert.rejects(guardedFetch(url, {}, OPEN), rejectsWith('WEBHOOK_INVALID', { reason: 'protocol_not_allowed' }), url);
    }
  });

  it('sends method, headers and body and returns status, headers and body', async () => {
    const res = await guardedFetch(`${base}/echo`, { method: 'POST', headers: { 'X-Test': 'yes' }, body: '{"a":1}' }, OPEN);
    assert.equal(res.status, 201);
    assert.equal(res.headers['x-echo'], 'yes');
    assert.deepEqual(JSON.parse(res.body.toString()), { ok: true });
    const last = seen.at(-1)!;
    assert.equal(last.method, 'POST');
    assert.equal(last.body, '{"a":1}');
    assert.equal(last.headers['content-length'], '7');
  });

  it('reaches localhost when private networks are allowed', async () => {
    const res = await guardedFetch(`http://localhost:${port}/echo`, {}, OPEN);
    assert.equal(res.status, 201);
  });

  it('does not follow redirects', async () => {
    const before = seen.length;
    const res = await guardedFetch(`${base}/redirect`, {}, OPEN);
    assert.equal(res.status, 302);
    assert.equal(res.headers.location, `${base}/elsewhere`);
    assert.equal(seen.length, before + 1);
  });

  it('caps the response body (1 MiB by default)', async () => {
    const res = await guardedFetch(`${base}/big`, {}, OPEN);
    assert.equal(res.body.length, 1024 * 1024);
    assert.equal(res.truncated, true);
    const small = await guardedFetch(`${base}/big`, { maxResponseBytes: 10 }, OPEN);
    assert.equal(small.body.toString(), 'a'.repeat(10));
    const whole = await guardedFetch(`${base}/echo`, {}, OPEN);
    assert.equal(whole.truncated, false);
  });

  it('times out', async () => {
    const started = Date.now();
    await assert.rejects(guardedFetch(`${base}/hang`, { timeoutMs: 200 }, OPEN), rejectsWith('timeout'));
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 190 && elapsed < 2000, `took ${elapsed} ms`);
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(
      guardedFetch(`${base}/hang`, { signal: controller.signal, timeoutMs: 5000 }, OPEN),
      rejectsWith('upstream_error', { reason: 'aborted' }),
    );
  });

  it('reports network failures as upstream_error', async () => {
    const closedPort = await freePort();
    await assert.rejects(guardedFetch(`http://127.0.0.1:${closedPort}/`, {}, OPEN), rejectsWith('upstream_error', { reason: 'ECONNREFUSED' }));
  });
});
