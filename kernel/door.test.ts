import assert from 'node:assert/strict';
import { handedOver } from './door';
import { mac } from './auth/handoff';

const SECRET = 's'.repeat(32);
const request = { path: 'orders/7', method: 'POST', headers: { 'content-type': 'application/json' }, query: { a: '1' }, baseUrl: 'https://platform.example' };

/** A hand-over as a gateway sends it: the signed description, then the body. */
function handOver(described: object, body = '{"order":7}', secret = SECRET) {
  const meta = Buffer.from(JSON.stringify(described));
  return { raw: Buffer.concat([meta, Buffer.from(body)]), length: String(meta.length), signature: mac(meta, secret) };
}

test('a fresh hand-over signed with the internal secret gives the request, its caller and its id back', () => {
  const h = handOver({ ...request, sourceIp: '203.0.113.9', requestId: 'req_1', iat: Date.now() });
  const got = handedOver(h.raw, h.length, h.signature, SECRET);
  assert.deepEqual(got, { request: { ...request, body: Buffer.from('{"order":7}') }, sourceIp: '203.0.113.9', requestId: 'req_1' });
});

test('a hand-over signed more than a minute ago, with another secret, altered, or with a wrong length is refused', () => {
  const fresh = { ...request, sourceIp: null, requestId: 'r', iat: Date.now() };
  const stale = handOver({ ...fresh, iat: Date.now() - 61_000 });
  assert.equal(handedOver(stale.raw, stale.length, stale.signature, SECRET), null);
  const other = handOver(fresh, '{}', 't'.repeat(32));
  assert.equal(handedOver(other.raw, other.length, other.signature, SECRET), null);
  const h = handOver(fresh);
  const altered = Buffer.from(h.raw.toString('latin1').replace('orders/7', 'orders/8'), 'latin1');
  assert.equal(handedOver(altered, h.length, h.signature, SECRET), null);
  for (const length of [undefined, '0', '-1', String(h.raw.length + 1), 'x'])
    assert.equal(handedOver(h.raw, length, h.signature, SECRET), null, `length ${length}`);
  assert.equal(handedOver(h.raw, h.length, undefined, SECRET), null);
  assert.notEqual(handedOver(h.raw, h.length, h.signature, SECRET), null, 'the same hand-over, untouched, is taken');
});
