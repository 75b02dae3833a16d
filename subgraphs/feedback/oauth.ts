import type { Config } from '../../kernel/config';
import { AppError } from '../../kernel/errors';

/**
 * Sign-in with GitHub or Google (OAuth 2.0 authorization code). The endpoints come from the
 * configuration (docs/configuration.md), so tests point them at local fakes speaking the same
 * protocol. GitHub: the code is exchanged at `{GITHUB_OAUTH_URL}/login/oauth/access_token`, the
 * profile read from `{GITHUB_API_URL}/user` and the primary verified address from `/user/emails`.
 * Google: the token endpoint, then the userinfo endpoint.
 */

export type Provider = 'github' | 'google';
export interface ProviderProfile {
  provider: Provider;
  providerId: string;
  email: string;
  username: string;
  name: string;
  avatar: string | null;
}

const TIMEOUT_MS = 10_000;

export function authorizeUrl(config: Config, provider: Provider, redirectUri: string, state: string): string {
  if (provider === 'github') {
    const u = new URL('/login/oauth/authorize', config.github.oauthUrl);
    u.search = new URLSearchParams({ client_id: config.github.clientId ?? '', redirect_uri: redirectUri, scope: 'read:user user:email', state }).toString();
    return u.toString();
  }
  const u = new URL('https://accounts.google.com/o/oauth2/v2/auth');
  u.search = new URLSearchParams({
    client_id: config.google.clientId ?? '',
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email profile',
    state,
  }).toString();
  return u.toString();
}

export function configured(config: Config, provider: Provider): boolean {
  const c = provider === 'github' ? config.github : config.google;
  return Boolean(c.clientId && c.clientSecret);
}

/** The provider's profile for an authorization code; 502 `upstream_error` when the provider refuses or fails. */
export async function exchange(config: Config, provider: Provider, code: string, redirectUri: string): Promise<ProviderProfile> {
  if (!configured(config, provider)) throw new AppError('service_unavailable', `Sign-in with ${provider} is not configured`, { provider });
  if (provider === 'github') {
    const token = await call(`${config.github.oauthUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: config.github.clientId, client_secret: config.github.clientSecret, code, redirect_uri: redirectUri }),
    });
    if (typeof token.access_token !== 'string') throw upstream(provider, String(token.error_description ?? token.error ?? 'no access token'));
    const auth = { authorization: `Bearer ${token.access_token}`, accept: 'application/vnd.github+json' };
    const user = await call(`${config.github.apiUrl}/user`, { headers: auth });
    const emails = (await call(`${config.github.apiUrl}/user/emails`, { headers: auth })) as unknown as {
      email: string;
      primary: boolean;
      verified: boolean;
    }[];
    const primary = Array.isArray(emails) ? emails.find((e) => e.primary && e.verified) : undefined;
    if (!primary) throw upstream(provider, 'the GitHub account has no verified primary email address');
    return {
      provider,
      providerId: String(user.id),
      email: primary.email,
      username: String(user.login),
      name: String(user.name ?? user.login),
      avatar: webUrl(user.avatar_url),
    };
  }
  const token = await call(config.google.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({
      code,
      client_id: config.google.clientId!,
      client_secret: config.google.clientSecret!,
      redirect_uri: redirectUri,
      grant_type: 'authorization_code',
    }).toString(),
  });
  if (typeof token.access_token !== 'string') throw upstream(provider, String(token.error_description ?? token.error ?? 'no access token'));
  const info = await call(config.google.userinfoUrl, { headers: { authorization: `Bearer ${token.access_token}` } });
  if (!info.email || info.email_verified === false) throw upstream(provider, 'the Google account has no verified email address');
  return {
    provider,
    providerId: String(info.sub),
    email: info.email as string,
    username: String(info.email).split('@')[0]!,
    name: String(info.name ?? info.email),
    avatar: webUrl(info.picture),
  };
}

/**
 * The profile's picture as an http(s) URL (normalised), or null: it is shown to other people, so
 * a `javascript:` or `data:` URL from a profile never gets that far.
 */
function webUrl(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

async function call(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    throw new AppError('upstream_error', `The identity provider could not be reached: ${(err as Error).message}`);
  }
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new AppError('upstream_error', `The identity provider answered ${res.status} without JSON`);
  }
  if (!res.ok) throw new AppError('upstream_error', `The identity provider answered ${res.status}`, { provider_error: body?.error ?? body?.message ?? null });
  return body;
}

const upstream = (provider: Provider, why: string) => new AppError('upstream_error', `Sign-in with ${provider} failed: ${why}`, { provider });
