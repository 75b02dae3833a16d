import assert from 'node:assert/strict';
import { EMPTY_SHA256, sha256Hex, signV4 } from './aws-sigv4';

// The examples of AWS's Signature Version 4 test suite and of the S3 API reference ("Signature
// Calculations for the Authorization Header"), with their published signatures.

test('SigV4: the test suite’s get-vanilla request', () => {
  const headers = signV4(
    { method: 'GET', url: new URL('https://example.amazonaws.com/'), date: new Date('2015-08-30T12:36:00Z') },
    { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', region: 'us-east-1', service: 'service' },
  );
  assert.equal(headers['x-amz-date'], '20150830T123600Z');
  assert.equal(
    headers.authorization,
    'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  );
});

const S3 = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', region: 'us-east-1', service: 's3' };

test('SigV4: the S3 reference’s GET Object with a range', () => {
  const headers = signV4(
    { method: 'GET', url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'), headers: { Range: 'bytes=0-9' }, date: new Date('2013-05-24T00:00:00Z') },
    S3,
  );
  assert.equal(headers['x-amz-content-sha256'], EMPTY_SHA256);
  assert.equal(
    headers.authorization,
    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
  );
});

test('SigV4: the S3 reference’s PUT Object, a path with a character to encode and a signed body', () => {
  const body = 'Welcome to Amazon S3.';
  const payloadHash = sha256Hex(body);
  assert.equal(payloadHash, '44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072');
  const headers = signV4(
    {
      method: 'PUT',
      url: new URL('https://examplebucket.s3.amazonaws.com/test$file.text'),
      headers: { Date: 'Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class': 'REDUCED_REDUNDANCY' },
      payloadHash,
      date: new Date('2013-05-24T00:00:00Z'),
    },
    S3,
  );
  assert.equal(
    headers.authorization,
    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd',
  );
});

test('SigV4: a changed header changes the signature', () => {
  const sign = (range: string) =>
    signV4(
      { method: 'GET', url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'), headers: { Range: range }, date: new Date('2013-05-24T00:00:00Z') },
      S3,
    ).authorization;
  assert.notEqual(sign('bytes=0-9'), sign('bytes=0-8'));
});
