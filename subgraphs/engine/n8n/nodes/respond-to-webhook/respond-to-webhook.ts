import { isPlainObject, webhookFile, type WebhookFile, NodeError, type Item, type NodeDefinition, type WebhookReply } from '../../../nodes';

/**
 * n8n's Respond to Webhook (1 to 1.4): the answer to the request that started the execution, sent
 * as soon as the node runs (the first one to run answers; later ones are ignored); the items pass
 * on. `respondWith`: firstIncomingItem (default), allIncomingItems, json (`responseBody`), text
 * (`responseBody`, as HTML in a sandbox), noData, redirect (`redirectURL`, 307 by default), binary
 * (the first item's file: `responseDataSource` automatically, or set with `inputFieldName`).
 * Options `responseCode`, `responseHeaders` and `responseKey` (the first or all items' json put
 * under that field, dot notation). The JWT answer needs a JWT credential and is refused at import.
 */

const RESPOND_WITH = ['firstIncomingItem', 'allIncomingItems', 'json', 'text', 'noData', 'redirect', 'binary', 'jwt'];
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** `value` under the dotted `key` of a new object (n8n's "Put Response in Field"). */
function underKey(key: string, value: unknown): Record<string, unknown> {
  const parts = key.split('.');
  if (parts.some((k) => FORBIDDEN_KEYS.has(k) || k === '')) throw new NodeError(`The response field "${key}" is not a valid field name`);
  const out: Record<string, unknown> = {};
  let cur = out;
  parts.forEach((k, i) => {
    const next = i === parts.length - 1 ? value : {};
    Object.defineProperty(cur, k, { value: next, enumerable: true, writable: true, configurable: true });
    if (i < parts.length - 1) cur = next as Record<string, unknown>;
  });
  return out;
}

function headersOf(option: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const entries = isPlainObject(option) && Array.isArray(option.entries) ? option.entries : [];
  for (const e of entries) {
    if (isPlainObject(e) && typeof e.name === 'string' && e.name.trim())
      out[e.name.trim().toLowerCase()] = e.value === undefined || e.value === null ? '' : String(e.value);
  }
  return out;
}

function jsonBody(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? {};
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw);
  } catch {
    throw new NodeError("Invalid JSON in 'Response Body' field", { reason: 'invalid_json' });
  }
}

/** The first item's file: named by `inputFieldName`, or its first binary field; sent as it is read, never copied whole. */
function binaryReply(item: Item | undefined, p: Record<string, unknown>): { body: WebhookFile; headers: Record<string, string> } {
  if (!item?.binary || !Object.keys(item.binary).length) throw new NodeError('No binary data exists on the first item!');
  const key = p.responseDataSource === 'set' ? String(p.inputFieldName ?? 'data') : Object.keys(item.binary)[0]!;
  const data = item.binary[key];
  if (!data) throw new NodeError(`The first item has no binary field "${key}"`);
  const headers: Record<string, string> = { 'content-type': data.mimeType || 'application/octet-stream' };
  if (data.fileName) headers['content-disposition'] = `attachment; filename="${data.fileName.replace(/["\\\r\n]/g, '_')}"`;
  return { body: webhookFile(item, key), headers };
}

export const respondToWebhook: NodeDefinition = {
  name: 'respondToWebhook',
  description: "n8n's Respond to Webhook: answers the request that started the workflow (its first run only).",
  n8n: {
    versions: [1, 1.1, 1.2, 1.3, 1.4],
    unsupported(p) {
      const w = p.respondWith ?? 'firstIncomingItem';
      if (w === 'jwt')
        return { option: 'respondWith', message: 'respondWith "jwt" is not supported: it needs a JWT credential, which the platform does not store' };
      if (typeof w === 'string' && !w.startsWith('=') && !RESPOND_WITH.includes(w))
        return { option: 'respondWith', message: `respondWith "${w}" is not one of ${RESPOND_WITH.join(', ')}` };
      if (isPlainObject(p.options) && p.options.enableStreaming === true)
        return { option: 'options.enableStreaming', message: 'streaming answers are not supported' };
      return undefined;
    },
  },
  inProcess: true,
  async execute(ctx) {
    const [p] = await ctx.parameters([0]);
    const options: Record<string, unknown> = isPlainObject(p!.options) ? p!.options : {};
    const headers = headersOf(options.responseHeaders);
    const key = typeof options.responseKey === 'string' && options.responseKey !== '' ? options.responseKey : undefined;
    let status = 200;
    let body: unknown;
    switch (p!.respondWith ?? 'firstIncomingItem') {
      case 'firstIncomingItem': {
        const json = ctx.items[0]?.json ?? {};
        body = key ? underKey(key, json) : json;
        break;
      }
      case 'allIncomingItems': {
        const all = ctx.items.map((i) => i.json);
        body = key ? underKey(key, all) : all;
        break;
      }
      case 'json':
        body = jsonBody(p!.responseBody);
        break;
      case 'text':
        body = p!.responseBody === undefined || p!.responseBody === null ? '' : String(p!.responseBody);
        // As n8n serves text (HTML unless told otherwise): sandboxed, so a page it writes cannot act as the platform's origin.
        headers['content-type'] ??= 'text/html; charset=utf-8';
        headers['content-security-policy'] ??= 'sandbox';
        break;
      case 'noData':
        body = '';
        break;
      case 'redirect':
        status = 307;
        headers.location = String(p!.redirectURL ?? '');
        body = '';
        break;
      case 'binary': {
        const file = binaryReply(ctx.items[0], p!);
        body = file.body;
        for (const [k, v] of Object.entries(file.headers)) headers[k] ??= v;
        break;
      }
      default:
        throw new NodeError(`respondWith "${String(p!.respondWith)}" is not supported`);
    }
    if (options.responseCode !== undefined && options.responseCode !== '') status = Number(options.responseCode);
    if (!Number.isInteger(status) || status < 100 || status > 599)
      throw new NodeError(`The response code must be an HTTP status from 100 to 599, not ${String(options.responseCode)}`);
    const reply: WebhookReply = { status, headers, body };
    return { outputs: [ctx.items], reply };
  },
};
