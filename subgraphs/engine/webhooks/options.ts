import net from 'node:net';
import { AppError } from '../../../kernel/errors';
import type { ResumeWebhookOptions, WebhookReply } from '../nodes';

/**
 * n8n's webhook options that decide whether a call is taken and how it is answered, as its Webhook
 * and Wait nodes have them: `ignoreBots` (link previewers and crawlers are refused, so that a
 * preview of a resume URL does not use it up), `ipWhitelist` (addresses or CIDR ranges, comma
 * separated in n8n), and the answer's `responseCode`, `responseHeaders`, `responseData` (a text
 * body) and `noResponseBody`.
 */

/** User agents of bots, link previewers and crawlers (what n8n's isbot check recognises for the usual ones). */
const BOT =
  /bot\b|bot[/;-]|crawl|spider|slurp|preview|facebookexternalhit|embedly|whatsapp|skypeuripreview|bitlybot|vkshare|quora link|pinterest|redditbot|headlesschrome|curl\/|wget\/|python-requests|go-http-client|okhttp|axios\//i;

export function isBot(userAgent: string | undefined): boolean {
  return !!userAgent && BOT.test(userAgent);
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

/** The answer to a taken call: `body` unless the options give a status, headers or a body of their own. */
export function optionsReply(
  o: Pick<ResumeWebhookOptions, 'responseCode' | 'responseHeaders' | 'responseData' | 'noResponseBody'>,
  body: unknown,
): WebhookReply {
  return {
    status: o.responseCode ?? 200,
    headers: { ...(o.responseHeaders ?? {}) },
    body: o.noResponseBody ? '' : o.responseData !== undefined ? o.responseData : body,
  };
}
