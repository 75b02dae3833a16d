import { setOwn } from '../../../kernel/names';
import { UUID } from '../../../kernel/ids';
import { assertAcceptableJson, assertAcceptableParams, textProblem } from '../../../kernel/input-policy';
import { absoluteUrl } from '../../../kernel/subgraph';
import { createHmac } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import { type SecretCipher, safeEqual, sha256 } from '../../../kernel/crypto';
import { envelopes } from '../../../kernel/envelopes';
import { AppError, errors } from '../../../kernel/errors';
import type { Logger } from '../../../kernel/logger';
import type { RateLimiter } from '../../../kernel/rate-limit';
import { verifySignature } from '../../../kernel/webhooks';
import { SharedReadCache } from '../../../kernel/cache';
import type { EventBus } from '../../../kernel/events';
import { type ExecutionRunner, type ExecutionView, MAX_PAYLOAD_BYTES } from '../executions';
import type { DoorReply, DoorRequest, HttpDoor } from '../../../kernel/subgraph';
import type { AuditTrail } from '../../../kernel/audit';
import {
  BudgetExceeded,
  BUDGET_VARIABLES,
  DEFAULT_BINARY_KEY,
  NodeError,
  prepareBinary,
  type ResumeWebhookOptions,
  type WebhookAnswerOptions,
  webhookAnswerOptions,
  WebhookFile,
  type WebhookReply,
} from '../nodes';
import { type BinaryData, fileOptions, isMultipart, parseMultipart, type WebhookFileOptions } from './files';
import { callRefused, lastNodeReply, optionsReply } from './options';
import { webhookTriggerStore as store, type InboundTriggerRow, type WebhookAuthConfig } from './store';
import { normalisePath, webhookNotFound } from './service';
import { type WorkflowService, type WorkflowVersion } from '../workflows';
import { TOPIC } from '../../../kernel/topics';

/**
 * Inbound requests on `/webhook/<path>` (and the trigger test). Callable without a platform key:
 * the trigger's own authentication protects it. In order: the trigger must exist and be active,
 * the body at most 5 MB, its rate limit not exceeded, its authentication met (401 when the
 * credential is missing, 403 when it is wrong), its workflow active; then an execution starts.
 * Every request that names a registered trigger is logged as success, failed or rejected (with
 * the reason); for one that starts an execution the entry is written with the execution itself.
 */

export interface TestInput {
  data?: Record<string, unknown> | null;
  headers?: Record<string, unknown> | null;
  query?: Record<string, unknown> | null;
}

const LAST_NODE_TIMEOUT_MS = 300_000;
/** A cached lookup is used at most this long, even if an invalidation got lost. */
const CACHE_TTL_MS = 10_000;
const CACHE_MAX_PATHS = 10_000;
const TEST_TIMEOUT_MS = 60_000;

/** The engine's door in the process hosting it: /webhook/<path> reaches the trigger here, not through the gateway. */
export function webhookDoor(inbound: WebhookInbound, audit?: AuditTrail): HttpDoor {
  return {
    prefix: '/webhook',
    receive: (request, sourceIp) => {
      if (!audit) return inbound.receive(request, sourceIp);
      // Recorded as the receiveWebhook mutation a remote engine's door runs: its caller is anonymous.
      const agent = request.headers['user-agent'];
      const context = { principal: { kind: 'anonymous' as const }, ip: sourceIp ?? undefined, userAgent: agent };
      const { path, method, headers, query, body } = request;
      return audit.recording(context, 'engine', 'receiveWebhook', { request: { path, method, headers, query, body } }, () =>
        inbound.receive(request, sourceIp),
      );
    },
  };
}

/** A trigger an inbound request names, with the values of its path's `:name` segments (a parameterised path). */
type Trigger = InboundTriggerRow & { params?: Record<string, string> };

function reply(status: number, body: unknown, headers: Record<string, string> = {}): WebhookReply {
  return { status, headers, body };
}

function errorReply(err: AppError, headers: Record<string, string> = {}): WebhookReply {
  return reply(err.status, envelopes.webhook.error(err), headers);
}

export class WebhookInbound {
  /**
   * The triggers (with their workflow's active flag and version) by path: the lookup every
   * inbound request makes, kept in memory. Cleared on every change of a trigger or a workflow,
   * in every process (TOPIC.webhookTriggersChanged), and never older than CACHE_TTL_MS.
   */
  private readonly cache: SharedReadCache<Trigger[] | null>;

  constructor(
    events: EventBus,
    private readonly db: DataSource,
    private readonly runner: ExecutionRunner,
    private readonly workflows: WorkflowService,
    private readonly limiter: RateLimiter,
    private readonly cipher: () => SecretCipher,
    private readonly urlFor: (path: string) => string,
    private readonly logger: Logger,
  ) {
    this.cache = new SharedReadCache(events, TOPIC.webhookTriggersChanged, { ttlMs: CACHE_TTL_MS, maxGroups: CACHE_MAX_PATHS });
  }

  /**
   * One request on /webhook/<path>. Callable without a platform key: the trigger's own
   * authentication is what protects it, and it does nothing but what the trigger allows.
   */
  async receive(req: DoorRequest, sourceIp: string | null): Promise<DoorReply> {
    return opened(await this.answer(req, sourceIp));
  }

  /** The same, answered as a GraphQL value (the receiveWebhook operation): a file is read whole, as base64. */
  async receiveWhole(req: DoorRequest, sourceIp: string | null): Promise<WholeReply> {
    return whole(await this.answer(req, sourceIp));
  }

  private async answer(req: DoorRequest, sourceIp: string | null): Promise<WebhookReply> {
    const refused = textProblem(req.path);
    if (refused) return errorReply(errors.field('path', refused));
    const path = normalisePath(req.path);
    const method = String(req.method ?? '').toUpperCase();
    if (path.startsWith('resume/')) return this.resume(path, req, sourceIp);
    const rows = await this.lookup(path);
    const trigger = rows.find((r) => r.method === method);
    if (!trigger) {
      if (rows.length) {
        const allowed = rows.map((r) => r.method);
        return {
          ...errorReply(new AppError('method_not_allowed', `${method} is not allowed on /webhook/${path}`, { allowed })),
          headers: { allow: allowed.join(', ') },
        };
      }
      return errorReply(errors.notFound('webhook', `/webhook/${path}`));
    }
    return this.handle(trigger, req, sourceIp, false);
  }

  /** After a committed change of a trigger or a workflow: every process forgets its lookups. */
  triggersChanged(): Promise<void> {
    return this.cache.changed();
  }

  private async lookup(path: string): Promise<Trigger[]> {
    // Only triggers that exist are kept (null is not): unknown paths would fill the cache.
    const rows = await this.cache.get(path, 'triggers', async () => {
      const exact: Trigger[] = await store.inboundByPath(this.db, path);
      const found = [...exact, ...(await this.byPattern(path, new Set(exact.map((r) => r.method))))];
      return found.length ? found : null;
    });
    return rows ?? [];
  }

  /**
   * The parameterised triggers (`orders/:orderId`) matching `path` for the methods no exact path
   * has, each with the `params` it captures. Where several patterns of one method match, the most
   * specific wins: the one whose first parameter comes latest (`orders/:id/items` before `:kind/:id/items`).
   */
  private async byPattern(path: string, taken: Set<string>): Promise<Trigger[]> {
    const segments = path.split('/');
    const candidates = await store.inboundParameterised(this.db, segments.length);
    const specificity = (pattern: string) =>
      pattern
        .split('/')
        .map((s) => (s.startsWith(':') ? '1' : '0'))
        .join('');
    const best = new Map<string, Trigger>();
    for (const row of candidates.sort((a, b) => specificity(a.path).localeCompare(specificity(b.path)))) {
      if (taken.has(row.method) || best.has(row.method)) continue;
      const params = matchPath(row.path, segments);
      if (params) best.set(row.method, { ...row, params });
    }
    return [...best.values()];
  }

  /** Runs the inbound path of a trigger with a request made up of the given data and headers. */
  async test(
    id: string,
    input: TestInput,
  ): Promise<{ testExecutionId: string | null; webhookResponse: WebhookReply; workflowResult: { status: string; duration: number | null } | null }> {
    if (!UUID.test(id)) throw webhookNotFound(id);
    const trigger = await store.inboundById(this.db, id);
    if (!trigger) throw webhookNotFound(id);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    for (const [k, v] of Object.entries(input.headers ?? {})) if (v !== undefined && v !== null) headers[k.toLowerCase()] = String(v);
    const body = Buffer.from(JSON.stringify(input.data ?? {}));
    let execution: ExecutionView | null = null;
    const webhookResponse = await this.handle(
      trigger,
      { path: trigger.path, method: trigger.method, headers, query: input.query ?? {}, body },
      'test',
      true,
      (v) => (execution = v),
    );
    const ran = execution as ExecutionView | null;
    return {
      testExecutionId: ran?.id ?? null,
      // A file answered is read whole here: the test's answer is a GraphQL value.
      webhookResponse: await whole(webhookResponse),
      workflowResult: ran ? { status: ran.status, duration: ran.durationMs } : null,
    };
  }

  private async handle(
    trigger: Trigger,
    req: DoorRequest,
    sourceIp: string | null,
    test: boolean,
    onExecution?: (v: ExecutionView) => void,
  ): Promise<WebhookReply> {
    const started = performance.now();
    const log = async (status: 'success' | 'failed' | 'rejected', out: WebhookReply, reason: string | null, executionId: string | null = null) => {
      await store
        .insertLog(this.db, {
          webhookId: trigger.id,
          method: trigger.method,
          sourceIp,
          status,
          reason,
          statusCode: out.status,
          responseTimeMs: Math.round(performance.now() - started),
          executionId,
          test,
        })
        .catch((err) => this.logger.warn('webhook log not written', { err, webhookId: trigger.id }));
      return out;
    };
    const reject = (err: AppError, reason: string, headers: Record<string, string> = {}) => log('rejected', errorReply(err, headers), reason);

    if (!trigger.active && !test) return reject(errors.notFound('webhook', `/webhook/${trigger.path}`), 'webhook_inactive');
    if (req.bodyTooLarge || req.body.length > MAX_PAYLOAD_BYTES) {
      return reject(new AppError('PAYLOAD_TOO_LARGE', 'The webhook payload exceeds 5 MB', { limit_bytes: MAX_PAYLOAD_BYTES }), 'payload_too_large');
    }
    if (trigger.rate_limit && !test) {
      const rl = trigger.rate_limit;
      const key =
        rl.keyBy === 'global' ? 'global' : rl.keyBy?.startsWith('header:') ? `h:${headerOf(req.headers, rl.keyBy.slice(7)) ?? ''}` : `ip:${sourceIp ?? ''}`;
      try {
        await this.limiter.consumeNamed(`webhook:${trigger.id}:${rl.windowMs}`, key, rl.maxRequests, Math.max(1, Math.ceil(rl.windowMs / 1000)));
      } catch (err) {
        if (err instanceof AppError && err.code === 'RATE_LIMIT_EXCEEDED') {
          return reject(err, 'rate_limited', { 'retry-after': String(err.details.retryAfter ?? 1) });
        }
        throw err;
      }
    }
    const denied = this.authenticate(trigger, req);
    if (denied) return reject(denied.error, denied.reason, denied.headers);
    if (!trigger.workflow_active && !test) {
      return reject(new AppError('WORKFLOW_INACTIVE', 'The workflow of this webhook is not active', { workflowId: trigger.workflow_id }), 'workflow_inactive');
    }

    const version = await this.workflows.version(trigger.workflow_id, trigger.version);
    const parameters = webhookNodeOf(version, trigger.path)?.parameters;
    const refused = callRefused(callOptions(parameters), req.headers, sourceIp);
    if (refused) return reject(refused.error, refused.reason);
    let answer: WebhookAnswerOptions;
    try {
      answer = webhookAnswerOptions(parameters ?? {});
    } catch (err) {
      if (!(err instanceof NodeError)) throw err;
      return log(
        'failed',
        errorReply(new AppError('WEBHOOK_INVALID', `The Webhook node's answer options are not valid: ${err.message}`, {}, 500)),
        'invalid_options',
      );
    }
    let body: unknown;
    let binary: Record<string, BinaryData> | undefined;
    try {
      ({ body, binary } = await readBody(req, fileOptions(parameters)));
    } catch (err) {
      return reject(err as AppError, 'invalid_body');
    }
    const item = {
      headers: redact(req.headers, trigger),
      params: trigger.params ?? {},
      query: req.query ?? {},
      body,
      method: trigger.method,
      path: `/${trigger.path}`,
      webhookUrl: absoluteUrl(req, this.urlFor(trigger.path)),
      ...(isBinary(req) && !binary ? { bodyEncoding: 'base64' } : {}),
    };
    const input = [{ json: item, ...(binary ? { binary } : {}) }];
    const lastNode = trigger.response_mode === 'lastNode';
    const base = { webhookId: trigger.id, method: trigger.method, sourceIp, test };
    // onReceived: the node's own status, headers and text, else the platform's answer.
    const startedReply = (executionId: string) => optionsReply(answer, { success: true, executionId, message: 'Workflow was started' });
    if (!lastNode && !test) {
      // Queued; the log entry is written in the same transaction as the execution and its job.
      const begun = await this.runner.begin({
        version,
        mode: 'webhook',
        input,
        inline: false,
        webhookId: trigger.id,
        runAs: trigger.created_by,
        requestLog: {
          ...base,
          entry: () => ({ status: 'success', reason: null, statusCode: answer.responseCode ?? 200, responseTimeMs: performance.now() - started }),
        },
      });
      return startedReply(begun.view.id);
    }

    // Inline: the answer is the first respondToWebhook's, else the last node's first item. The
    // log entry is written with the execution's final state and records the answer given.
    const first = new FirstReply();
    let answered: { statusCode: number; at: number } | undefined;
    const statusFor = (outcome: { status: string }) =>
      !lastNode
        ? (answer.responseCode ?? 200)
        : first.reply
          ? first.reply.status
          : outcome.status === 'success'
            ? (answer.responseCode ?? 200)
            : outcome.status === 'waiting'
              ? 202
              : 500;
    const begun = await this.runner.begin({
      version,
      mode: test ? 'test' : 'webhook',
      input,
      inline: true,
      webhookId: trigger.id,
      // The trigger's runs (its test calls too) act as the key that registered it (workflows/authority.ts).
      runAs: trigger.created_by,
      onReply: (r) => {
        if (first.take(r)) answered ??= { statusCode: r.status, at: performance.now() };
      },
      requestLog: {
        ...base,
        entry: (outcome) => {
          const statusCode = answered?.statusCode ?? statusFor(outcome);
          const failed = !answered && lastNode && !first.reply && outcome.status !== 'success' && outcome.status !== 'waiting';
          return {
            status: failed ? 'failed' : 'success',
            reason: failed ? 'execution_failed' : null,
            statusCode,
            responseTimeMs: (answered?.at ?? performance.now()) - started,
          };
        },
      },
    });
    const id = begun.view.id;
    const outcome = await first.wait(begun.done!, test ? TEST_TIMEOUT_MS : LAST_NODE_TIMEOUT_MS, lastNode && !test);
    if (outcome === 'late') answered ??= { statusCode: first.reply?.status ?? (lastNode ? 202 : (answer.responseCode ?? 200)), at: performance.now() };
    if (test) onExecution?.(typeof outcome === 'object' ? outcome : ((await this.runner.view(id)) ?? begun.view));

    if (!lastNode) return startedReply(id);
    if (first.reply) return first.reply;
    if (typeof outcome !== 'object') return reply(202, { success: true, executionId: id, status: 'running' });
    return this.fromRun(answer, outcome);
  }

  /** The answer of an inline run that stopped without a Respond to Webhook's: its last node's output, as the options say. */
  private fromRun(o: WebhookAnswerOptions, outcome: ExecutionView): Promise<WebhookReply> | WebhookReply {
    const id = outcome.id;
    switch (outcome.status) {
      case 'success': {
        const result = outcome.result as { items?: unknown[]; lastNode?: string | null } | null;
        const last = result?.lastNode;
        return lastNodeReply(o, result?.items ?? [], async (key) => (last ? this.runner.firstItemFile(id, last, key) : 'no_item'));
      }
      case 'waiting':
        return reply(202, { success: true, executionId: id, status: 'waiting' });
      default: {
        const message = outcome.error?.message ?? `The execution was ${outcome.status}`;
        return errorReply(new AppError('EXECUTION_FAILED', message, { executionId: id, status: outcome.status, node: outcome.error?.node ?? null }));
      }
    }
  }

  private authenticate(trigger: Trigger, req: DoorRequest): { error: AppError; reason: string; headers?: Record<string, string> } | null {
    const config = (trigger.auth_config ?? {}) as WebhookAuthConfig;
    const missing = (what: string, headers?: Record<string, string>) => ({
      error: new AppError('unauthorized', `The webhook requires ${what}`, { authentication: trigger.auth_type }, 401),
      reason: 'missing_credentials',
      headers,
    });
    const wrong = (reason: string) => ({
      error: new AppError('forbidden', 'The webhook credentials are not valid', { authentication: trigger.auth_type }, 403),
      reason,
    });
    const digestMatches = (given: string) => !!trigger.secret_hash && safeEqual(sha256(given), trigger.secret_hash);
    switch (trigger.auth_type) {
      case 'none':
        return null;
      case 'apiKey': {
        const given = headerOf(req.headers, config.apiKeyHeader ?? 'X-API-Key');
        if (!given) return missing(`the header ${config.apiKeyHeader ?? 'X-API-Key'}`);
        return digestMatches(given) ? null : wrong('invalid_credentials');
      }
      case 'basic': {
        const header = req.headers.authorization ?? '';
        const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
        if (!m) return missing('HTTP basic authentication', { 'www-authenticate': 'Basic realm="webhook"' });
        const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        const user = colon >= 0 ? decoded.slice(0, colon) : decoded;
        const pass = colon >= 0 ? decoded.slice(colon + 1) : '';
        const userOk = safeEqual(sha256(user), sha256(config.username ?? ''));
        const passOk = digestMatches(pass);
        return userOk && passOk ? null : wrong('invalid_credentials');
      }
      case 'oauth': {
        const header = req.headers.authorization ?? '';
        const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
        if (!m) return missing('a bearer token', { 'www-authenticate': 'Bearer realm="webhook"' });
        return digestMatches(m[1]!) ? null : wrong('invalid_credentials');
      }
      case 'hmac': {
        const given = headerOf(req.headers, config.hmacHeader ?? 'X-Signature');
        if (!given) return { ...missing(`a signature in ${config.hmacHeader ?? 'X-Signature'}`), reason: 'missing_signature' };
        let secret: string;
        try {
          // An hmac trigger always has one; were it missing, decrypting fails here like an unreadable one.
          secret = this.cipher().decrypt(trigger.secret_enc!, trigger.id);
        } catch (err) {
          this.logger.error('webhook HMAC secret unreadable', { err, webhookId: trigger.id });
          return wrong('secret_unreadable');
        }
        return verifyHmac(config.hmacAlgorithm ?? 'sha256', secret, req.body, given) ? null : wrong('invalid_signature');
      }
      default:
        return wrong('unknown_authentication');
    }
  }

  /**
   * A call of a waiting execution's resume URL (`resume/<id>/<token>[/<webhookSuffix>]`), taken
   * as the Wait node's options say (method, suffix, bots, addresses, files, answer).
   */
  private async resume(path: string, req: DoorRequest, sourceIp: string | null): Promise<WebhookReply> {
    const [, executionId = '', token = '', ...rest] = path.split('/');
    const notFound = () => errorReply(errors.notFound('webhook', `/webhook/${path}`));
    if (!UUID.test(executionId) || !this.runner.checkResumeToken(executionId, token)) return notFound();
    const notWaiting = () => errorReply(errors.conflict('The execution is not waiting for this URL', { executionId }));
    const row = await this.runner.load(executionId);
    const state = row?.status === 'waiting' ? (row.resume_state as { node?: string; webhook?: boolean; resume?: ResumeWebhookOptions } | null) : null;
    if (!state?.webhook) return notWaiting();
    const options = state.resume ?? {};
    if (rest.join('/') !== (options.webhookSuffix ?? '')) return notFound();
    const method = String(req.method ?? '').toUpperCase();
    if (options.httpMethod && method !== options.httpMethod)
      return {
        ...errorReply(new AppError('method_not_allowed', `${method} is not allowed on this resume URL`, { allowed: [options.httpMethod] })),
        headers: { allow: options.httpMethod },
      };
    const refused = callRefused(options, req.headers, sourceIp);
    if (refused) return errorReply(refused.error);
    let body: unknown;
    let binary: Record<string, BinaryData> | undefined;
    try {
      ({ body, binary } = await readBody(req, fileOptions({ options })));
    } catch (err) {
      return errorReply(err as AppError);
    }
    // lastNode and responseNode: the run goes on here, and the caller gets the workflow's answer.
    const fromWorkflow = options.responseMode === 'lastNode' || options.responseMode === 'responseNode';
    const first = new FirstReply();
    let resumed: Awaited<ReturnType<ExecutionRunner['resumeByWebhook']>>;
    try {
      const data = { headers: req.headers, query: req.query ?? {}, body, method: req.method };
      const files = binary ? { node: state.node ?? 'Wait', binary } : undefined;
      resumed = await this.runner.resumeByWebhook(executionId, data, files, fromWorkflow ? { onReply: (r) => void first.take(r) } : undefined);
    } catch (err) {
      if (!(err instanceof BudgetExceeded)) throw err;
      return errorReply(new AppError('PAYLOAD_TOO_LARGE', err.message, { budget: BUDGET_VARIABLES[err.budget], limit: err.limit, value: err.value }, 413));
    }
    if (resumed.outcome === 'not_waiting') return notWaiting();
    if (!resumed.done) return optionsReply(options, { success: true, executionId, status: 'resumed' });
    const outcome = await first.wait(resumed.done, LAST_NODE_TIMEOUT_MS, true);
    if (first.reply) return first.reply;
    if (typeof outcome !== 'object') return reply(202, { success: true, executionId, status: 'running' });
    return this.fromRun(options, outcome);
  }
}

/** The first Respond to Webhook answer of an inline run, and the wait for it, the run's end or a time limit. */
class FirstReply {
  reply: WebhookReply | undefined;
  private wake!: () => void;
  private readonly came = new Promise<'replied'>((resolve) => (this.wake = () => resolve('replied')));

  /** Keeps `r` if it is the first; whether it was. */
  take(r: WebhookReply): boolean {
    if (this.reply) return false;
    this.reply = r;
    this.wake();
    return true;
  }

  /** The run's end, `replied` as soon as a reply came (when `early`), or `late` after `ms`. */
  async wait<T>(done: Promise<T>, ms: number, early: boolean): Promise<T | 'replied' | 'late'> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
    try {
      return await Promise.race([done, late, ...(early ? [this.came] : [])]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A reply whose body is a file, with the file opened as a stream from where it is kept (its length the file's). */
async function opened(r: WebhookReply): Promise<DoorReply> {
  if (!(r.body instanceof WebhookFile)) return r;
  try {
    return { ...r, body: await r.body.open(), length: r.body.bytes };
  } catch (err) {
    // A file gone from the store (deleted by hand, or with its execution) is not there to answer.
    if (!(err instanceof NodeError)) throw err;
    return errorReply(new AppError('EXECUTION_FAILED', err.message, {}, 500));
  }
}

type WholeReply = WebhookReply & { bodyEncoding: 'base64' | null };

/** A reply as a GraphQL value: a file read whole, its bytes in base64. */
async function whole(r: WebhookReply): Promise<WholeReply> {
  if (!(r.body instanceof WebhookFile)) return { ...r, bodyEncoding: null };
  const chunks: Buffer[] = [];
  for await (const chunk of await r.body.open()) chunks.push(chunk as Buffer);
  return { ...r, body: Buffer.concat(chunks).toString('base64'), bodyEncoding: 'base64' };
}

/** Hex HMAC of the raw body, with or without an `<algorithm>=` prefix, compared in constant time. */
export function verifyHmac(algorithm: string, secret: string, body: Buffer, header: string): boolean {
  if (algorithm === 'sha256') return verifySignature(secret, body, header);
  const given = Buffer.from(
    header
      .trim()
      .replace(new RegExp(`^${algorithm}=`, 'i'), '')
      .toLowerCase(),
    'utf8',
  );
  const expected = Buffer.from(createHmac(algorithm, secret).update(body).digest('hex'), 'utf8');
  return safeEqual(given, expected);
}

function contentType(req: DoorRequest): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function isBinary(req: DoorRequest): boolean {
  const type = contentType(req);
  return (
    req.body.length > 0 &&
    !!type &&
    !type.includes('json') &&
    !type.startsWith('text/') &&
    type !== 'application/x-www-form-urlencoded' &&
    type !== 'application/xml'
  );
}

/**
 * The request's body for the workflow and its files, as n8n's Webhook node takes them (and a Wait
 * node's resume URL, with the same options): a multipart form's fields and files, a raw body as
 * a file with `rawBody`/`binaryData`, else the parsed body (with `rawBody`, its bytes as the file
 * `data` as well).
 */
async function readBody(req: DoorRequest, options: WebhookFileOptions): Promise<{ body: unknown; binary?: Record<string, BinaryData> }> {
  if (isMultipart(contentType(req))) {
    assertAcceptableParams(req.query);
    const form = await parseMultipart(req.body, req.headers, options);
    assertAcceptableJson(form.fields, 'body');
    return Object.keys(form.binary).length ? { body: form.fields, binary: form.binary } : { body: form.fields };
  }
  if ((options.rawBody || options.binaryData) && req.body.length > 0 && isBinary(req)) {
    assertAcceptableParams(req.query);
    return { body: {}, binary: { [options.binaryPropertyName ?? DEFAULT_BINARY_KEY]: prepareBinary(req.body, { mimeType: contentType(req) }) } };
  }
  const body = parseBody(req);
  // rawBody on a JSON, text or form body: parsed as always, and its bytes as they came in the file `data` too (as n8n gives them).
  if (options.rawBody && req.body.length > 0)
    return { body, binary: { [DEFAULT_BINARY_KEY]: prepareBinary(req.body, { mimeType: contentType(req) || 'application/json' }) } };
  return { body };
}

/** The Webhook node's options that refuse calls (ignoreBots, ipWhitelist), from its parameters. */
function callOptions(parameters: Record<string, unknown> | undefined): Pick<ResumeWebhookOptions, 'ignoreBots' | 'ipWhitelist'> {
  const o = (parameters?.options ?? {}) as Record<string, unknown>;
  const ipWhitelist =
    typeof o.ipWhitelist === 'string'
      ? o.ipWhitelist
          .split(',')
          .map((a) => a.trim())
          .filter(Boolean)
      : [];
  return { ignoreBots: o.ignoreBots === true, ...(ipWhitelist.length ? { ipWhitelist } : {}) };
}

/** The request's body for the workflow; refused (400) when it, or the query string, breaks the input policy (kernel/input-policy.ts). */
function parseBody(req: DoorRequest): unknown {
  assertAcceptableParams(req.query);
  const body = decodeBody(req);
  assertAcceptableJson(body, 'body');
  return body;
}

function decodeBody(req: DoorRequest): unknown {
  if (req.body.length === 0) return {};
  const type = contentType(req);
  if (type.includes('json')) {
    try {
      return JSON.parse(req.body.toString('utf8'));
    } catch (err) {
      throw new AppError('invalid_json', 'The request body is not valid JSON', { parse_error: (err as Error).message });
    }
  }
  if (type === 'application/x-www-form-urlencoded') {
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of new URLSearchParams(req.body.toString('utf8'))) {
      const prev = out[k];
      out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    return out;
  }
  if (isBinary(req)) return req.body.toString('base64');
  return req.body.toString('utf8');
}

/** The workflow's Webhook node a trigger starts: the one whose path is the trigger's, else the first. */
function webhookNodeOf(version: WorkflowVersion, path: string): { parameters?: Record<string, unknown> } | undefined {
  const hooks = version.definition.nodes.filter((n) => n.type === 'engine.webhook');
  const normal = (p: unknown) => (typeof p === 'string' ? p.replace(/^\/+|\/+$/g, '') : '');
  return hooks.find((n) => normal(n.parameters?.path) === normal(path)) ?? hooks[0];
}

/** The credential a trigger checked is not handed to the workflow (nor stored in its run data). */
function redact(headers: Record<string, string>, trigger: Trigger): Record<string, string> {
  const out = { ...headers };
  const config = (trigger.auth_config ?? {}) as WebhookAuthConfig;
  if (trigger.auth_type === 'apiKey') {
    const h = (config.apiKeyHeader ?? 'X-API-Key').toLowerCase();
    if (Object.hasOwn(out, h)) out[h] = '[redacted]';
  }
  if ((trigger.auth_type === 'basic' || trigger.auth_type === 'oauth') && Object.hasOwn(out, 'authorization')) out.authorization = '[redacted]';
  return out;
}

/** A request header by a name the trigger's settings give (any case): its own value only, never Object.prototype's. */
function headerOf(headers: Record<string, string>, name: string): string | undefined {
  const key = name.toLowerCase();
  return Object.hasOwn(headers, key) ? headers[key] : undefined;
}

/** The values of `pattern`'s `:name` segments in `segments`, or null when the literal segments differ. */
function matchPath(pattern: string, segments: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  const parts = pattern.split('/');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.startsWith(':')) setOwn(params, part.slice(1), decodeSegment(segments[i]!));
    else if (part !== segments[i]) return null;
  }
  return params;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
