import { exec, one, rowById, rows, type Queryable } from '../../kernel/db/rows';
import type { InfraAlert, InfraWebhook } from './infra.types';
import type { Viewer } from './project.store';

/**
 * How webhook registrations (infra.webhooks, the secret encrypted) and alerts (infra.alerts, at
 * most one open per rule and subject) are kept. Methods that take a `Queryable` run in the
 * caller's transaction.
 */

/** What a delivery needs of a registration, and what it takes to know whether its owner may read the event. */
export interface HookTargetRow {
  id: string;
  url: string;
  secret_enc: Buffer;
  /** `user:<id>` or `key:<id>`. */
  created_by: string;
  /** The owning person's current roles; null when the owner is a key or the person is gone. */
  owner_roles: string[] | null;
  /** Whether the owning person is a member of the event's project (false without a project). */
  owner_member: boolean;
  /** The event's project's visibility; null without a project. */
  project_visibility: string | null;
}

interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  secret_enc: Buffer;
  created_by: string;
  created_at: Date;
}

interface AlertRow {
  id: string;
  rule: string;
  subject: string;
  severity: string;
  message: string;
  data: Record<string, unknown>;
  created_at: Date;
  resolved_at: Date | null;
}

export class NotifyStore {
  constructor(private readonly db: Queryable) {}

  // ---- webhooks -----------------------------------------------------------------------------

  async insertWebhook(hook: { id: string; url: string; events: string[]; active: boolean; secretEnc: Buffer; createdBy: string }): Promise<InfraWebhook> {
    const row = await one<WebhookRow>(
      this.db,
      `INSERT INTO infra.webhooks (id, url, events, active, secret_enc, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
      [hook.id, hook.url, hook.events, hook.active, hook.secretEnc, hook.createdBy],
    );
    return toWebhook(row!);
  }

  /** Every registration, or with `owner` (`user:<id>`, `key:<id>`) only the ones it made. */
  async webhooks(owner: string | null): Promise<InfraWebhook[]> {
    const found = await rows<WebhookRow>(this.db, `SELECT * FROM infra.webhooks WHERE $1::text IS NULL OR created_by = $1 ORDER BY created_at DESC, id`, [
      owner,
    ]);
    return found.map(toWebhook);
  }

  /** 404 unless the registration exists and, with `owner`, was made by it. */
  async mustExist(id: string, owner: string | null): Promise<void> {
    await rowById(this.db, 'webhook', id, `SELECT id FROM infra.webhooks WHERE id = $1 AND ($2::text IS NULL OR created_by = $2)`, [id, owner]);
  }

  deleteWebhook(id: string): Promise<void> {
    return exec(this.db, `DELETE FROM infra.webhooks WHERE id = $1`, [id]);
  }

  /** The active registrations of `event`, each with its owner's roles and membership of `projectId` (null: no project) as they are now. */
  subscribers(q: Queryable, event: string, projectId: string | null): Promise<HookTargetRow[]> {
    return rows<HookTargetRow>(
      q,
      `SELECT w.id, w.url, w.secret_enc, w.created_by, u.roles AS owner_roles,
              EXISTS (SELECT 1 FROM infra.project_members m WHERE m.project_id = $2 AND m.user_id = u.id) AS owner_member,
              (SELECT visibility FROM infra.projects WHERE id = $2) AS project_visibility
         FROM infra.webhooks w LEFT JOIN infra.users u ON w.created_by = 'user:' || u.id::text
        WHERE w.active AND $1 = ANY(w.events)`,
      [event, projectId],
    );
  }

  // ---- alerts -------------------------------------------------------------------------------

  /** Opens the alert (of a project's, or of the cluster's: null) unless one is open for the same rule and subject: its id, or undefined. */
  async openAlert(
    q: Queryable,
    a: { rule: string; subject: string; severity: string; message: string; data: Record<string, unknown>; projectId: string | null },
  ): Promise<string | undefined> {
    const row = await one<AlertRow>(
      q,
      `INSERT INTO infra.alerts (rule, subject, severity, message, data, project_id) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (rule, subject) WHERE resolved_at IS NULL DO NOTHING RETURNING *`,
      [a.rule, a.subject, a.severity, a.message, a.data, a.projectId],
    );
    return row?.id;
  }

  resolveAlert(rule: string, subject: string): Promise<void> {
    return exec(this.db, `UPDATE infra.alerts SET resolved_at = now() WHERE rule = $1 AND subject = $2 AND resolved_at IS NULL`, [rule, subject]);
  }

  /**
   * The latest 200 alerts, or the open ones: the cluster's, and the projects' that `viewer` may
   * see (none when null).
   */
  async alerts(open: boolean, viewer: Viewer | null): Promise<InfraAlert[]> {
    const params: unknown[] = [];
    const projects = viewer === null ? 'false' : viewer.admin ? 'true' : visibleProject(viewer, params);
    const found = await rows<AlertRow>(
      this.db,
      `SELECT a.* FROM infra.alerts a LEFT JOIN infra.projects p ON p.id = a.project_id
        WHERE (a.project_id IS NULL OR ${projects}) ${open ? 'AND a.resolved_at IS NULL' : ''}
        ORDER BY a.created_at DESC, a.id LIMIT 200`,
      params,
    );
    return found.map((r) => ({
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
}

/** A SQL condition (over alias `p`) for a project `viewer` (a person) may see; pushes its parameter onto `params`. */
function visibleProject(viewer: Viewer, params: unknown[]): string {
  return `(p.visibility <> 'private' OR EXISTS (SELECT 1 FROM infra.project_members m WHERE m.project_id = p.id AND m.user_id::text = $${params.push(viewer.id)}))`;
}

function toWebhook(r: WebhookRow): InfraWebhook {
  return { id: r.id, url: r.url, events: r.events, active: r.active, secret: null, createdAt: r.created_at };
}
