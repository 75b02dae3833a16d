import { AppError } from '../../../kernel/errors';
import { NodeError, isPlainObject, type Item, type NodeDefinition } from './types';
import { isExpression } from './core';

/**
 * Outbound HTTP, once per item, always through the platform's SSRF guard (kernel/outbound.ts):
 * loopback, private and link-local destinations are refused unless
 * OUTBOUND_ALLOW_PRIVATE_NETWORKS is set, also when a hostname resolves to them.
 */

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_TIMEOUT_MS = 300_000;
const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
const CONCURRENCY = 5;

export const httpRequest: NodeDefinition = {
  name: 'httpRequest',
  description:
    'Sends `method` (GET default) to `url` with `headers`, `query` and `body` (an object is sent as JSON), `timeout` in ms (default 30000); the response body becomes the item json (a JSON array becomes one item per element; text becomes {data}). `fullResponse` gives {statusCode, headers, body}; `ignoreHttpErrors` keeps non-2xx answers instead of failing.',
  missing: (p) => (typeof p.url === 'string' && p.url.trim() ? [] : ['url']),
  invalid: (p) => {
    if (p.method !== undefined && !isExpression(p.method) && !METHODS.includes(String(p.method).toUpperCase())) {
      return { parameter: 'method', message: `must be one of ${METHODS.join(', ')}` };
    }
    for (const key of ['headers', 'query'] as const) {
      if (p[key] !== undefined && !isPlainObject(p[key]) && !isExpression(p[key])) return { parameter: key, message: 'must be an object' };
    }
    if (p.timeout !== undefined && !isExpression(p.timeout) && !(Number.isFinite(p.timeout) && p.timeout > 0 && p.timeout <= MAX_TIMEOUT_MS)) {
      return { parameter: 'timeout', message: `must be milliseconds from 1 to ${MAX_TIMEOUT_MS}` };
    }
    return undefined;
  },
  async execute(ctx) {
    const params = await ctx.parameters();
    const results: Item[][] = new Array(ctx.items.length);
    let next = 0;
    const worker = async () => {
      while (next < ctx.items.length) {
        const i = next++;
        results[i] = await request(params[i]!, ctx);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, Math.max(ctx.items.length, 1)) }, worker));
    return { outputs: [results.flat()] };
  },
};

async function request(p: Record<string, any>, ctx: Parameters<NodeDefinition['execute']>[0]): Promise<Item[]> {
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
  let body: string | undefined;
  if (p.body !== undefined && p.body !== null && p.body !== '' && method !== 'GET' && method !== 'HEAD') {
    if (typeof p.body === 'string') {
      body = p.body;
      if (!has('content-type')) headers['Content-Type'] = looksLikeJson(body) ? 'application/json' : 'text/plain; charset=utf-8';
    } else {
      body = JSON.stringify(p.body);
      if (!has('content-type')) headers['Content-Type'] = 'application/json';
    }
  }
  if (!has('user-agent')) headers['User-Agent'] = 'automation-platform-engine/1';
  const timeoutMs = Math.min(Number(p.timeout) > 0 ? Number(p.timeout) : DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
  let res;
  try {
    res = await ctx.services.fetch(url.toString(), { method, headers, body, timeoutMs, signal: ctx.signal, maxResponseBytes: MAX_RESPONSE_BYTES });
  } catch (err) {
    if (err instanceof AppError) {
      const message = err.code === 'timeout' ? `Request to ${url.host} timed out after ${timeoutMs} ms` : `Request to ${url.host} failed: ${err.message}`;
      throw new NodeError(message, { code: err.code, ...err.details });
    }
    throw err;
  }
  if (res.truncated) throw new NodeError(`The response of ${url.host} is larger than ${MAX_RESPONSE_BYTES} bytes`);
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

function looksLikeJson(s: string): boolean {
  const t = s.trimStart();
  return t.startsWith('{') || t.startsWith('[');
}
