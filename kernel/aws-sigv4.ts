import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 for plain HTTP requests (S3-compatible object stores): the headers a
 * request adds to be signed — x-amz-date, x-amz-content-sha256 and Authorization. No SDK: the
 * platform only PUTs, GETs and DELETEs objects.
 */

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  service: string;
}

export interface SigV4Request {
  method: string;
  url: URL;
  /** Headers sent besides those this adds (all are signed; host is added from the URL). */
  headers?: Record<string, string>;
  /** The body's SHA-256 in hex; `UNSIGNED-PAYLOAD` is allowed by S3. Default: the hash of an empty body. */
  payloadHash?: string;
  /** When it is signed (default: now). */
  date?: Date;
}

export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The request's headers, signed: the given ones plus host, x-amz-date, x-amz-content-sha256 (unless given) and authorization. */
export function signV4(req: SigV4Request, creds: SigV4Credentials): Record<string, string> {
  const amzDate = (req.date ?? new Date())
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const payloadHash = req.payloadHash ?? EMPTY_SHA256;
  const headers: Record<string, string> = { ...req.headers, host: req.url.host };
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  if (!lower.has('x-amz-date')) headers['x-amz-date'] = amzDate;
  if (creds.service === 's3' && !lower.has('x-amz-content-sha256')) headers['x-amz-content-sha256'] = payloadHash;
  const canonical = new Map<string, string>();
  for (const [k, v] of Object.entries(headers)) canonical.set(k.toLowerCase(), v.trim().replace(/\s+/g, ' '));
  const names = [...canonical.keys()].sort();
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    req.method.toUpperCase(),
    canonicalPath(req.url.pathname, creds.service),
    canonicalQuery(req.url.searchParams),
    names.map((n) => `${n}:${canonical.get(n)}\n`).join(''),
    signedHeaders,
    payloadHash,
  ].join('\n');
  const scope = `${day}/${creds.region}/${creds.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', canonical.get('x-amz-date')!, scope, sha256Hex(canonicalRequest)].join('\n');
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${creds.secretAccessKey}`, day), creds.region), creds.service), 'aws4_request');
  const signature = createHmac('sha256', signingKey).update(stringToSign).digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}

/** RFC 3986 encoding as SigV4 wants it (every byte but unreserved characters). */
export function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** S3 signs the path as sent (each segment encoded once); other services normalise it and encode it twice. */
function canonicalPath(pathname: string, service: string): string {
  const segments = pathname.split('/').map((s) => uriEncode(decodeURIComponent(s)));
  const path = segments.join('/') || '/';
  return service === 's3' ? path : path.split('/').map(uriEncode).join('/');
}

function canonicalQuery(params: URLSearchParams): string {
  return [...params]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}
