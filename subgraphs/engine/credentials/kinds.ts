import { errors, type FieldError } from '../../../kernel/errors';
import { ownEntry } from '../../../kernel/names';

/**
 * The credential types, under n8n's names, and their fields. A `secret` field is kept only in
 * the ciphertext and never shown; the others are shown as the credential's settings. An OAuth2
 * credential also keeps its tokens (`oauthTokenData`) in the ciphertext.
 */

interface FieldSpec {
  secret?: boolean;
  required?: boolean;
  /** The allowed values; the first is the default. */
  oneOf?: readonly string[];
  url?: boolean;
}

type Kind = Record<string, FieldSpec>;

export const CREDENTIAL_KINDS: Readonly<Record<string, Kind>> = {
  httpHeaderAuth: { name: { required: true }, value: { secret: true, required: true } },
  httpQueryAuth: { name: { required: true }, value: { secret: true, required: true } },
  httpBasicAuth: { user: { required: true }, password: { secret: true } },
  httpBearerAuth: { token: { secret: true, required: true } },
  httpCustomAuth: { json: { secret: true, required: true } },
  oAuth2Api: {
    grantType: { oneOf: ['clientCredentials', 'authorizationCode'], required: true },
    accessTokenUrl: { required: true, url: true },
    authUrl: { url: true },
    clientId: { required: true },
    clientSecret: { secret: true, required: true },
    scope: {},
    authQueryParameters: {},
    authentication: { oneOf: ['header', 'body'] },
  },
  crypto: { hmacSecret: { secret: true }, signPrivateKey: { secret: true } },
};

export const CREDENTIAL_TYPES = Object.keys(CREDENTIAL_KINDS);

/** The data of a new credential checked against its type: field errors name `data.<field>`. */
export function checkData(type: string, data: Record<string, unknown>): Record<string, string> {
  const kind = ownEntry(CREDENTIAL_KINDS, type);
  if (!kind) throw errors.field('type', `must be one of ${CREDENTIAL_TYPES.join(', ')}`);
  const problems: FieldError[] = [];
  const out: Record<string, string> = {};
  for (const key of Object.keys(data))
    if (!ownEntry(kind, key))
      problems.push({ field: `data.${key}`, message: `is not a field of ${type} (${Object.keys(kind).join(', ')})`, reason: 'unknown_field' });
  for (const [key, spec] of Object.entries(kind)) {
    const v = data[key];
    if (v === undefined || v === null || v === '') {
      if (spec.required) problems.push({ field: `data.${key}`, message: 'is required', reason: 'required_field_missing' });
      else if (spec.oneOf) out[key] = spec.oneOf[0]!;
      continue;
    }
    if (typeof v !== 'string' || v.length > 100_000) {
      problems.push({ field: `data.${key}`, message: 'must be a string of at most 100000 characters', reason: 'invalid_type' });
      continue;
    }
    if (spec.oneOf && !spec.oneOf.includes(v)) problems.push({ field: `data.${key}`, message: `must be one of ${spec.oneOf.join(', ')}` });
    if (spec.url && !/^https?:\/\/[^\s]+$/.test(v)) problems.push({ field: `data.${key}`, message: 'must be an http(s) URL' });
    out[key] = v;
  }
  if (type === 'oAuth2Api' && out.grantType === 'authorizationCode' && !out.authUrl) {
    problems.push({ field: 'data.authUrl', message: 'is required for the authorizationCode grant', reason: 'required_field_missing' });
  }
  if (type === 'httpCustomAuth' && out.json !== undefined && !customAuth(out.json)) {
    problems.push({ field: 'data.json', message: 'must be a JSON object with any of headers, qs, body (each an object)' });
  }
  if (type === 'crypto' && !out.hmacSecret && !out.signPrivateKey) {
    problems.push({ field: 'data.hmacSecret', message: 'hmacSecret or signPrivateKey is required', reason: 'required_field_missing' });
  }
  if (problems.length) throw errors.validation(problems);
  return out;
}

/** The fields that may be shown: every field of the type that is not secret. */
export function settingsOf(type: string, data: Record<string, unknown>): Record<string, string> {
  const kind = ownEntry(CREDENTIAL_KINDS, type) ?? {};
  const out: Record<string, string> = {};
  for (const [key, spec] of Object.entries(kind)) if (!spec.secret && typeof data[key] === 'string') out[key] = data[key] as string;
  return out;
}

interface CustomAuth {
  headers?: Record<string, unknown>;
  qs?: Record<string, unknown>;
  body?: Record<string, unknown>;
}

/** httpCustomAuth's JSON: `{headers, qs, body}`, each an object when present; undefined when it is not that. */
function customAuth(json: string): CustomAuth | undefined {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return undefined;
  }
  const obj = (x: unknown) => x === undefined || (x !== null && typeof x === 'object' && !Array.isArray(x));
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const c = v as Record<string, unknown>;
  if (!obj(c.headers) || !obj(c.qs) || !obj(c.body)) return undefined;
  return c as CustomAuth;
}
