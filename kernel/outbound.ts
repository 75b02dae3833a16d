import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { AppError } from './errors';

/**
 * Outbound HTTP for everything that calls a URL a client chose (webhooks, workflow HTTP nodes):
 * the SSRF guard and a small client built on it.
 *
 * The address check runs inside the socket's `lookup`, i.e. on the addresses the connection is
 * actually made to, so a hostname that resolves to a public address at validation time and to a
 * private one at connect time (DNS rebinding) is still refused. No connection is reused (agent:
 * false), so every request resolves and checks again.
 */

export interface OutboundPolicy {
  /** Allow `http:` URLs (WEBHOOK_ALLOW_HTTP). */
  allowHttp: boolean;
  /** Allow loopback, private, link-local and other non-public destinations (OUTBOUND_ALLOW_PRIVATE_NETWORKS). */
  allowPrivateNetworks: boolean;
}

export interface GuardedRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  timeoutMs?: number;
  signal?: AbortSignal;
  maxResponseBytes?: number;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The body was longer than maxResponseBytes and was cut there. */
  truncated: boolean;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Address classification

const BLOCKED = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata endpoints
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
] as const) {
  BLOCKED.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 96], // unspecified, loopback, deprecated IPv4-compatible addresses
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: tunnels to an obfuscated IPv4 address
  ['2001:2::', 48], // benchmarking
  ['2001:10::', 28], // ORCHID
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED.addSubnet(prefix, bits, 'ipv6');
}

/**
 * Whether an IP address is anything but a public unicast address. IPv6 forms that carry an IPv4
 * address (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4
 * address. Anything that is not an IP address counts as private: callers fail closed.
 */
export function isPrivateAddress(ip: string): boolean {
  const address = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  switch (net.isIP(address)) {
    case 4:
      return BLOCKED.check(address, 'ipv4');
    case 6: {
      const embedded = embeddedIPv4(address);
      if (embedded && isPrivateAddress(embedded)) return true;
      return BLOCKED.check(address, 'ipv6');
    }
    default:
      return true;
  }
}

function embeddedIPv4(ipv6: string): string | undefined {
  const w = ipv6Words(ipv6);
  if (!w) return undefined;
  const dotted = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zero = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && w[5] === 0xffff) return dotted(w[6], w[7]); // ::ffff:0:0/96
  if (w[0] === 0x64 && w[1] === 0xff9b && zero(2, 6)) return dotted(w[6], w[7]); // 64:ff9b::/96
  if (w[0] === 0x2002) return dotted(w[1], w[2]); // 2002::/16
  return undefined;
}

/** The eight 16-bit words of a valid IPv6 address (as accepted by net.isIPv6). */
function ipv6Words(ipv6: string): number[] | undefined {
  let text = ipv6.toLowerCase();
  const dottedTail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dottedTail) {
    const [a, b, c, d] = dottedTail.slice(1).map(Number);
    text = text.slice(0, dottedTail.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) => (part ? part.split(':').map((h) => parseInt(h, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const words = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return words.length === 8 && words.every((x) => Number.isInteger(x) && x >= 0 && x <= 0xffff) ? words : undefined;
}

// ---------------------------------------------------------------------------------------------
// URL checks

function refused(address: string): AppError {
  return new AppError('WEBHOOK_INVALID', 'Destination address is not allowed', { reason: 'private_address', address });
}

function isLocalhostName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/**
 * Registration-time shape check of a client-supplied callback URL: it parses, uses https (or http
 * when allowed), carries no credentials, and (unless private networks are allowed) does not name a
 * private IP literal or localhost. Hostnames are resolved only when the request is made.
 */
export function validateCallbackUrl(url: string, policy: { allowHttp: boolean; allowPrivateNetworks?: boolean }, field = 'url'): void {
  const invalid = (reason: string, message: string) => new AppError('WEBHOOK_INVALID', message, { field, reason });
  if (typeof url !== 'string' || url.trim() === '') throw invalid('missing', `${field} is required`);
  if (url.length > 2048) throw invalid('too_long', `${field} must be at most 2048 characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid('invalid_url', `${field} is not a valid absolute URL`);
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && policy.allowHttp)) {
    throw invalid('protocol_not_allowed', policy.allowHttp ? `${field} must use https or http` : `${field} must use https`);
  }
  if (parsed.username || parsed.password) throw invalid('credentials_not_allowed', `${field} must not contain credentials`);
  if (!parsed.hostname) throw invalid('invalid_url', `${field} has no host`);
  if (!policy.allowPrivateNetworks) {
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    if ((net.isIP(host) && isPrivateAddress(host)) || isLocalhostName(host)) {
      throw invalid('private_address', `${field} must not point to a private or loopback address`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Resolution at connect time

type LookupAddress = { address: string; family: number };
type Resolver = (hostname: string, family: number) => Promise<LookupAddress[]>;
type LookupCallback = (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;
export type LookupFunction = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void;

const systemResolver: Resolver = (hostname, family) => dns.promises.lookup(hostname, { all: true, family: family as 0 | 4 | 6, verbatim: true });

/**
 * A `lookup` for net/http/https that resolves every address of the host and refuses the whole
 * host when any of them is private (a mixed answer is how rebinding attacks hedge). `onRefused`
 * lets the caller tell a refusal from an ordinary DNS failure.
 */
export function createGuardedLookup(
  policy: Pick<OutboundPolicy, 'allowPrivateNetworks'>,
  onRefused?: (error: AppError) => void,
  resolve: Resolver = systemResolver,
): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, Number(options.family ?? 0) || 0).then(
      (addresses) => {
        if (addresses.length === 0) {
          return callback(Object.assign(new Error(`No address found for ${hostname}`), { code: 'ENOTFOUND' }));
        }
        if (!policy.allowPrivateNetworks) {
          const bad = addresses.find((a) => isPrivateAddress(a.address));
          if (bad) {
            const error = refused(bad.address);
            onRefused?.(error);
            return callback(error as unknown as NodeJS.ErrnoException);
          }
        }
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err),
    );
  };
}

// ---------------------------------------------------------------------------------------------
// The client

/**
 * One HTTP request to a client-chosen URL under the outbound policy. Never follows redirects (the
 * 3xx is returned as is), aborts after timeoutMs (connect to last byte), and keeps at most
 * maxResponseBytes of the body. Throws AppError: WEBHOOK_INVALID for a refused destination or
 * protocol, `timeout`, or `upstream_error` for network and TLS failures.
 */
export async function guardedFetch(url: string, init: GuardedRequestInit, policy: OutboundPolicy): Promise<GuardedResponse> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AppError('WEBHOOK_INVALID', 'URL is not a valid absolute URL', { field: 'url', reason: 'invalid_url' });
  }
  const isHttps = parsed.protocol === 'https:';
  if (!isHttps && !(parsed.protocol === 'http:' && policy.allowHttp)) {
    throw new AppError('WEBHOOK_INVALID', `Protocol ${parsed.protocol} is not allowed`, {
      field: 'url',
      reason: 'protocol_not_allowed',
      protocol: parsed.protocol,
    });
  }
  const hostname = parsed.hostname.replace(/^\[|\]$/g, '');
  // An IP literal never reaches `lookup` (net connects to it directly), so check it here.
  if (net.isIP(hostname) && !policy.allowPrivateNetworks && isPrivateAddress(hostname)) throw refused(hostname);

  const timeoutMs = init.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = init.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (init.signal?.aborted) throw aborted();

  let refusal: AppError | undefined;
  let timedOut = false;
  const controller = new AbortController();
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onCallerAbort = () => controller.abort();
  init.signal?.addEventListener('abort', onCallerAbort, { once: true });

  const headers: Record<string, string | number> = { ...init.headers };
  if (init.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) {
    headers['Content-Length'] = Buffer.byteLength(init.body);
  }
  const options: https.RequestOptions = {
    protocol: parsed.protocol,
    hostname,
    port: parsed.port || undefined,
    path: `${parsed.pathname}${parsed.search}`,
    method: (init.method ?? 'GET').toUpperCase(),
    headers,
    agent: false,
    lookup: createGuardedLookup(policy, (e) => (refusal = e)) as unknown as net.LookupFunction,
    signal: controller.signal,
    ...(parsed.username || parsed.password ? { auth: `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}` } : {}),
  };

  try {
    return await new Promise<GuardedResponse>((resolve, reject) => {
      const req = (isHttps ? https : http).request(options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const finish = () => resolve({ status: res.statusCode ?? 0, headers: flattenHeaders(res.headers), body: Buffer.concat(chunks), truncated });
        res.on('data', (chunk: Buffer) => {
          if (truncated) return;
          const room = maxBytes - size;
          if (chunk.length > room) {
            chunks.push(chunk.subarray(0, room));
            size = maxBytes;
            truncated = true;
            finish();
            res.destroy();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', finish);
        res.on('error', reject);
        res.on('close', () => {
          if (!res.complete && !truncated) reject(Object.assign(new Error('Response aborted'), { code: 'ECONNRESET' }));
        });
      });
      req.on('error', reject);
      req.end(init.body);
    });
  } catch (err) {
    if (refusal) throw refusal;
    if (err instanceof AppError) throw err;
    if (timedOut) throw new AppError('timeout', `Request timed out after ${timeoutMs} ms`, { reason: 'timeout', timeoutMs });
    if (init.signal?.aborted) throw aborted();
    const e = err as NodeJS.ErrnoException;
    throw new AppError('upstream_error', `Request to ${parsed.host} failed: ${e.code ?? e.message}`, {
      reason: e.code ?? 'network_error',
      message: e.message,
    });
  } finally {
    clearTimeout(timer);
    init.signal?.removeEventListener('abort', onCallerAbort);
  }
}

function aborted(): AppError {
  return new AppError('upstream_error', 'Request aborted', { reason: 'aborted' });
}

function flattenHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
