import net from 'node:net';
import { isbot } from 'isbot';
import { AppError } from '../../../kernel/errors';
import { envelopes } from '../../../kernel/envelopes';
import type { ResumeWebhookOptions, WebhookAnswerOptions, WebhookFile, WebhookReply } from '../nodes';

/**
 * n8n's webhook options that decide whether a call is taken and how it is answered, as its Webhook
 * and Wait nodes have them: `ignoreBots` (link previewers and crawlers are refused, so that a
 * preview of a resume URL does not use it up), `ipWhitelist` (addresses or CIDR ranges, comma
 * separated in n8n), and the answer (nodes/webhook-answer.ts): at once with `responseCode`,
 * `responseHeaders`, `responseData` (a text body) or `noResponseBody`, or from the last node's
 * output once the workflow has run.
 */

/**
 * Whether a user agent is a bot, link previewer or crawler: the isbot package, the check n8n
 * makes, so that a call n8n ignores is ignored here too. A missing user agent is not a bot.
 */
export function isBot(userAgent: string | undefined): boolean {
  return !!userAgent && isbot(userAgent);
}

/** Whether `ip` is one of `allowed` (addresses or CIDR ranges); an unparsable entry allows nothing. */
export function ipAllowed(ip: string | null, allowed: readonly string[]): boolean {
  if (!ip) return false;
  const address = ip.startsWith('::ffff:') && net.isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
  const family = net.isIPv4(address) ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : undefined;
  if (!family) return false;
  const list = new net.BlockList();
  for (const entry of allowed) {
    const [base, bits] = entry.split('/');
    const type = net.isIPv4(base!) ? 'ipv4' : net.isIPv6(base!) ? 'ipv6' : undefined;
    if (!type) continue;
    if (bits === undefined) list.addAddress(base!, type);
    else if (/^\d+$/.test(bits)) list.addSubnet(base!, Number(bits), type);
  }
  return list.check(address, family);
}

/** Why a call is refused by the options (403, as n8n answers), or null when it is taken. */
export function callRefused(
  o: Pick<ResumeWebhookOptions, 'ignoreBots' | 'ipWhitelist'>,
  headers: Record<string, string>,
  sourceIp: string | null,
): { error: AppError; reason: string } | null {
  if (o.ipWhitelist?.length && !ipAllowed(sourceIp, o.ipWhitelist))
    return { error: new AppError('forbidden', 'IP is not whitelisted to access the webhook!', { ip: sourceIp }, 403), reason: 'ip_not_allowed' };
  if (o.ignoreBots && isBot(headers['user-agent'])) return { error: new AppError('forbidden', 'Requests from bots are ignored', {}, 403), reason: 'bot' };
  return null;
}

/** The answer to a taken call (onReceived): `body` unless the options give a status, headers or a body of their own. */
export function optionsReply(
  o: Pick<WebhookAnswerOptions, 'responseCode' | 'responseHeaders' | 'responseData' | 'noResponseBody'>,
  body: unknown,
): WebhookReply {
  return {
    status: o.responseCode ?? 200,
    headers: { ...(o.responseHeaders ?? {}) },
    body: o.noResponseBody ? '' : o.responseData !== undefined ? o.responseData : body,
  };
}

/** A dotted path's value in `data` (n8n's Property Name: `a.b.c`), undefined where it stops. */
function valueAt(data: unknown, path: string): unknown {
  let cur: unknown = data;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

const failed = (message: string, headers: Record<string, string>): WebhookReply => ({
  status: 500,
  headers,
  body: envelopes.webhook.error(new AppError('EXECUTION_FAILED', message, {}, 500)),
});

/**
 * The answer of a workflow that ran to its end (lastNode), from its last node's items (json) as
 * the options say: the first item's json (or its `responsePropertyName` field, sent as
 * `responseContentType` when given), its file `responseBinaryPropertyName` (`file` reads it from
 * the binary store), every item's json, or no body; with `responseCode` and `responseHeaders`.
 * A file that is not there is n8n's error, 500.
 */
export async function lastNodeReply(
  o: WebhookAnswerOptions,
  items: readonly unknown[],
  file: (key: string) => Promise<WebhookFile | 'no_item' | 'no_binary'>,
): Promise<WebhookReply> {
  const headers: Record<string, string> = { ...(o.responseHeaders ?? {}) };
  const status = o.responseCode ?? 200;
  switch (o.lastNodeData ?? 'firstEntryJson') {
    case 'allEntries':
      return { status, headers, body: [...items] };
    case 'noData':
      return { status, headers, body: '' };
    case 'firstEntryBinary': {
      const key = o.responseBinaryPropertyName ?? 'data';
      const found = await file(key);
      if (found === 'no_item') return failed('No item was found to return', headers);
      if (found === 'no_binary') return failed(`The binary property "${key}" which should be returned does not exist`, headers);
      headers['content-type'] ??= found.binary.mimeType || 'application/octet-stream';
      return { status, headers, body: found };
    }
    default: {
      const first = items[0] ?? {};
      const data = o.responsePropertyName ? valueAt(first, o.responsePropertyName) : first;
      if (data === undefined) return { status, headers, body: '' };
      if (o.responseContentType) {
        headers['content-type'] = o.responseContentType;
        return { status, headers, body: typeof data === 'string' ? data : JSON.stringify(data) };
      }
      // A text is JSON too (n8n sends `"text"`), not a body of its own.
      if (typeof data === 'string') {
        headers['content-type'] ??= 'application/json; charset=utf-8';
        return { status, headers, body: JSON.stringify(data) };
      }
      return { status, headers, body: data };
    }
  }
}
