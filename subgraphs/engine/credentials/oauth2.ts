import type { GuardedRequestInit, GuardedResponse } from '../../../kernel/outbound';

/**
 * OAuth2 (RFC 6749) as an oAuth2Api credential uses it: the token endpoint for the
 * client-credentials, authorization-code and refresh-token grants, the client authenticated by
 * HTTP Basic (`authentication: header`, the default) or in the body (`body`), and the consent URL
 * of the authorization-code grant. Nothing here puts a secret into an error message: a refusal
 * names the endpoint's status and its `error` code only.
 */

export type Fetch = (url: string, init: GuardedRequestInit) => Promise<GuardedResponse>;

/** The tokens kept in the credential's ciphertext. */
export interface TokenData {
  accessToken: string;
  refreshToken?: string;
  tokenType?: string;
  /** Milliseconds since the epoch; none when the server gave no `expires_in`. */
  expiresAt?: number;
}

export class TokenRefused extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly oauthError?: string,
  ) {
    super(message);
  }
}

const TOKEN_TIMEOUT_MS = 30_000;

export async function tokenRequest(
  fetch: Fetch,
  settings: Record<string, string>,
  grant: Record<string, string>,
  now: number,
  signal?: AbortSignal,
): Promise<TokenData> {
  const form = new URLSearchParams(grant);
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' };
  if ((settings.authentication ?? 'header') === 'body') {
    form.set('client_id', settings.clientId ?? '');
    form.set('client_secret', settings.clientSecret ?? '');
  } else {
    // RFC 6749 2.3.1: both form-encoded before they are joined.
    const pair = `${encodeURIComponent(settings.clientId ?? '')}:${encodeURIComponent(settings.clientSecret ?? '')}`;
    headers.Authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  }
  const host = safeHost(settings.accessTokenUrl ?? '');
  let res: GuardedResponse;
  try {
    res = await fetch(settings.accessTokenUrl ?? '', {
      method: 'POST',
      headers,
      body: form.toString(),
      timeoutMs: TOKEN_TIMEOUT_MS,
      signal,
      maxResponseBytes: 1024 * 1024,
    });
  } catch (err) {
    throw new TokenRefused(`The token endpoint ${host} could not be reached: ${(err as Error).message}`, 0);
  }
  const body = parseBody(res);
  if (res.status < 200 || res.status > 299 || typeof body.access_token !== 'string' || body.access_token === '') {
    const code = typeof body.error === 'string' ? body.error : undefined;
    throw new TokenRefused(`The token endpoint ${host} answered ${res.status}${code ? ` (${code})` : ''} without an access token`, res.status, code);
  }
  const expiresIn = Number(body.expires_in);
  return {
    accessToken: body.access_token,
    ...(typeof body.refresh_token === 'string' && body.refresh_token ? { refreshToken: body.refresh_token } : {}),
    ...(typeof body.token_type === 'string' ? { tokenType: body.token_type } : {}),
    ...(Number.isFinite(expiresIn) && expiresIn > 0 ? { expiresAt: now + expiresIn * 1000 } : {}),
  };
}

/** Where the person consents: the credential's authUrl with the authorization-code request's parameters. */
export function consentUrl(settings: Record<string, string>, redirectUri: string, state: string): string {
  const url = new URL(settings.authUrl ?? '');
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', settings.clientId ?? '');
  url.searchParams.set('redirect_uri', redirectUri);
  if (settings.scope) url.searchParams.set('scope', settings.scope);
  url.searchParams.set('state', state);
  if (settings.authQueryParameters) {
    for (const [k, v] of new URLSearchParams(settings.authQueryParameters.replace(/^\?/, ''))) url.searchParams.set(k, v);
  }
  return url.toString();
}

function parseBody(res: GuardedResponse): Record<string, unknown> {
  const text = res.body.toString('utf8');
  try {
    const v = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    // Some servers (GitHub's) answer form-encoded.
    return Object.fromEntries(new URLSearchParams(text));
  }
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'of the credential';
  }
}
