import { createHmac, timingSafeEqual } from 'node:crypto';
import type { LinkView } from './link.store';

/**
 * The visitor's side of a protected link: the gate page (a plain HTML form that works without
 * JavaScript, never holding the destination) and the unlock cookie a successful verification
 * sets, so the visitor is not asked again for a while. The cookie is signed with a platform
 * secret and bound to the link and its last change: a new password locks every visitor out again.
 */

export const UNLOCK_SECONDS = 15 * 60;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`=\/]/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function gatePage(link: LinkView, notice?: string): string {
  const pin = link.protectionType === 'pin';
  const field = pin
    ? `<input id="secret" name="pin" type="password" inputmode="numeric" autocomplete="off" pattern="[0-9]{4}([0-9]{2})?" required autofocus>`
    : `<input id="secret" name="password" type="password" autocomplete="off" minlength="4" maxlength="128" required autofocus>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Protected link</title>
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}form{display:grid;gap:.75rem}
input,button{font:inherit;padding:.5rem}.hint{color:#555}.notice{color:#a00}</style>
</head>
<body>
<main>
<h1>This link is protected</h1>
<p>Enter the ${pin ? 'PIN' : 'password'} to continue.</p>
${link.protectionHint ? `<p class="hint">Hint: ${escapeHtml(link.protectionHint)}</p>` : ''}
${notice ? `<p class="notice" role="alert">${escapeHtml(notice)}</p>` : ''}
<form method="post" action="/links/${encodeURIComponent(link.slug)}">
<label for="secret">${pin ? 'PIN' : 'Password'}</label>
${field}
<button type="submit">Continue</button>
</form>
</main>
</body>
</html>`;
}

export function simplePage(status: number, title: string, text: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${status} ${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`;
}

const cookieName = (link: LinkView) => `lnk_${link.id.replace(/-/g, '')}`;
const mac = (key: Buffer, link: LinkView, expires: number) =>
  createHmac('sha256', key).update(`${link.id}|${link.updatedAt.getTime()}|${expires}`).digest('base64url');

export function unlockCookie(key: Buffer, link: LinkView, secure: boolean): string {
  const expires = Math.floor(Date.now() / 1000) + UNLOCK_SECONDS;
  return `${cookieName(link)}=${expires}.${mac(key, link, expires)}; Max-Age=${UNLOCK_SECONDS}; Path=/links/${encodeURIComponent(link.slug)}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

export function unlocked(key: Buffer, link: LinkView, cookieHeader: string | undefined): boolean {
  if (!cookieHeader) return false;
  const name = `${cookieName(link)}=`;
  const value = cookieHeader
    .split(/;\s*/)
    .find((c) => c.startsWith(name))
    ?.slice(name.length);
  const [expires, signature] = (value ?? '').split('.');
  if (!expires || !signature || !/^\d+$/.test(expires) || Number(expires) * 1000 < Date.now()) return false;
  const expected = Buffer.from(mac(key, link, Number(expires)));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
