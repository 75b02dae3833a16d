import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { hasPermission, type Principal } from '../../kernel/auth/principal';
import type { SecretCipher } from '../../kernel/crypto';
import { errors, type FieldError } from '../../kernel/errors';
import { validateCallbackUrl, type OutboundPolicy } from '../../kernel/outbound';
import type { WebhookSender } from '../../kernel/webhooks';
import { withTransaction, type Tx } from '../../kernel/db/transaction';
import { permissionsOf, type Access, type Caller } from './access';
import type { InfraAlert, InfraDeletion, InfraWebhook, InfraWebhookDelivery } from './infra.types';
import { NotifyStore, type HookTargetRow } from './notify.store';

/**
 * Webhook registrations and alerts (user reference: docs/infrastructure.md). Deliveries go through the
 * platform's signed webhook sender; the secret is shown once and kept encrypted, since it signs every
 * later delivery. An event reaches a registration only if its owner may read it when it happens
 * (owner still valid, `webhook:read`, the event's read permission, the project visible): deliveries
 * are queued in the event's transaction, so a retry resends only what was allowed then. To anyone
 * else a registration does not exist (404). Each alert rule raises once when its condition starts.
 */

export const WEBHOOK_EVENTS = ['deployment.created', 'deployment.completed', 'deployment.superseded', 'alert.triggered'] as const;
export type InfraEvent = (typeof WEBHOOK_EVENTS)[number];

/** What an event is about: one project's services, or the cluster. */
export type EventSubject = { projectId: string } | 'cluster';

/** What the service needs to know of an API key that owns registrations (kernel.keys.byId's batch). */
export type KeyLookup = (
  ids: readonly string[],
) => Promise<ArrayLike<{ permissions: string[]; revokedAt: Date | null; expiresAt: Date | null } | null | Error>>;

export class NotifyService {
  private readonly store: NotifyStore;

  constructor(
    private readonly db: DataSource,
    private readonly access: Access,
    private readonly sender: WebhookSender,
    /** Built on first use (the platform secret is not read while the schema is only being emitted). */
    private readonly secrets: () => SecretCipher,
    private readonly policy: OutboundPolicy,
    private readonly keys: KeyLookup,
  ) {
    this.store = new NotifyStore(db);
  }

  private cipherInstance?: SecretCipher;
  private get cipher(): SecretCipher {
    return (this.cipherInstance ??= this.secrets());
  }

  async register(p: Principal, input: { url: string; events: string[]; active?: boolean | null }): Promise<InfraWebhook> {
    const caller = await this.access.caller(p, 'webhook:write');
    validateCallbackUrl(input.url, this.policy);
    const problems: FieldError[] = [];
    if (!input.events.length || input.events.some((e) => !WEBHOOK_EVENTS.includes(e as InfraEvent))) {
      problems.push({ field: 'events', message: `must be one or more of ${WEBHOOK_EVENTS.join(', ')}` });
    }
    if (problems.length) throw errors.validation(problems);
    const id = randomUUID();
    const secret = `whsec_${randomBytes(32).toString('base64url')}`;
    const hook = await this.store.insertWebhook({
      id,
      url: input.url,
      events: [...new Set(input.events)],
      active: input.active ?? true,
      secretEnc: this.cipher.encrypt(secret, id),
      createdBy: ownerOf(caller),
    });
    return { ...hook, secret };
  }

  async list(p: Principal): Promise<InfraWebhook[]> {
    const caller = await this.access.caller(p, 'webhook:read');
    return this.store.webhooks(seenBy(caller));
  }

  async remove(p: Principal, id: string): Promise<InfraDeletion> {
    const caller = await this.access.caller(p, 'webhook:write');
    await this.store.mustExist(id, seenBy(caller));
    await this.store.deleteWebhook(id);
    return { success: true, message: `Webhook ${id} deleted` };
  }

  async deliveries(p: Principal, id: string): Promise<InfraWebhookDelivery[]> {
    const caller = await this.access.caller(p, 'webhook:read');
    await this.store.mustExist(id, seenBy(caller));
    return this.sender.list({ resourceType: 'infra-webhook', resourceId: id, limit: 100 });
  }

  /**
   * Queues one delivery per active registration of `event` whose owner may read it now: in `tx`
   * when given, so the deliveries exist only if it commits and their jobs wake the workers right
   * after its COMMIT.
   */
  async emit(event: InfraEvent, data: Record<string, unknown>, subject: EventSubject, tx?: Tx): Promise<void> {
    const hooks = await this.reachable(event, subject, tx);
    for (const h of hooks) {
      const payload = { id: `evt_${randomUUID().replace(/-/g, '')}`, timestamp: new Date().toISOString(), event, data };
      await this.sender.send(
        {
          url: h.url,
          secret: this.cipher.decrypt(h.secret_enc, h.id),
          event,
          payload,
          source: { service: 'infra', resourceType: 'infra-webhook', resourceId: h.id },
        },
        tx,
      );
    }
  }

  /** Opens an alert unless one is open for the same rule and subject; only the opener notifies. */
  async raise(
    rule: string,
    subject: string,
    severity: 'warning' | 'critical',
    message: string,
    data: Record<string, unknown>,
    about: EventSubject = 'cluster',
  ): Promise<void> {
    await withTransaction(this.db, async (tx) => {
      const alertId = await this.store.openAlert(tx.manager, {
        rule,
        subject,
        severity,
        message,
        data,
        projectId: about === 'cluster' ? null : about.projectId,
      });
      if (alertId) await this.emit('alert.triggered', { alertId, rule, subject, severity, message, ...data }, about, tx);
    });
  }

  async resolve(rule: string, subject: string): Promise<void> {
    await this.store.resolveAlert(rule, subject);
  }

  /** The cluster's alerts, and a project's to those who may read its services (as `reachable` decides for deliveries). */
  async alerts(p: Principal, open: boolean): Promise<InfraAlert[]> {
    const caller = await this.access.caller(p, 'cluster:read');
    return this.store.alerts(open, hasPermission(caller.permissions, 'service:read') ? caller : null);
  }

  /** The registrations of `event` whose owner may read it now (the rule is in the comment at the top). */
  private async reachable(event: InfraEvent, subject: EventSubject, tx?: Tx): Promise<HookTargetRow[]> {
    const projectId = subject === 'cluster' ? null : subject.projectId;
    const needed = subject === 'cluster' ? 'cluster:read' : 'service:read';
    const hooks = await this.store.subscribers(tx?.manager ?? this.db.manager, event, projectId);
    const keyIds = [...new Set(hooks.map((h) => keyIdOf(h.created_by)).filter((id): id is string => id !== null))];
    const found = keyIds.length ? await this.keys(keyIds) : [];
    const liveKeys = new Map<string, string[]>();
    keyIds.forEach((id, i) => {
      const key = found[i];
      if (!key || key instanceof Error || key.revokedAt || (key.expiresAt && key.expiresAt.getTime() <= Date.now())) return;
      liveKeys.set(id, key.permissions);
    });
    const may = (permissions: string[]) => hasPermission(permissions, 'webhook:read') && hasPermission(permissions, needed);
    return hooks.filter((h) => {
      // The platform calling as itself (a service principal) acts for the organisation.
      if (h.created_by.startsWith('key:service:')) return true;
      const keyId = keyIdOf(h.created_by);
      if (keyId !== null) return may(liveKeys.get(keyId) ?? []);
      if (!h.owner_roles || !may(permissionsOf(h.owner_roles))) return false;
      return projectId === null || h.owner_roles.includes('admin') || h.project_visibility !== 'private' || h.owner_member;
    });
  }
}

/** How a registration names its owner. */
const ownerOf = (caller: Caller) => `${caller.kind}:${caller.id}`;
/** The registrations a caller sees: every one (null) for admins and keys, else its own. */
const seenBy = (caller: Caller) => (caller.admin ? null : ownerOf(caller));
/** The API key of a `key:<id>` owner, or null (a person, or the platform as a service). */
const keyIdOf = (owner: string) => (owner.startsWith('key:') && !owner.startsWith('key:service:') ? owner.slice(4) : null);
