import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, verify } from 'node:crypto';
import { NodeFailed, disposeHarness, importRefusal, itemsFailure, runItems, runNode, type Json } from '../../../../../test/support/n8n-harness';
import { prepareBinary } from '../../../nodes';

afterAll(disposeHarness);

const crypto = (parameters: Json, settings: Json = {}) => ({ type: 'n8n-nodes-base.crypto', typeVersion: 1, parameters, ...settings });

/** The test key and values of n8n's own Crypto test workflow (RSA-MD5 signature, MD5 HMAC). */
const N8N_KEY_LINES = [
  'MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu',
  'KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQJAIJLixBy2qpFoS4DSmoEm',
  'o3qGy0t6z09AIJtH+5OeRV1be+N4cDYJKffGzDa88vQENZiRm0GRq6a+HPGQMd2k',
  'TQIhAKMSvzIBnni7ot/OSie2TmJLY4SwTQAevXysE2RbFDYdAiEBCUEaRQnMnbp7',
  '9mxDXDf6AU0cN/RPBjb9qSHDcWZHGzUCIG2Es59z8ugGrDY+pxLQnwfotadxd+Uy',
  'v/Ow5T0q5gIJAiEAyS4RaI9YG8EWx/2w0T67ZUVAw8eOMB6BIUg0Xcu+3okCIBOs',
  '/5OiPgoTdSy7bcF9IGpSE8ZgGKzgYQVZeN97YE00',
];
const N8N_KEY = ['-----BEGIN RSA PRIVATE KEY-----', ...N8N_KEY_LINES, '-----END RSA PRIVATE KEY-----'].join('\n');
const N8N_SECRET = `-----BEGIN RSA PRIVATE KEY-----|${N8N_KEY_LINES.join('')}-----END RSA PRIVATE KEY-----`;

/** Digests of "test" (Python's hashlib, hex and base64). */
const DIGESTS: Record<string, [string, string]> = {
  MD5: ['098f6bcd4621d373cade4e832627b4f6', 'CY9rzUYh03PK3k6DJie09g=='],
  SHA256: ['9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', 'n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg='],
  SHA384: [
    '768412320f7b0aa5812fce428dc4706b3cae50e02a64caa16a782249bfe8efc4b7ef1ccb126255d196047dfedf17a0a9',
    'doQSMg97CqWBL85CjcRwazyuUOAqZMqhangiSb/o78S37xzLEmJV0ZYEff7fF6Cp',
  ],
  SHA512: [
    'ee26b0dd4af7e749aa1a8ee3c10ae9923f618980772e473f8819a5d4940e0db27ac185f8a0e1d5f84f88bc887fd67b143732c304cc5fa9ad8e6f57f50028a8ff',
    '7iaw3Ur350mqGo7jwQrpkj9hiYB3Lkc/iBml1JQODbJ6wYX4oOHV+E+IvIh/1nsUNzLDBMxfqa2Ob1f1ACio/w==',
  ],
  'SHA3-256': ['36f028580bb02cc8272a9a020f4200e346e276ae664e45ee80745574e2f5ab80', 'NvAoWAuwLMgnKpoCD0IA40bidq5mTkXugHRVdOL1q4A='],
  'SHA3-384': [
    'e516dabb23b6e30026863543282780a3ae0dccf05551cf0295178d7ff0f1b41eecb9db3ff219007c4e097260d58621bd',
    '5RbauyO24wAmhjVDKCeAo64NzPBVUc8ClReNf/DxtB7suds/8hkAfE4JcmDVhiG9',
  ],
  'SHA3-512': [
    '9ece086e9bac491fac5c1d1046ca11d737b92a2b2ebd93f005d7b710110c0a678288166e7fbe796883a4f2e9b3ca9f484f521d0ce464345cc1aec96779149c14',
    'ns4IbpusSR+sXB0QRsoR1ze5KisuvZPwBde3EBEMCmeCiBZuf755aIOk8umzyp9IT1IdDORkNFzBrslneRScFA==',
  ],
  SHA1: ['a94a8fe5ccb19ba61c4c0873d391e987982fbbd3', 'qUqP5cyxm6YcTAhz05Hph5gvu9M='],
};

describe('n8n Crypto 1: hash', () => {
  test('defaults: MD5 as hex into "data", next to the item’s fields', async () => {
    const out = await runNode(crypto({ value: 'test' }), [{ a: 1 }]);
    assert.deepEqual(out, [[{ a: 1, data: DIGESTS.MD5![0] }]]);
  });

  for (const [type, [hex, base64]] of Object.entries(DIGESTS)) {
    test(`${type} as hex and as base64`, async () => {
      const out = await runNode(crypto({ action: 'hash', type, value: 'test', encoding: 'hex' }), [{}]);
      assert.deepEqual(out, [[{ data: hex }]]);
      const b64 = await runNode(crypto({ action: 'hash', type, value: 'test', encoding: 'base64' }), [{}]);
      assert.deepEqual(b64, [[{ data: base64 }]]);
    });
  }

  test('the value is an expression per item', async () => {
    const out = await runNode(crypto({ action: 'hash', type: 'SHA256', value: '={{ $json.text }}' }), [{ text: 'test' }, { text: '' }]);
    assert.deepEqual(out, [
      [
        { text: 'test', data: DIGESTS.SHA256![0] },
        { text: '', data: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
      ],
    ]);
  });

  test('an algorithm node:crypto does not know fails, naming it, at its item', async () => {
    await assert.rejects(runNode(crypto({ action: 'hash', type: '={{ "NOPE" }}', value: 'test' }), [{}]), (err: NodeFailed) => {
      assert.match(err.info.message, /Digest method not supported/);
      assert.equal(err.info.details.itemIndex, 0);
      return true;
    });
  });
});

describe('n8n Crypto 1: hmac', () => {
  test('MD5 with n8n’s test secret, as base64 (n8n’s expected value)', async () => {
    const out = await runNode(crypto({ action: 'hmac', value: 'test', secret: N8N_SECRET, encoding: 'base64' }), [{}]);
    assert.deepEqual(out, [[{ data: 'BBXLTeT2o/R6oy5H69Yh7w==' }]]);
  });

  test('SHA256 (RFC 4231 test case 2) as hex, SHA512 as base64', async () => {
    const out = await runNode(crypto({ action: 'hmac', type: 'SHA256', value: 'what do ya want for nothing?', secret: 'Jefe' }), [{}]);
    assert.deepEqual(out, [[{ data: '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843' }]]);
    const b64 = await runNode(
      crypto({ action: 'hmac', type: 'SHA512', value: 'The quick brown fox jumps over the lazy dog', secret: 'key', encoding: 'base64' }),
      [{}],
    );
    assert.deepEqual(b64, [[{ data: 'tCrwkFe6weLUFwjkipAuCbX/fxKrQopP6GZTxz3SSPuC+UilSfe3kaW0GRXuTR7Dk1NX5OIxclDQNyr6Lr7rOg==' }]]);
  });
});

describe('n8n Crypto 1: sign', () => {
  test('RSA-MD5 with n8n’s test key, as base64 (n8n’s expected value)', async () => {
    const out = await runNode(crypto({ action: 'sign', value: 'test', algorithm: 'RSA-MD5', encoding: 'base64', privateKey: N8N_KEY }), [{}]);
    assert.deepEqual(out, [[{ data: 'MVr+iZiOFtHVwO0iKC+CF+QlrZZKcGk7zBvUrWHC1fHBeS6IoWa8B/wrMvazV5H1YR8tbK8baZHD/vUNdfvjiA==' }]]);
  });

  test('RSA-SHA256 as hex: a signature the public key verifies', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const out = await runNode(crypto({ action: 'sign', value: 'hello', algorithm: 'RSA-SHA256', privateKey: pem }), [{}]);
    const signature = out[0]![0]!.data as string;
    assert.match(signature, /^[0-9a-f]{256}$/);
    assert.equal(verify('RSA-SHA256', Buffer.from('hello'), publicKey, Buffer.from(signature, 'hex')), true);
  });

  test('a key that is not a PEM key fails the node', async () => {
    await assert.rejects(runNode(crypto({ action: 'sign', value: 'x', algorithm: 'RSA-SHA256', privateKey: 'not a key' }), [{}]), NodeFailed);
  });
});

describe('n8n Crypto 1: generate', () => {
  test('defaults: a v4 uuid, different per item', async () => {
    const out = await runNode(crypto({ action: 'generate' }), [{}, {}]);
    const [a, b] = out[0]!.map((j) => j.data as string);
    assert.match(a!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(a, b);
  });

  test('hex, base64 (word characters only) and ascii of stringLength; 32 by default', async () => {
    const hex = await runNode(crypto({ action: 'generate', encodingType: 'hex', stringLength: 10 }), [{}]);
    assert.match(hex[0]![0]!.data as string, /^[0-9a-f]{10}$/);
    const b64 = await runNode(crypto({ action: 'generate', encodingType: 'base64', stringLength: 40 }), [{}]);
    assert.match(b64[0]![0]!.data as string, /^[A-Za-z0-9]{40}$/);
    const ascii = await runNode(crypto({ action: 'generate', encodingType: 'ascii' }), [{}]);
    assert.equal((ascii[0]![0]!.data as string).length, 32);
    assert.ok([...(ascii[0]![0]!.data as string)].every((c) => c.charCodeAt(0) < 128));
  });
});

describe('n8n Crypto 1: dataPropertyName', () => {
  test('a field of its own, overwriting one that exists in place', async () => {
    const out = await runNode(crypto({ value: 'test', dataPropertyName: 'hash' }), [{ hash: 'old', b: 2 }]);
    assert.deepEqual(out, [[{ hash: DIGESTS.MD5![0], b: 2 }]]);
    assert.deepEqual(Object.keys(out[0]![0]!), ['hash', 'b']);
  });

  test('a name with dots is one key, as n8n writes it (not a nested field)', async () => {
    const out = await runNode(crypto({ value: 'test', dataPropertyName: 'a.b' }), [{ a: { c: 1 } }]);
    assert.deepEqual(out, [[{ a: { c: 1 }, 'a.b': DIGESTS.MD5![0] }]]);
  });
});

describe('n8n Crypto 1: failures and refusals', () => {
  test('with onError continueRegularOutput a failed item becomes {error}, the others go on', async () => {
    const out = await runNode(crypto({ value: '={{ $json.v }}' }, { onError: 'continueRegularOutput' }), [{ v: 5 }, { v: 'test' }]);
    assert.equal(out[0]!.length, 2);
    assert.match(out[0]![0]!.error as string, /"data" argument must be of type string/);
    assert.deepEqual(out[0]![1], { v: 'test', data: DIGESTS.MD5![0] });
  });

  test('binaryData: hash and hmac digest the bytes of the file in binaryPropertyName', async () => {
    const file = { json: { a: 1 }, binary: { doc: prepareBinary(Buffer.from('test'), { fileName: 'test.txt' }) } };
    const [hashed] = await runItems(crypto({ action: 'hash', type: 'SHA256', binaryData: true, binaryPropertyName: 'doc' }), [file]);
    assert.deepEqual(hashed![0]!.json, { a: 1, data: DIGESTS.SHA256![0] });
    assert.equal(hashed![0]!.binary?.doc?.fileName, 'test.txt');
    const [mac] = await runItems(
      crypto({ action: 'hmac', type: 'MD5', binaryData: true, binaryPropertyName: '={{ "doc" }}', secret: 's', encoding: 'base64' }),
      [file],
    );
    assert.equal(mac![0]!.json.data, createHmac('md5', 's').update('test').digest('base64'));
    assert.equal(importRefusal(crypto({ action: 'hmac', binaryData: true, secret: 's' })), undefined);
  });

  test('binaryData on an item without that file fails naming the field', async () => {
    const failure = await itemsFailure(crypto({ binaryData: '={{ true }}' }), [{ json: {} }]);
    assert.match(failure.message, /no binary field 'data'/);
  });

  test('version 2 takes its secret from a crypto credential: one that names none fails saying so', async () => {
    assert.equal(importRefusal({ type: 'n8n-nodes-base.crypto', typeVersion: 2, parameters: { action: 'hmac' } }), undefined);
    await assert.rejects(
      runNode({ type: 'n8n-nodes-base.crypto', typeVersion: 2, parameters: { action: 'hmac', type: 'SHA256', value: 'x' } }, [{}]),
      (err: NodeFailed) => /takes the secret from a crypto credential, and the node names none/.test(err.info.message),
    );
    // hash and generate need no credential at version 2 either.
    const [[out]] = await runNode({ type: 'n8n-nodes-base.crypto', typeVersion: 2, parameters: { action: 'hash', type: 'SHA256', value: 'abc' } }, [{}]);
    assert.equal(out!.data, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const refusal = importRefusal({ type: 'n8n-nodes-base.crypto', typeVersion: 3, parameters: {} });
    assert.equal(refusal?.reason, 'unsupported_version');
    assert.deepEqual(refusal?.supportedVersions, [1, 2]);
  });
});
