import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import { Where } from './db/page';
import { withTransaction, type Tx } from './db/transaction';
import { SecretCipher } from './crypto';
import { AppError, errors } from './errors';
import type { Logger } from './logger';
import { guardedFetch, validateCallbackUrl, type OutboundPolicy } from './outbound';
import type { JobAttempt, JobContext, Queue } from './queue';
import { UUID } from './ids';
import { JOB, type Jobs } from './topics';
import { inSpan } from './tracing';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';

/**
 * Signed outbound webhooks: a platform.webhook_deliveries row plus a 'webhook.deliver' job, each run
 * one recorded attempt; retries are the queue's. The body is serialised once, so every attempt signs
 * and sends the same bytes. Without a secret no X-SVC-Signature is sent: an empty-key HMAC is forgeable.
 */

/** A delivery attempt's span attributes: the destination (host and port, never the path's secrets) and the delivery. */
function attemptAttributes(url: string, event: string, deliveryId: string, attempt: number) {
  const target = URL.canParse(url) ? new URL(url) : null;
  return {
    ...(target ? { 'server.address': target.hostname, 'server.port': Number(target.port) || (target.protocol === 'https:' ? 443 : 80) } : {}),
    'webhook.event': event,
    'webhook.delivery_id': deliveryId,
    'webhook.attempt': attempt,
  };
}

export const WEBHOOK_USER_AGENT = 'automation-platform-webhooks/1';
export const SIGNATURE_HEADER = 'X-SVC-Signature';

export interface WebhookSource {
  service: string;
  resourceType: string;
  resourceId: string;
}

export interface WebhookRequest {
  url: string;
  secret?: string;
  event: string;
  payload: unknown;
  source: WebhookSource;
}

export interface DeliveryAttempt {
  attempt: number;
  /** The receiver's HTTP status; null when no answer came (network error, timeout, refusal). */
  status: number | null;
  /** Why the attempt failed; null for a 2xx. */
  error: string | null;
  durationMs: number;
  at: Date;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface Delivery {
  id: string;
  url: string;
  event: string;
  state: DeliveryState;
  /** Whether the delivery carries X-SVC-Signature (a secret was given). The secret itself is never returned. */
  signed: boolean;
  attempts: DeliveryAttempt[];
  createdAt: Date;
  deliveredAt: Date | null;
  source: WebhookSource;
}

export interface WebhookSenderOptions {
  db: DataSource;
  queue: Queue;
  logger: Logger;
  policy: OutboundPolicy;
  /** 32 bytes of platform secret; the key that encrypts webhook secrets at rest is derived from it. */
  encryptionKey: Buffer;
  maxAttempts?: number;
  backoffMs?: number;
  /** Per attempt. */
  timeoutMs?: number;
}

type DeliverJob = Jobs[typeof JOB.webhookDeliver];

/** Thrown by the job handler so the queue retries (or, when not retryable, gives up at once). */
class DeliveryAttemptError extends Error {
  readonly code = 'webhook_delivery_failed';
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'DeliveryAttemptError';
  }
}

const RESPONSE_BYTES_KEPT = 64 * 1024;
/** Headroom between the per-attempt HTTP timeout and the job's own timeout, for the DB writes. */
const JOB_TIMEOUT_MARGIN_MS = 5_000;

export class WebhookSender {
  private readonly db: DataSource;
  private readonly queue: Queue;
  private readonly logger: Logger;
  private readonly policy: OutboundPolicy;
  private readonly maxAttempts: number;
  private readonly backoffMs: number;
  private readonly timeoutMs: number;
  private readonly cipher: SecretCipher;

  constructor(opts: WebhookSenderOptions) {
    this.db = opts.db;
    this.queue = opts.queue;
    this.logger = opts.logger.child({ component: 'webhooks' });
    this.policy = opts.policy;
    this.maxAttempts = opts.maxAttempts ?? 6;
    this.backoffMs = opts.backoffMs ?? 2_000;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.cipher = new SecretCipher(opts.encryptionKey, 'automation-platform/webhook-secret/v1');
  }

  registerWorker(): void {
    this.queue.register(JOB.webhookDeliver, (ctx) => this.attempt(ctx), {
      onFinalFailure: (ctx, error) => this.giveUp(ctx, error),
    });
  }

  /** Given `tx`, the delivery is stored in that transaction and its job wakes the workers after the COMMIT. */
  async send(req: WebhookRequest, tx?: Tx): Promise<string> {
    validateCallbackUrl(req.url, this.policy);
    if (typeof req.event !== 'string' || req.event.length === 0 || req.event.length > 200) {
      throw errors.field('event', 'must be a string of 1 to 200 characters');
    }
    const { service, resourceType, resourceId } = req.source ?? {};
    if (!service || !resourceType || !resourceId) {
      throw errors.field('source', 'service, resourceType and resourceId are required');
    }
    let body: string;
    try {
      body = JSON.stringify(req.payload) ?? 'null';
    } catch {
      throw errors.field('payload', 'must be serialisable as JSON');
    }
    const id = randomUUID();
    const secretEnc = req.secret ? this.cipher.encrypt(req.secret, id) : null;

    await withTransaction(tx ?? this.db, async (tx) => {
      await tx.manager.query(
        `INSERT INTO platform.webhook_deliveries
           (id, url, event, body, secret_enc, source_service, resource_type, resource_id, max_attempts)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [id, req.url, req.event, body, secretEnc, service, resourceType, resourceId, this.maxAttempts],
      );
      await this.queue.enqueue(
        JOB.webhookDeliver,
        { deliveryId: id },
        { maxAttempts: this.maxAttempts, backoffMs: this.backoffMs, timeoutMs: this.timeoutMs + JOB_TIMEOUT_MARGIN_MS, key: `${JOB.webhookDeliver}:${id}` },
        tx,
      );
    });
    return id;
  }

  async get(id: string): Promise<Delivery | null> {
    if (!UUID.test(id)) return null;
    const rows: DeliveryRow[] = await this.db.query(`SELECT ${DELIVERY_COLUMNS} FROM platform.webhook_deliveries WHERE id = $1`, [id]);
    if (rows.length === 0) return null;
    return (await this.withAttempts(rows))[0];
  }

  async list(filter: { resourceType?: string; resourceId?: string; limit?: number } = {}): Promise<Delivery[]> {
    const where = new Where().equals('resource_type', filter.resourceType).equals('resource_id', filter.resourceId);
    const limit = Number.isFinite(filter.limit) ? Math.min(Math.max(Math.trunc(filter.limit!), 1), 500) : 50;
    const rows: DeliveryRow[] = await this.db.query(
      `SELECT ${DELIVERY_COLUMNS} FROM platform.webhook_deliveries ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
      where.params,
    );
    return this.withAttempts(rows);
  }

  // -------------------------------------------------------------------------------------------

  private async attempt(ctx: JobContext<DeliverJob>): Promise<unknown> {
    const id = ctx.data.deliveryId;
    const rows: { url: string; event: string; body: string; secret_enc: Buffer | null; state: DeliveryState }[] = await this.db.query(
      `SELECT url, event, body, secret_enc, state FROM platform.webhook_deliveries WHERE id = $1`,
      [id],
    );
    const row = rows[0];
    if (!row) {
      this.logger.warn('webhook delivery row missing; dropping job', { deliveryId: id });
      return { skipped: 'missing' };
    }
    if (row.state !== 'pending') return { skipped: row.state };

    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': WEBHOOK_USER_AGENT,
      'X-SVC-Event': row.event,
      'X-SVC-Delivery': id,
    };
    const started = performance.now();
    let status: number | null = null;
    let error: string | null = null;
    let retryable = true;
    try {
      if (row.secret_enc) headers[SIGNATURE_HEADER] = sign(this.cipher.decrypt(row.secret_enc, id), row.body);
    } catch (err) {
      // The platform key changed or the row was tampered with: no retry can sign this delivery.
      error = `secret_unreadable: ${(err as Error).message}`;
      retryable = false;
    }
    if (error === null) {
      // One span per attempt, whatever its outcome; the POST (and its traceparent) is its child.
      await inSpan('webhook attempt', { kind: SpanKind.INTERNAL, attributes: attemptAttributes(row.url, row.event, id, ctx.attempt) }, async (span) => {
        try {
          const res = await guardedFetch(
            row.url,
            { method: 'POST', headers, body: row.body, timeoutMs: this.timeoutMs, signal: ctx.signal, maxResponseBytes: RESPONSE_BYTES_KEPT },
            this.policy,
          );
          status = res.status;
          if (status < 200 || status > 299) error = `HTTP ${status}`;
        } catch (err) {
          error = err instanceof AppError ? `${err.code}: ${err.message}` : String(err);
          // A refused destination or protocol will not change by waiting.
          retryable = !(err instanceof AppError && err.code === 'WEBHOOK_INVALID');
        }
        if (status !== null) span?.setAttribute('http.response.status_code', status);
        if (error !== null) span?.setStatus({ code: SpanStatusCode.ERROR, message: error });
      });
    }
    const durationMs = Math.round(performance.now() - started);
    // When the queue aborted the attempt it decides what follows: a shutdown hands the job back
    // with the same attempt number (this row is then overwritten), a timeout on the last attempt
    // ends in giveUp(). Only a cancellation ends the delivery here.
    const abortedBy = ctx.signal.aborted ? (ctx.signal.reason as { code?: string } | undefined)?.code : undefined;
    const final = !retryable || abortedBy === 'cancelled' || (!ctx.signal.aborted && ctx.attempt >= ctx.maxAttempts);
    const state: DeliveryState = error === null ? 'delivered' : final ? 'failed' : 'pending';

    await withTransaction(this.db, async ({ manager: m }) => {
      await m.query(
        `INSERT INTO platform.webhook_delivery_attempts (delivery_id, attempt, status, error, duration_ms)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (delivery_id, attempt) DO UPDATE
           SET status = EXCLUDED.status, error = EXCLUDED.error, duration_ms = EXCLUDED.duration_ms, at = now()`,
        [id, ctx.attempt, status, error, durationMs],
      );
      if (state !== 'pending') {
        await m.query(
          `UPDATE platform.webhook_deliveries
              SET state = $2, delivered_at = CASE WHEN $2 = 'delivered' THEN now() END, updated_at = now()
            WHERE id = $1 AND state = 'pending'`,
          [id, state],
        );
      }
    });

    const fields = { deliveryId: id, event: row.event, attempt: ctx.attempt, maxAttempts: ctx.maxAttempts, status, durationMs };
    if (error === null) {
      this.logger.info('webhook delivered', fields);
      return { status };
    }
    this.logger[state === 'failed' ? 'error' : 'warn'](state === 'failed' ? 'webhook delivery failed' : 'webhook attempt failed; will retry', {
      ...fields,
      error,
    });
    throw new DeliveryAttemptError(error, retryable);
  }

  /** The queue gave up without the handler recording it (e.g. the job timed out or the worker died). */
  private async giveUp(ctx: JobAttempt, error: { code: string; message: string }): Promise<void> {
    const id = (ctx.data as DeliverJob).deliveryId;
    await withTransaction(this.db, async ({ manager: m }) => {
      await m.query(
        `INSERT INTO platform.webhook_delivery_attempts (delivery_id, attempt, status, error, duration_ms)
         SELECT id, $2::integer, NULL::integer, $3::text, 0 FROM platform.webhook_deliveries WHERE id = $1
         ON CONFLICT (delivery_id, attempt) DO NOTHING`,
        [id, Math.max(ctx.attempt, 1), `${error.code}: ${error.message}`],
      );
      await m.query(`UPDATE platform.webhook_deliveries SET state = 'failed', updated_at = now() WHERE id = $1 AND state = 'pending'`, [id]);
    });
  }

  private async withAttempts(rows: DeliveryRow[]): Promise<Delivery[]> {
    if (rows.length === 0) return [];
    const attempts: AttemptRow[] = await this.db.query(
      `SELECT delivery_id, attempt, status, error, duration_ms, at
         FROM platform.webhook_delivery_attempts WHERE delivery_id = ANY($1::uuid[]) ORDER BY delivery_id, attempt`,
      [rows.map((r) => r.id)],
    );
    const byDelivery = new Map<string, DeliveryAttempt[]>();
    for (const a of attempts) {
      const list = byDelivery.get(a.delivery_id) ?? [];
      list.push({ attempt: a.attempt, status: a.status, error: a.error, durationMs: a.duration_ms, at: a.at });
      byDelivery.set(a.delivery_id, list);
    }
    return rows.map((r) => ({
      id: r.id,
      url: r.url,
      event: r.event,
      state: r.state,
      signed: r.signed,
      attempts: byDelivery.get(r.id) ?? [],
      createdAt: r.created_at,
      deliveredAt: r.delivered_at,
      source: { service: r.source_service, resourceType: r.resource_type, resourceId: r.resource_id },
    }));
  }
}

// secret_enc is selected only as a flag: read paths never load the ciphertext.
const DELIVERY_COLUMNS = `id, url, event, state, secret_enc IS NOT NULL AS signed, source_service, resource_type, resource_id, created_at, delivered_at`;

interface DeliveryRow {
  id: string;
  url: string;
  event: string;
  state: DeliveryState;
  signed: boolean;
  source_service: string;
  resource_type: string;
  resource_id: string;
  created_at: Date;
  delivered_at: Date | null;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  status: number | null;
  error: string | null;
  duration_ms: number;
  at: Date;
}

// ---------------------------------------------------------------------------------------------
// Signatures

export function sign(secret: string, body: string | Buffer): string {
  if (!secret) throw new TypeError('A webhook signing secret must be a non-empty string');
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Checks an X-SVC-Signature value (with or without the `sha256=` prefix) in constant time. */
export function verifySignature(secret: string, body: string | Buffer, header: string): boolean {
  if (!secret || typeof header !== 'string') return false;
  const provided = Buffer.from(
    header
      .trim()
      .replace(/^sha256=/i, '')
      .toLowerCase(),
    'utf8',
  );
  const expected = Buffer.from(sign(secret, body).slice('sha256='.length), 'utf8');
  return provided.length === expected.length && timingSafeEqual(provided, expected);
}
