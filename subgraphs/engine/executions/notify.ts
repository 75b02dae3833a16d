import { absoluteUrl } from '../../../kernel/subgraph';
import { withTransaction, type Tx } from '../../../kernel/db/transaction';
import type { EntityManager } from 'typeorm';
import type { SecretCipher } from '../../../kernel/crypto';
import { errors, type FieldError } from '../../../kernel/errors';
import type { Logger } from '../../../kernel/logger';
import { validateCallbackUrl, type OutboundPolicy } from '../../../kernel/outbound';
import type { WebhookSender } from '../../../kernel/webhooks';
import type { ExecutionView } from './writes.store';
import { EXECUTION_EVENTS, type ExecutionEvent, type NotifyConfig } from './types';
import { controlPlaneStatus, engineExecutionUrl } from './status';

/**
 * Signed webhooks of executions started by the control plane's trigger:
 * `execution.started`, `execution.completed`, `execution.failed`, `execution.waiting`. The
 * subscription ({url, events, encrypted secret}) is kept on the execution row (`notify`), so the
 * process that finishes, resumes or recovers the execution sends what it asked for. Deliveries
 * go through kernel.webhooks (X-SVC-Signature, retries with backoff, every attempt recorded).
 * The events and the stored subscription's shape are in types.ts, which the stores read too.
 */

export interface NotifyInput {
  url?: string | null;
  events?: string[] | null;
  secret?: string | null;
}

/** The event a status change is announced as (running is `started`, announced at the start only). */
export function eventFor(status: string): ExecutionEvent | null {
  switch (status) {
    case 'success':
      return 'execution.completed';
    case 'error':
      return 'execution.failed';
    case 'waiting':
      return 'execution.waiting';
    default:
      return null;
  }
}

export class ExecutionNotifier {
  constructor(
    private readonly webhooks: () => WebhookSender,
    private readonly cipher: () => SecretCipher,
    private readonly policy: () => OutboundPolicy,
    private readonly logger: Logger,
    private readonly publicUrl: () => string | undefined = () => undefined,
  ) {}

  /** Checks a trigger's `webhook` object (400 validation_error, or WEBHOOK_INVALID for the URL) and seals its secret. */
  configure(input: NotifyInput, executionId: string, baseUrl?: string): NotifyConfig {
    const problems: FieldError[] = [];
    const events = input.events ?? [...EXECUTION_EVENTS];
    if (!Array.isArray(events) || !events.length || events.some((e) => !(EXECUTION_EVENTS as readonly string[]).includes(e))) {
      problems.push({ field: 'webhook.events', message: `must be a non-empty list of ${EXECUTION_EVENTS.join(', ')}` });
    }
    if (input.secret !== undefined && input.secret !== null && (typeof input.secret !== 'string' || input.secret.length > 500)) {
      problems.push({ field: 'webhook.secret', message: 'must be a string of at most 500 characters' });
    }
    if (typeof input.url !== 'string' || !input.url) problems.push({ field: 'webhook.url', message: 'is required' });
    if (problems.length) throw errors.validation(problems);
    validateCallbackUrl(input.url!, this.policy(), 'webhook.url');
    return {
      url: input.url!,
      events: [...new Set(events as ExecutionEvent[])],
      secretEnc: input.secret ? this.cipher().encrypt(input.secret, executionId).toString('base64') : null,
      ...(baseUrl && { baseUrl }),
    };
  }

  /** Sends `event` for the execution if its subscription asked for it; never throws (logged). */
  async emit(config: NotifyConfig | null | undefined, event: ExecutionEvent | null, view: ExecutionView, tx?: Tx): Promise<void> {
    if (!config || !event || !config.events.includes(event)) return;
    try {
      const secret = config.secretEnc ? this.cipher().decrypt(Buffer.from(config.secretEnc, 'base64'), view.id) : undefined;
      await this.webhooks().send(
        {
          url: config.url,
          secret,
          event,
          payload: deliveryBody(event, view, config.baseUrl ?? this.publicUrl()),
          source: { service: 'engine', resourceType: 'workflow_execution', resourceId: view.id },
        },
        tx,
      );
    } catch (err) {
      this.logger.warn('execution webhook not sent', { err, executionId: view.id, event });
      if (tx) throw err;
    }
  }
}

/** `{event, executionId, workflowId, workflowName, status, timestamp, engineExecutionUrl, result? | error?}` (control-plane spelling). */
export function deliveryBody(event: ExecutionEvent, v: ExecutionView, baseUrl?: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    event,
    executionId: v.id,
    workflowId: v.workflowId,
    workflowName: v.workflowName,
    status: controlPlaneStatus(v.status),
    timestamp: new Date().toISOString(),
    engineExecutionUrl: absoluteUrl({ baseUrl }, engineExecutionUrl(v.id)),
    startedAt: v.startedAt,
  };
  if (v.status === 'success') {
    const r = (v.result ?? {}) as { lastNode?: string | null; items?: unknown[]; nodesExecuted?: number };
    body.result = {
      success: true,
      outputs: { lastNode: r.lastNode ?? null, items: r.items ?? [] },
      nodesExecuted: r.nodesExecuted ?? 0,
      duration: v.durationMs === null ? null : v.durationMs / 1000,
    };
    body.completedAt = v.finishedAt;
  }
  if (v.status === 'error' && v.error) {
    body.error = { code: v.error.code, message: v.error.message, nodeName: v.error.node ?? null, details: v.error.details ?? {} };
    body.failedAt = v.failedAt;
  }
  if (v.status === 'waiting') body.waitTill = v.waitTill;
  return body;
}
