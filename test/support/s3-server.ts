import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sha256Hex, signV4 } from '../../kernel/aws-sigv4';

/**
 * A local S3-compatible object store: path-style PUT, GET and DELETE of objects in one bucket,
 * every request's AWS Signature V4 checked against the one set of keys (403 SignatureDoesNotMatch
 * otherwise), as S3 answers. What it holds and every request it refused are readable by tests.
 */
export interface S3Server {
  readonly url: string;
  readonly bucket: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly region: string;
  /** Objects by key (without the bucket). */
  readonly objects: Map<string, Buffer>;
  /** Keys deleted, in order. */
  readonly deleted: string[];
  /** Requests refused for their signature. */
  readonly refused: { method: string; path: string }[];
  /**
   * From now on every GET sends its first `bytes` bytes, then holds the rest until `release()`:
   * a test sees what its client got while the object is only partly sent.
   */
  holdGets(bytes: number): { release(): void };
  /**
   * From now on every PUT is stored and answered only at `release()`; `held` counts the PUTs
   * waiting: a test lands something else (a second call, a cancel) while files are being kept.
   */
  holdPuts(): { readonly held: number; release(): void };
  close(): Promise<void>;
}

export async function startS3Server(opts: { bucket?: string; region?: string } = {}): Promise<S3Server> {
  const bucket = opts.bucket ?? 'binary-test';
  const region = opts.region ?? 'us-east-1';
  const accessKeyId = 'AKIDLOCALTEST';
  const secretAccessKey = 'local/secret/key/for/tests';
  const objects = new Map<string, Buffer>();
  const refused: { method: string; path: string }[] = [];
  const deleted: string[] = [];
  let hold: { bytes: number; released: Promise<void> } | undefined;
  let putHold: { held: number; released: Promise<void> } | undefined;

  const error = (res: http.ServerResponse, status: number, code: string) => {
    res.writeHead(status, { 'content-type': 'application/xml' });
    res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code></Error>`);
  };

  /** The signature the request should carry, computed over the headers it says it signed. */
  const verify = (req: http.IncomingMessage, body: Buffer): boolean => {
    const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      req.headers.authorization ?? '',
    );
    if (!auth || auth[1] !== accessKeyId || auth[3] !== region) return false;
    const amzDate = String(req.headers['x-amz-date'] ?? '');
    const contentHash = String(req.headers['x-amz-content-sha256'] ?? '');
    if (contentHash !== 'UNSIGNED-PAYLOAD' && contentHash !== sha256Hex(body)) return false;
    const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
    if (!m || amzDate.slice(0, 8) !== auth[2]) return false;
    const date = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
    const signed: Record<string, string> = {};
    for (const name of auth[4]!.split(';')) {
      if (name === 'host') continue;
      const value = req.headers[name];
      if (value === undefined) return false;
      signed[name] = Array.isArray(value) ? value.join(',') : value;
    }
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const expected = signV4(
      { method: req.method ?? 'GET', url, headers: signed, payloadHash: contentHash, date },
      { accessKeyId, secretAccessKey, region, service: 's3' },
    );
    return expected.authorization === req.headers.authorization;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      if (!verify(req, body)) {
        refused.push({ method: req.method ?? '', path });
        return error(res, 403, 'SignatureDoesNotMatch');
      }
      const prefix = `/${bucket}/`;
      if (!path.startsWith(prefix)) return error(res, 404, 'NoSuchBucket');
      const key = path.slice(prefix.length);
      switch (req.method) {
        case 'PUT': {
          const store = () => {
            objects.set(key, body);
            res.writeHead(200, { etag: `"${sha256Hex(body).slice(0, 32)}"` });
            res.end();
          };
          if (!putHold) return store();
          const waiting = putHold;
          waiting.held++;
          void waiting.released.then(() => {
            waiting.held--;
            store();
          });
          return;
        }
        case 'GET': {
          const found = objects.get(key);
          if (!found) return error(res, 404, 'NoSuchKey');
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(found.length) });
          if (!hold) return res.end(found);
          const { bytes, released } = hold;
          res.write(found.subarray(0, bytes));
          void released.then(() => res.end(found.subarray(bytes)));
          return;
        }
        case 'DELETE':
          objects.delete(key);
          deleted.push(key);
          res.writeHead(204);
          return res.end();
        default:
          return error(res, 405, 'MethodNotAllowed');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId,
    secretAccessKey,
    region,
    objects,
    deleted,
    refused,
    holdGets(bytes) {
      let release!: () => void;
      hold = { bytes, released: new Promise<void>((r) => (release = r)) };
      return { release };
    },
    holdPuts() {
      let release!: () => void;
      const waiting = { held: 0, released: new Promise<void>((r) => (release = r)) };
      putHold = waiting;
      return {
        get held() {
          return waiting.held;
        },
        release() {
          if (putHold === waiting) putHold = undefined;
          release();
        },
      };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The platform's settings that keep binary data in this bucket. */
export function s3BinaryEnv(s3: S3Server): Record<string, string> {
  return {
    BINARY_DATA_MODE: 's3',
    BINARY_DATA_S3_ENDPOINT: s3.url,
    BINARY_DATA_S3_BUCKET: s3.bucket,
    BINARY_DATA_S3_REGION: s3.region,
    BINARY_DATA_S3_ACCESS_KEY_ID: s3.accessKeyId,
    BINARY_DATA_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
  };
}
