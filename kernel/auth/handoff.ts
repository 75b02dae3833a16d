import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RequestContext } from '../subgraph';

/**
 * The principal travels from the gateway to a remote subgraph in two headers: the request
 * context (base64url JSON with an issue time) and its HMAC-SHA256 under INTERNAL_SECRET. A
 * subgraph reached directly without a valid, fresh signature treats the caller as anonymous.
 */
export const CONTEXT_HEADER = 'x-platform-context';
export const SIGNATURE_HEADER = 'x-platform-signature';
/** How long a signed hand-off is believed. */
export const MAX_AGE_MS = 60_000;

export function signContext(ctx: RequestContext, secret: string): Record<string, string> {
  const body = Buffer.from(JSON.stringify({ ...ctx, iat: Date.now() })).toString('base64url');
  return { [CONTEXT_HEADER]: body, [SIGNATURE_HEADER]: mac(body, secret) };
}

export function verifyContext(body: string | undefined, signature: string | undefined, secret: string): RequestContext | null {
  if (!body || !signedBy(body, signature, secret)) return null;
  const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as RequestContext & { iat: number };
  if (typeof parsed.iat !== 'number' || Math.abs(Date.now() - parsed.iat) > MAX_AGE_MS) return null;
  const { iat: _iat, ...ctx } = parsed;
  if (ctx.rateLimit) {
    // Dates do not survive JSON: restore them.
    for (const w of Object.values(ctx.rateLimit.limits)) w.resetAt = new Date(w.resetAt);
  }
  return ctx;
}

/** Whether `signature` is the HMAC of `body` under `secret` (constant time). */
export function signedBy(body: string | Buffer, signature: string | undefined, secret: string): boolean {
  if (!signature) return false;
  const expected = Buffer.from(mac(body, secret), 'hex');
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function mac(body: string | Buffer, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}
