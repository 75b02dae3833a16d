import { withTransaction } from '../../kernel/db/transaction';
import { outsideAudit } from '../../kernel/audit';
import { checkWindow } from '../../kernel/db/page';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { hashSecret, verifySecret } from '../../kernel/auth/passwords';
import type { Principal } from '../../kernel/auth/principal';
import { isPlatformAdmin } from '../../kernel/auth/principal';
import { AppError, errors, type FieldError } from '../../kernel/errors';
import type { EventBus } from '../../kernel/events';
import { TOPIC } from '../../kernel/topics';
import * as store from './link.store';
import type { LinkView, PendingVisit, Visit } from './link.store';

/**
 * Short links with optional password or PIN (rules: docs/links.md). Secrets are kept only as argon2id
 * hashes. The lockout window is checked, and an attempt reserved under a lock, before any hashing, so a
 * locked-out caller costs no hash; the lockout is what makes a PIN's million values unguessable.
 */

export const CLASSIFICATIONS = ['general', 'personal', 'work', 'nsfw'] as const;
export const RESERVED_SLUGS = ['api', 'admin', 'static', 'assets', 'health'];
export const LOCKOUT = { failures: 5, windowSeconds: 15 * 60 };
const SLUG = /^[A-Za-z0-9_-]{3,64}$/;

export interface LinkInput {
  url?: string | null;
  customSlug?: string | null;
  password?: string | null;
  pin?: string | null;
  protectionHint?: string | null;
  contentClassification?: string | null;
  expiresAt?: Date | string | null;
  isActive?: boolean | null;
  removeProtection?: boolean | null;
}

/** Why a link cannot be visited now, or undefined when it can. */
export function unavailable(link: LinkView, now = Date.now()): 'inactive' | 'expired' | undefined {
  if (!link.isActive) return 'inactive';
  if (link.expiresAt && link.expiresAt.getTime() <= now) return 'expired';
  return undefined;
}

export class LinkService {
  private pending: PendingVisit[] = [];
  private flushTimer?: NodeJS.Timeout;
  private flushing?: Promise<void>;

  /** slug -> link, for the public short link; emptied on every change in any process. */
  private readonly bySlug = new Map<string, { link: LinkView | null; at: number }>();

  constructor(
    private readonly db: DataSource,
    private readonly events: EventBus,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {
    events.subscribe(TOPIC.linksChanged, ({ slug }: { slug?: string }) => {
      if (slug) this.bySlug.delete(slug);
      else this.bySlug.clear();
    });
  }

  owner(principal: Principal): string {
    if (principal.kind === 'apiKey') return principal.keyId;
    if (principal.kind === 'user') return principal.userId;
    throw errors.missingAuthorization();
  }

  async create(principal: Principal, input: LinkInput): Promise<LinkView> {
    const problems: FieldError[] = [];
    const url = checkUrl(problems, input.url, true)!;
    const slug = input.customSlug ?? null;
    if (slug !== null) checkSlug(problems, slug);
    const protection = checkProtection(problems, input, false);
    const common = checkCommon(problems, input);
    if (problems.length) throw errors.validation(problems);
    const secretHash = protection.secret ? await hashSecret(protection.secret) : null;
    for (let tries = 0; ; tries++) {
      const candidate = slug ?? randomSlug();
      try {
        const link = await store.insert(this.db, candidate, this.owner(principal), {
          url,
          protectionType: protection.type ?? 'none',
          secretHash,
          hint: common.hint ?? null,
          classification: common.classification ?? 'general',
          expiresAt: common.expiresAt ?? null,
          isActive: common.isActive ?? true,
        });
        // A visit to the slug before it existed left "no such link" in the redirect caches.
        await this.changed(link.slug);
        return link;
      } catch (err) {
        if ((err as { code?: string }).code !== '23505') throw err;
        if (slug !== null) throw errors.alreadyExists('custom_slug', slug);
        if (tries > 5) throw err;
      }
    }
  }

  async get(principal: Principal, id: string): Promise<LinkView> {
    const link = await store.byId(this.db, id);
    // Another owner's link is as unknown as a missing one: its existence is not disclosed.
    if (!isPlatformAdmin(principal) && link.userId !== this.owner(principal)) throw errors.notFound('link', id);
    return link;
  }

  async list(principal: Principal, limit: number, offset: number): Promise<{ links: LinkView[]; total: number }> {
    checkWindow({ limit, offset });
    return store.list(this.db, { all: isPlatformAdmin(principal), userId: this.owner(principal) }, { limit, offset });
  }

  /** Protection changes by one transition table: password or pin sets it, remove_protection clears it. */
  async update(principal: Principal, id: string, input: LinkInput): Promise<LinkView> {
    const current = await this.get(principal, id);
    const problems: FieldError[] = [];
    const url = input.url != null ? checkUrl(problems, input.url, false) : undefined;
    const protection = checkProtection(problems, input, true);
    const common = checkCommon(problems, input);
    if (problems.length) throw errors.validation(problems);
    const secretHash = protection.secret ? await hashSecret(protection.secret) : undefined;
    const type = protection.remove ? 'none' : (protection.type ?? current.protectionType);
    const link = await store.update(
      this.db,
      id,
      {
        url: url ?? current.url,
        protectionType: type,
        secretHash: secretHash ?? null,
        hint: common.hint ?? null,
        classification: common.classification ?? current.contentClassification,
        expiresAt: common.expiresAt ?? null,
        isActive: common.isActive ?? current.isActive,
      },
      { setHint: input.protectionHint !== undefined, setExpiry: input.expiresAt !== undefined },
    );
    await this.changed(current.slug);
    return link;
  }

  async delete(principal: Principal, id: string): Promise<{ id: string; deletedAt: Date }> {
    const link = await this.get(principal, id);
    const deletedAt = await withTransaction(this.db, ({ manager: m }) => store.deleteById(m, id));
    await this.changed(link.slug);
    return { id, deletedAt };
  }

  async visits(principal: Principal, id: string, limit: number, offset: number): Promise<{ visits: Visit[]; total: number }> {
    await this.flush();
    const link = await this.get(principal, id);
    checkWindow({ limit, offset });
    return { visits: await store.visits(this.db, id, limit, offset), total: link.visits };
  }

  /** The public view of a slug (cached, invalidated on every change); null when unknown. */
  async bySlugCached(slug: string): Promise<LinkView | null> {
    const hit = this.cached(slug);
    if (hit !== undefined) return hit;
    const link = SLUG.test(slug) ? await this.findBySlug(slug) : null;
    if (this.bySlug.size > 50_000) this.bySlug.clear();
    this.bySlug.set(slug, { link, at: Date.now() });
    return link;
  }

  /** What the cache holds for `slug` (null: no such link), or undefined when it holds nothing fresh: no database read. */
  cached(slug: string): LinkView | null | undefined {
    const hit = this.bySlug.get(slug);
    return hit && Date.now() - hit.at < 60_000 ? hit.link : undefined;
  }

  async findBySlug(slug: string): Promise<LinkView | null> {
    return store.bySlug(this.db, slug);
  }

  /**
   * Counts a visit. Visits are written in batches (every 100 ms, or at 500) in one statement with
   * their links' counters, so a redirect costs no database round trip; reads of visits flush first,
   * and the service's stop flushes what is left when the process drains, so none is lost.
   */
  recordVisit(link: LinkView, visit: Omit<Visit, 'at'>): void {
    const clip = (v: string | null, n: number) => (v ? v.slice(0, n) : null);
    this.pending.push({
      linkId: link.id,
      at: new Date(),
      referrer: clip(visit.referrer, 2048),
      userAgent: clip(visit.userAgent, 512),
      country: clip(visit.country, 8),
    });
    // One flush at a time: while one is writing, the timer takes what comes meanwhile (a flush per
    // visit would each wait on the write in flight).
    if (this.pending.length >= 500 && !this.flushing) void this.flush();
    else if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => void this.flush(), 100);
      this.flushTimer.unref();
    }
  }

  /** Writes the buffered visits (links deleted meanwhile are skipped). */
  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    while (this.flushing) await this.flushing;
    if (!this.pending.length) return;
    const batch = this.pending.splice(0);
    this.flushing = store
      .insertVisits(this.db, batch)
      .then(
        () => undefined,
        (err) => {
          // Kept for the next flush (bounded): a passing database error loses no visit.
          if (this.pending.length < 100_000) this.pending.unshift(...batch);
          this.onError(err);
        },
      )
      .finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  /**
   * Public verification of a protected link from `ip`. The lockout is checked, and the attempt
   * reserved as a failure, before the secret is hashed; a right secret turns it into a success.
   */
  async verify(linkId: string, secret: { password?: string | null; pin?: string | null }, ip: string): Promise<LinkView> {
    const { link, secretHash } = await store.withSecret(this.db, linkId);
    const gone = unavailable(link);
    if (gone) throw new AppError('link_gone', `The link is ${gone}`, { reason: gone });
    if (link.protectionType === 'none') return link;
    const given = link.protectionType === 'pin' ? (secret.pin ?? secret.password) : (secret.password ?? secret.pin);
    if (typeof given !== 'string' || !given) throw errors.field(link.protectionType, 'is required');
    const attempt = await this.reserveAttempt(linkId, ip);
    // A protected link always has a hash (the table's CHECK ties secret_hash to protection_type).
    const ok = given.length <= 128 && (await verifySecret(secretHash!, given));
    if (!ok) throw new AppError('invalid_credentials', `Wrong ${link.protectionType === 'pin' ? 'PIN' : 'password'}`, { attempts_left: attempt.left });
    await store.markSucceeded(this.db, attempt.id);
    return link;
  }

  /** Counted whether or not the secret is right, so outside the unlock's audit entry (which rides on markSucceeded). */
  private async reserveAttempt(linkId: string, ip: string): Promise<{ id: string; left: number }> {
    return outsideAudit(() =>
      withTransaction(this.db, async ({ manager: m }) => {
        await store.lockAttempts(m, linkId, ip);
        const w = await store.failures(m, linkId, ip, LOCKOUT.windowSeconds);
        if (w.n >= LOCKOUT.failures) {
          const retryAfter = Math.max(1, Math.ceil((w.oldest!.getTime() + LOCKOUT.windowSeconds * 1000 - Date.now()) / 1000));
          throw new AppError('too_many_attempts', `Too many failed attempts from this address: try again in ${Math.ceil(retryAfter / 60)} minute(s)`, {
            retryAfter,
            limit: LOCKOUT.failures,
            window: `${LOCKOUT.windowSeconds}s`,
          });
        }
        const id = await store.insertAttempt(m, linkId, ip);
        return { id, left: LOCKOUT.failures - w.n - 1 };
      }),
    );
  }

  private async changed(slug: string): Promise<void> {
    this.bySlug.delete(slug);
    await this.events.publish(TOPIC.linksChanged, { slug });
  }
}

function randomSlug(): string {
  return randomBytes(6)
    .toString('base64url')
    .replace(/[^A-Za-z0-9]/g, 'x');
}

function checkUrl(problems: FieldError[], url: unknown, required: boolean): string | undefined {
  if (url == null || url === '') {
    if (required) problems.push({ field: 'url', message: 'is required' });
    return undefined;
  }
  if (typeof url !== 'string' || url.length > 2048) {
    problems.push({ field: 'url', message: 'must be an http or https URL of at most 2048 characters' });
    return undefined;
  }
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
    return parsed.toString();
  } catch {
    problems.push({ field: 'url', message: 'must be an http or https URL' });
    return undefined;
  }
}

function checkSlug(problems: FieldError[], slug: string): void {
  if (!SLUG.test(slug)) problems.push({ field: 'custom_slug', message: 'must be 3 to 64 letters, digits, "-" or "_"' });
  else if (RESERVED_SLUGS.includes(slug.toLowerCase())) problems.push({ field: 'custom_slug', message: `"${slug}" is reserved` });
}

function checkProtection(problems: FieldError[], input: LinkInput, update: boolean): { type?: 'password' | 'pin'; secret?: string; remove?: boolean } {
  const { password, pin } = input;
  if (password != null && pin != null) {
    problems.push({ field: 'pin', message: 'give a password or a pin, not both' });
    return {};
  }
  if (input.removeProtection != null && !update) problems.push({ field: 'remove_protection', message: 'only applies on update' });
  if (input.removeProtection && (password != null || pin != null)) {
    problems.push({ field: 'remove_protection', message: 'cannot be combined with a new password or pin' });
    return {};
  }
  if (password != null) {
    if (typeof password !== 'string' || [...password].length < 4 || [...password].length > 128)
      problems.push({ field: 'password', message: 'must be 4 to 128 characters' });
    return { type: 'password', secret: password };
  }
  if (pin != null) {
    if (typeof pin !== 'string' || !/^(\d{4}|\d{6})$/.test(pin)) problems.push({ field: 'pin', message: 'must be exactly 4 or 6 digits' });
    return { type: 'pin', secret: pin };
  }
  return { remove: input.removeProtection === true };
}

function checkCommon(problems: FieldError[], input: LinkInput): { hint?: string | null; classification?: string; expiresAt?: Date | null; isActive?: boolean } {
  const out: ReturnType<typeof checkCommon> = {};
  if (input.protectionHint != null) {
    if (typeof input.protectionHint !== 'string' || input.protectionHint.length > 200)
      problems.push({ field: 'protection_hint', message: 'must be at most 200 characters' });
    else out.hint = input.protectionHint;
  }
  if (input.contentClassification != null) {
    if (!(CLASSIFICATIONS as readonly string[]).includes(input.contentClassification)) {
      problems.push({ field: 'content_classification', message: `must be one of ${CLASSIFICATIONS.join(', ')}` });
    } else out.classification = input.contentClassification;
  }
  if (input.expiresAt != null) {
    const at = new Date(input.expiresAt);
    if (Number.isNaN(at.getTime())) problems.push({ field: 'expires_at', message: 'must be an ISO 8601 timestamp' });
    else out.expiresAt = at;
  }
  if (input.isActive != null) out.isActive = input.isActive;
  return out;
}
