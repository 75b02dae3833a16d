import { randomBytes, randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import type { Principal } from '../../kernel/auth/principal';
import type { SecretCipher } from '../../kernel/crypto';
import { errors, type FieldError } from '../../kernel/errors';
import { validateCallbackUrl, type OutboundPolicy } from '../../kernel/outbound';
import type { WebhookSender } from '../../kernel/webhooks';
import { rowById } from '../../kernel/db/rows';
import { Access } from './access';
import type { InfraAlert, InfraDeletion, InfraWebhook, InfraWebhookDelivery } from './infra.types';

/**
 * Webhook registrations and alerts. A delivery is `{id, timestamp, event, data}` sent through the
 * platform's webhook sender: signed `X-SVC-Signature: sha256=<hex HMAC-SHA256 of the raw body>`
 * with the registration's secret, retried with backoff, every attempt recorded. The secret is
 * returned once, at registration, and kept encrypted (it must sign every later delivery).
 *
 * Alert rules (each raises `alert.triggered` once, when its condition starts; the alert resolves
 * when the condition clears, and a later occurrence raises a new one):
 * - `deployment_failed` (critical): a rollout exceeded its progress deadline;
 * - `node_not_ready` (critical): a node's Ready condition is not True;
 * - `cpu_high`, `memory_high`, `disk_high` (warning): cluster utilisation at or over
 *   INFRA_ALERT_THRESHOLD_PERCENT (default 90).
 */

export const WEBHOOK_EVENTS = ['deployment.created', 'deployment.completed', 'alert.triggered'] as const;
export type InfraEvent = (typeof WEBHOOK_EVENTS)[number];

export class NotifyService {
  constructor(
    private readonly db: DataSource,
    private readonly access: Access,
    private readonly sender: WebhookSender,
    /** Built on first use (the platform secret is not read while the schema is only being emitted). */
    private readonly secrets: () => SecretCipher,
    private readonly policy: OutboundPolicy,
  ) {}

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
    const [row] = await this.db.query(
      `INSERT INTO infra.webhooks (id, url, events, active, secret_enc, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [id, input.url, [...new Set(input.events)], input.active ?? true, this.cipher.encrypt(secret, id), `${caller.kind}:${caller.id}`],
    );
    return { ...toWebhook(row), secret };
  }

  async list(p: Principal): Promise<InfraWebhook[]> {
    await this.access.caller(p, 'webhook:read');
    return (await this.db.query(`SELECT * FROM infra.webhooks ORDER BY created_at DESC, id`)).map(toWebhook);
  }

  async remove(p: Principal, id: string): Promise<InfraDeletion> {
    await this.access.caller(p, 'webhook:write');
    await this.row(id);
    await this.db.query(`DELETE FROM infra.webhooks WHERE id = $1`, [id]);
    return { success: true, message: `Webhook ${id} deleted` };
  }

  async deliveries(p: Principal, id: string): Promise<InfraWebhookDelivery[]> {
    await this.access.caller(p, 'webhook:read');
    await this.row(id);
    return this.sender.list({ resourceType: 'infra-webhook', resourceId: id, limit: 100 });
  }

  /** Queues one delivery per active registration of `event` (in `m`'s transaction when given). */
  async emit(event: InfraEvent, data: Record<string, unknown>, m?: EntityManager): Promise<void> {
    const q = m ?? this.db.manager;
    const hooks = await q.query(`SELECT id, url, secret_enc FROM infra.webhooks WHERE active AND $1 = ANY(events)`, [event]);
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
        m,
      );
    }
  }

  /** Opens an alert unless one is open for the same rule and subject; only the opener notifies. */
  async raise(rule: string, subject: string, severity: 'warning' | 'critical', message: string, data: Record<string, unknown>): Promise<void> {
    await this.db.transaction(async (m) => {
      const [row] = await m.query(
        `INSERT INTO infra.alerts (rule, subject, severity, message, data) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (rule, subject) WHERE resolved_at IS NULL DO NOTHING RETURNING *`,
        [rule, subject, severity, message, data],
      );
      if (row) await this.emit('alert.triggered', { alertId: row.id, rule, subject, severity, message, ...data }, m);
    });
  }

  async resolve(rule: string, subject: string): Promise<void> {
    await this.db.query(`UPDATE infra.alerts SET resolved_at = now() WHERE rule = $1 AND subject = $2 AND resolved_at IS NULL`, [rule, subject]);
  }

  async alerts(p: Principal, open: boolean): Promise<InfraAlert[]> {
    await this.access.caller(p, 'cluster:read');
    const rows = await this.db.query(`SELECT * FROM infra.alerts ${open ? 'WHERE resolved_at IS NULL' : ''} ORDER BY created_at DESC, id LIMIT 200`);
    return rows.map((r: any) => ({
      id: r.id,
      rule: r.rule,
      subject: r.subject,
      severity: r.severity,
      message: r.message,
      data: r.data,
      createdAt: r.created_at,
      resolvedAt: r.resolved_at,
    }));
  }

  private row(id: string) {
    return rowById(this.db, 'webhook', id, `SELECT id FROM infra.webhooks WHERE id = $1`);
  }
}

function toWebhook(r: any): InfraWebhook {
  return { id: r.id, url: r.url, events: r.events, active: r.active, secret: null, createdAt: r.created_at };
}
