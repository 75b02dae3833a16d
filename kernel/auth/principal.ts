import { AppError, errors } from '../errors';

export const TIERS = ['free', 'starter', 'professional', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];
export const KEY_SERVICES = ['control-plane', 'promptlib', 'engine', 'links', 'infra'] as const;
export type KeyService = (typeof KEY_SERVICES)[number];
export type Environment = 'live' | 'test';

/** Who is calling: resolved once at the edge, handed to every subgraph. */
export type Principal =
  | {
      kind: 'apiKey';
      keyId: string;
      name: string;
      service: KeyService;
      environment: Environment;
      tier: Tier;
      permissions: string[];
    }
  | { kind: 'user'; userId: string; service: 'feedback' | 'infra'; roles: string[]; permissions: string[] }
  /** The platform calling one of its own services (kernel/operations.ts); never built from a request. */
  | { kind: 'service'; name: string }
  | { kind: 'anonymous' };

export const ANONYMOUS: Principal = { kind: 'anonymous' };

/** The "permission" of operations open to any authenticated caller of any surface. */
export const ANY_CALLER = '@authenticated';
/** The "permission" of operations open to anyone (each must say why in its description). */
export const PUBLIC = '@public';

export type Surface = KeyService | 'feedback';

/**
 * An extra surface whose keys an operation also accepts, given after the permission:
 * `@Authorized('workflow:read', alsoOn('control-plane'))` — for one service's operations that
 * another service's documented paths expose (the control plane's workflow paths run the engine's).
 */
export const alsoOn = (surface: Surface) => `surface:${surface}`;

/** `*` grants everything; `resource:*` grants every action on a resource. */
export function hasPermission(granted: readonly string[], required: string): boolean {
  if (granted.includes('*') || granted.includes(required)) return true;
  const [resource] = required.split(':');
  return granted.includes(`${resource}:*`);
}

export function isPlatformAdmin(p: Principal): boolean {
  return p.kind === 'apiKey' && p.service === 'control-plane' && p.permissions.includes('*');
}

/**
 * The check every operation makes inside its subgraph: the caller is authenticated, holds a key
 * (or session) this surface accepts, and has the permission the operation names.
 * `permission` undefined means "any authenticated caller of this surface".
 */
export function authorize(p: Principal, surface: Surface | readonly Surface[], permission?: string): void {
  if (permission === PUBLIC || p.kind === 'service') return;
  if (p.kind === 'anonymous') throw errors.missingAuthorization();
  if (permission === ANY_CALLER) return;
  const surfaces: readonly Surface[] = typeof surface === 'string' ? [surface] : surface;
  if (p.kind === 'apiKey' && !surfaces.includes(p.service) && !isPlatformAdmin(p)) {
    // Name what is actually missing: the key's service, not a permission it may well hold.
    throw new AppError(
      'insufficient_permissions',
      `This operation takes ${article(surfaces[0]!)} ${surfaces.join(' or ')} key (or a control-plane key holding *); this is ${article(p.service)} ${p.service} key`,
      { required: surfaces.map((s) => `${s} key`), has: `${p.service} key`, permission: permission ?? null },
    );
  }
  if (p.kind === 'user' && !surfaces.includes(p.service)) throw errors.missingAuthorization();
  if (permission && !hasPermission(p.permissions, permission)) {
    throw errors.insufficientPermissions(permission, p.permissions);
  }
}

const article = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a');
