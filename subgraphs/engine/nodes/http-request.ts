import { randomBytes } from 'node:crypto';
import { AppError } from '../../../kernel/errors';
import { NodeError, isPlainObject, type Item, type NodeDefinition } from './types';
import { isExpression } from './core';
import { binaryBuffer, DEFAULT_BINARY_KEY, prepareBinary } from './binary';

/**
 * Outbound HTTP, once per item, always through the platform's SSRF guard (kernel/outbound.ts):
 * loopback, private and link-local destinations are refused unless
 * OUTBOUND_ALLOW_PRIVATE_NETWORKS is set, also when a hostname resolves to them.
 */

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_TIMEOUT_MS = 300_000;
const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
/** A file response may be larger: it is kept as binary data, under its own budget (BINARY_DATA_MAX_BYTES). */
const MAX_FILE_RESPONSE_BYTES = 64 * 1024 * 1024;
const CONCURRENCY = 5;

/** The credential types the node authenticates with (n8n's generic ones), each a stored credential named in `node.credentials`. */
export const HTTP_AUTH_TYPES = ['httpHeaderAuth', 'httpQueryAuth', 'httpBasicAuth', 'httpBearerAuth', 'httpCustomAuth', 'oAuth2Api'] as const;

export const httpRequest: NodeDefinition = {
  name: 'httpRequest',
  description:
    "Sends `method` (GET default) to `url` with `headers`, `query` and `body` (an object is sent as JSON), `timeout` in ms (default 30000); the response body becomes the item json (a JSON array becomes one item per element; text becomes {data}). `fullResponse` gives {statusCode, headers, body}; `ignoreHttpErrors` keeps non-2xx answers instead of failing. Files: `responseFormat: file` keeps the response body as the binary `outputPropertyName` (default data); `bodyBinary` sends the input item's binary of that name as the body; `multipart` ([{name, value}] or [{name, binary}]) sends multipart/form-data with text fields and the input item's files. `authentication` names a credential type (httpHeaderAuth, httpQueryAuth, httpBasicAuth, httpBearerAuth, httpCustomAuth, oAuth2Api) whose stored credential the node names in `credentials`.",
  missing: (p) => (typeof p.url === 'string' && p.url.trim() ? [] : ['url']),
  invalid: (p) => {
    if (
      p.authentication !== undefined &&
      p.authentication !== 'none' &&
      (typeof p.authentication !== 'string' || !(HTTP_AUTH_TYPES as readonly string[]).includes(p.authentication))
    ) {
      return { parameter: 'authentication', message: `must be none or one of ${HTTP_AUTH_TYPES.join(', ')}` };
    }
    if (p.method !== undefined && !isExpression(p.method) && !METHODS.includes(String(p.method).toUpperCase())) {
      return { parameter: 'method', message: `must be one of ${METHODS.join(', ')}` };
    }
    for (const key of ['headers', 'query'] as const) {
      if (p[key] !== undefined && !isPlainObject(p[key]) && !isExpression(p[key])) return { parameter: key, message: 'must be an object' };
    }
    if (
      p.timeout !== undefined &&
      !isExpression(p.timeout) &&
      !(typeof p.timeout === 'number' && Number.isFinite(p.timeout) && p.timeout > 0 && p.timeout <= MAX_TIMEOUT_MS)
    ) {
      return { parameter: 'timeout', message: `must be milliseconds from 1 to ${MAX_TIMEOUT_MS}` };
    }
    return undefined;
  },
  async execute(ctx) {
    const params = await ctx.parameters();
    const auth = await authOf(ctx, params[0]?.authentication);
    const results: Item[][] = new Array(ctx.items.length);
    let next = 0;
    const worker = async () => {
      while (next < ctx.items.length) {
        const i = next++;
        results[i] = await request(params[i]!, ctx, auth, i);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, Math.max(ctx.items.length, 1)) }, worker));
    return { outputs: [results.flat()] };
  },
};

type Ctx = Parameters<NodeDefinition['execute']>[0];

/** What a credential adds to a request; `renew` (OAuth2) gets a new token after a 401. */
interface Auth {
  apply(url: URL, headers: Record<string, string>, body: unknown, renew: boolean): Promise<unknown>;
  oauth2: boolean;
}

/** The stored credential of `type` the node names, read once per run of the node; its secrets stay in this closure. */
async function authOf(ctx: Ctx, type: unknown): Promise<Auth | undefined> {
  if (type === undefined || type === null || type === '' || type === 'none') return undefined;
  const kind = String(type);
  const ref = ctx.node.credentials?.[kind];
  if (!ref)
    throw new NodeError(`The node authenticates with ${kind} but names no ${kind} credential (node.credentials.${kind})`, { reason: 'credential_missing' });
  const store = ctx.services.credentials;
  if (!store) throw new NodeError('Credentials are not available in this process', { reason: 'no_credentials' });
  if (kind === 'oAuth2Api') {
    return {
      oauth2: true,
      async apply(_url, headers, body, renew) {
        headers.Authorization = `Bearer ${await store.accessToken(ref, ctx.signal, renew)}`;
        return body;
      },
    };
  }
  const data = await store.data(kind, ref);
  return {
    oauth2: false,
    async apply(url, headers, body) {
      switch (kind) {
        case 'httpHeaderAuth':
          headers[data.name!] = data.value ?? '';
          return body;
        case 'httpQueryAuth':
          url.searchParams.set(data.name!, data.value ?? '');
          return body;
        case 'httpBasicAuth':
          headers.Authorization = `Basic ${Buffer.from(`${data.user ?? ''}:${data.password ?? ''}`).toString('base64')}`;
          return body;
        case 'httpBearerAuth':
          headers.Authorization = `Bearer ${data.token ?? ''}`;
          return body;
        case 'httpCustomAuth': {
          // {headers, qs, body}: headers and query parameters added, body fields merged into an object body.
          const custom = JSON.parse(data.json ?? '{}') as { headers?: Record<string, unknown>; qs?: Record<string, unknown>; body?: Record<string, unknown> };
          for (const [k, v] of Object.entries(custom.headers ?? {})) headers[k] = String(v);
          for (const [k, v] of Object.entries(custom.qs ?? {})) url.searchParams.set(k, String(v));
          if (custom.body && Object.keys(custom.body).length) {
            if (body === undefined || body === null || body === '') return { ...custom.body };
            if (isPlainObject(body)) return { ...body, ...custom.body };
          }
          return body;
        }
        default:
          throw new NodeError(`The credential type ${kind} does not authenticate HTTP requests`, { reason: 'credential_type' });
      }
    },
  };
}

async function request(p: Record<string, unknown>, ctx: Ctx, auth: Auth | undefined, itemIndex: number): Promise<Item[]> {
  const item = ctx.items[itemIndex] ?? { json: {} };
  const file = p.responseFormat === 'file';
  const method = String(p.method ?? 'GET').toUpperCase();
  if (!METHODS.includes(method)) throw new NodeError(`Unsupported method ${method}`);
  let url: URL;
  try {
    url = new URL(String(p.url));
  } catch {
    throw new NodeError(`Invalid URL: ${String(p.url)}`);
  }
  if (isPlainObject(p.query)) {
    for (const [k, v] of Object.entries(p.query))
      if (v !== undefined && v !== null) url.searchParams.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  }
  const headers: Record<string, string> = {};
  if (isPlainObject(p.headers)) for (const [k, v] of Object.entries(p.headers)) if (v !== undefined && v !== null) headers[k] = String(v);
  const has = (name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name);
  const send = async (renew: boolean) => {
    const target = new URL(url);
    const sent = { ...headers };
    const given = await (auth ? auth.apply(target, sent, p.body, renew) : p.body);
    let body: string | Buffer | undefined;
    if (upload) {
      body = upload.body;
      if (!has('content-type')) sent['Content-Type'] = upload.type;
    } else if (given !== undefined && given !== null && given !== '' && method !== 'GET' && method !== 'HEAD') {
      if (typeof given === 'string') {
        body = given;
        if (!has('content-type')) sent['Content-Type'] = looksLikeJson(body) ? 'application/json' : 'text/plain; charset=utf-8';
      } else {
        body = JSON.stringify(given);
        if (!has('content-type')) sent['Content-Type'] = 'application/json';
      }
    }
    if (!has('user-agent')) sent['User-Agent'] = 'automation-platform-engine/1';
    return ctx.services.fetch(target.toString(), { method, headers: sent, body, timeoutMs, signal: ctx.signal, maxResponseBytes: maxBytes });
  };
  const maxBytes = file ? MAX_FILE_RESPONSE_BYTES : MAX_RESPONSE_BYTES;
  const upload = uploadOf(p, item, itemIndex);
  const timeoutMs = Math.min(Number(p.timeout) > 0 ? Number(p.timeout) : DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
  let res;
  try {
    res = await send(false);
    // OAuth2: a token the server no longer accepts is renewed once (refresh token, or a new client-credentials token).
    if (res.status === 401 && auth?.oauth2) res = await send(true);
  } catch (err) {
    if (err instanceof AppError) {
      const message = err.code === 'timeout' ? `Request to ${url.host} timed out after ${timeoutMs} ms` : `Request to ${url.host} failed: ${err.message}`;
      throw new NodeError(message, { code: err.code, ...err.details });
    }
    throw err;
  }
  if (res.truncated) throw new NodeError(`The response of ${url.host} is larger than ${maxBytes} bytes`);
  if (file && res.status >= 200 && res.status <= 299) {
    const key = typeof p.outputPropertyName === 'string' && p.outputPropertyName ? p.outputPropertyName : DEFAULT_BINARY_KEY;
    const mimeType = (res.headers['content-type'] ?? '').split(';')[0]!.trim() || undefined;
    const binary = prepareBinary(res.body, { fileName: fileNameOf(res.headers['content-disposition'], url), mimeType });
    const json = p.fullResponse === true ? { statusCode: res.status, headers: res.headers } : {};
    return [{ json, binary: { [key]: binary }, pairedItem: { item: itemIndex } }];
  }
  const text = res.body.toString('utf8');
  const type = res.headers['content-type'] ?? '';
  let parsed: unknown = text;
  if (text && (type.includes('json') || looksLikeJson(text))) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if ((res.status < 200 || res.status > 299) && p.ignoreHttpErrors !== true) {
    throw new NodeError(`Request to ${url.host} failed with status ${res.status}`, {
      statusCode: res.status,
      body: typeof parsed === 'string' ? parsed.slice(0, 1000) : parsed,
    });
  }
  if (p.fullResponse === true) return [{ json: { statusCode: res.status, headers: res.headers, body: parsed } }];
  if (Array.isArray(parsed)) {
    ctx.checkOutput(parsed.length);
    return parsed.map((v) => ({ json: isPlainObject(v) ? v : { value: v } }));
  }
  if (isPlainObject(parsed)) return [{ json: parsed }];
  return [{ json: text === '' ? {} : { data: parsed } }];
}

/** The body a request sends from the input item's files: one file (`bodyBinary`), or a multipart form of fields and files. */
function uploadOf(p: Record<string, unknown>, item: Item, itemIndex: number): { body: Buffer; type: string } | undefined {
  if (typeof p.bodyBinary === 'string' && p.bodyBinary) {
    const bytes = binaryBuffer(item, p.bodyBinary, itemIndex);
    return { body: bytes, type: item.binary![p.bodyBinary]!.mimeType || 'application/octet-stream' };
  }
  if (!Array.isArray(p.multipart)) return undefined;
  const boundary = `----automation-platform-${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  const quoted = (s: string) => s.replace(/["\r\n]/g, (c) => encodeURIComponent(c));
  for (const field of p.multipart as { name?: unknown; value?: unknown; binary?: unknown }[]) {
    const name = quoted(String(field?.name ?? ''));
    if (typeof field?.binary === 'string' && field.binary) {
      const bytes = binaryBuffer(item, field.binary, itemIndex);
      const meta = item.binary![field.binary]!;
      const fileName = quoted(meta.fileName ?? field.binary);
      parts.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${fileName}"\r\nContent-Type: ${meta.mimeType || 'application/octet-stream'}\r\n\r\n`,
        ),
        bytes,
        Buffer.from('\r\n'),
      );
    } else {
      const value =
        field?.value === undefined || field.value === null ? '' : typeof field.value === 'object' ? JSON.stringify(field.value) : String(field.value);
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
    }
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

/** A downloaded file's name: Content-Disposition's (filename* first), else the URL's last segment. */
export function fileNameOf(disposition: string | undefined, url: URL): string | undefined {
  if (disposition) {
    const star = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(disposition);
    if (star) {
      try {
        return decodeURIComponent(star[2]!.trim());
      } catch {
        // A malformed encoding: the plain name below, if any.
      }
    }
    const plain = /filename\s*=\s*("([^"]*)"|[^;]+)/i.exec(disposition);
    if (plain) return (plain[2] ?? plain[1]!).trim() || undefined;
  }
  const last = url.pathname.split('/').filter(Boolean).pop();
  if (!last) return undefined;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

function looksLikeJson(s: string): boolean {
  const t = s.trimStart();
  return t.startsWith('{') || t.startsWith('[');
}
