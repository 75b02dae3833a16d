import { performance } from 'node:perf_hooks';
import type OpenAI from 'openai';
import { AppError, errors } from '../errors';
import type { Logger } from '../logger';
import { countPromptTokens, countTokens, DEFAULT_TIMEOUT_MS, resolveModelIn, throwIfAborted } from './common';
import { tracedCompletion } from './tracing';
import type { CompletionRequest, CompletionResult, LlmProvider } from './types';

/**
 * The provider for LLM_BASE_URL: any OpenAI-compatible `POST {baseUrl}/chat/completions`, through the
 * `openai` package. Retries are the SDK's alone (`maxRetries`); this code never loops.
 * The `fetch` hook finds its call's state under a symbol key in `fetchOptions` (not AsyncLocalStorage,
 * whose promise hooks slow the whole process) and stops the SDK waiting for a Retry-After longer than
 * `maxRetryAfterMs` or the time left. The SDK's timeout restarts per attempt and its back-off ignores
 * the signal, so the call's deadline and the caller's signal are enforced here by one AbortController.
 * Errors: 502 `upstream_error` {status, reason, message}; the deadline 504 `timeout`; an abort its reason.
 */

export interface OpenAiCompatibleOptions {
  baseUrl: string;
  apiKey?: string;
  models: readonly string[];
  logger: Logger;
  /** Retries by the SDK after the first attempt. Default 2. */
  maxRetries?: number;
  /** A Retry-After longer than this is not waited for. Default 30 s. */
  maxRetryAfterMs?: number;
}

/** Per-call state visible to the fetch hook (under CALL in the fetch init). */
const CALL = Symbol('llm-call');
interface CallContext {
  deadline: number;
  attempts: number;
}

/** The SDK, loaded with the first provider: a process without LLM_BASE_URL never pays its ~250 ms of loading. */
let sdk: typeof OpenAI | undefined;
const openAi = (): typeof OpenAI => (sdk ??= (require('openai') as { default: typeof OpenAI }).default);

const RETRYABLE = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;

/** Milliseconds a response asks to wait, as the SDK reads it (retry-after-ms, then retry-after). */
function retryAfterMs(headers: Headers): number | undefined {
  const ms = parseFloat(headers.get('retry-after-ms') ?? '');
  if (!Number.isNaN(ms) && ms > 0) return ms;
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = parseFloat(value);
  if (!Number.isNaN(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : date - Date.now();
}

function upstream(message: string, details: { status: number | null; reason: string; [k: string]: unknown }): AppError {
  return new AppError('upstream_error', message, details);
}

export class OpenAiCompatibleProvider implements LlmProvider {
  readonly models: readonly string[];
  readonly defaultModel: string;
  readonly baseUrl: string;
  private readonly client: OpenAI;
  private readonly logger: Logger;
  private readonly maxRetries: number;
  private readonly maxRetryAfterMs: number;

  constructor(opts: OpenAiCompatibleOptions) {
    if (!opts.models.length) throw new Error('LLM provider needs at least one model');
    this.models = [...opts.models];
    this.defaultModel = this.models[0];
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.logger = opts.logger;
    this.maxRetries = opts.maxRetries ?? 2;
    this.maxRetryAfterMs = opts.maxRetryAfterMs ?? 30_000;
    this.client = new (openAi())({
      baseURL: this.baseUrl,
      apiKey: opts.apiKey ?? 'not-needed',
      // Never pick these up from OPENAI_* environment variables: LLM_* is the configuration.
      organization: null,
      project: null,
      maxRetries: this.maxRetries,
      timeout: DEFAULT_TIMEOUT_MS,
      logLevel: 'off',
      fetch: (url, init) => this.fetchHook(url, init),
    });
  }

  resolveModel(model?: string): string {
    return resolveModelIn(this.models, model);
  }

  countTokens(text: string): number {
    return countTokens(text);
  }

  /** Every attempt goes through here: counts attempts, logs failures, caps Retry-After waits. */
  private async fetchHook(url: string | URL | Request, init?: RequestInit): Promise<Response> {
    const ctx = (init as { [CALL]?: CallContext } | undefined)?.[CALL];
    const res = await fetch(url, init);
    if (ctx) ctx.attempts++;
    if (res.ok) return res;
    const wait = retryAfterMs(res.headers);
    this.logger.warn('llm endpoint answered an error', { status: res.status, attempt: ctx?.attempts, retry_after_ms: wait });
    if (RETRYABLE(res.status) && wait !== undefined && res.headers.get('x-should-retry') !== 'true') {
      const left = ctx ? ctx.deadline - Date.now() : Infinity;
      if (wait > this.maxRetryAfterMs || wait >= left) {
        const headers = new Headers(res.headers);
        headers.set('x-should-retry', 'false');
        return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
      }
    }
    return res;
  }

  async complete(request: CompletionRequest): Promise<CompletionResult> {
    const model = this.resolveModel(request.model);
    return tracedCompletion('openai', model, request, () => this.call(model, request));
  }

  private async call(model: string, request: CompletionRequest): Promise<CompletionResult> {
    if (!Array.isArray(request.messages) || request.messages.length === 0) {
      throw errors.validation([{ field: 'messages', message: 'must hold at least one message' }]);
    }
    const signal = request.signal;
    throwIfAborted(signal);
    const asked = request.timeoutMs;
    // A whole number of ms the SDK and setTimeout accept (setTimeout treats > 2^31-1 as 1 ms).
    const timeoutMs = typeof asked === 'number' && Number.isFinite(asked) && asked > 0 ? Math.min(Math.ceil(asked), 2 ** 31 - 2_000) : DEFAULT_TIMEOUT_MS;
    const started = performance.now();
    const ctx: CallContext = { deadline: Date.now() + timeoutMs, attempts: 0 };

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException('LLM call timed out', 'TimeoutError'));
    }, timeoutMs);
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let stop: () => void = () => undefined;
    const stopped = new Promise<never>((_, reject) => {
      stop = () => reject(controller.signal.reason);
      controller.signal.addEventListener('abort', stop, { once: true });
    });
    stopped.catch(() => undefined);

    try {
      const call = this.client.chat.completions.create(
        {
          model,
          messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
          temperature: request.temperature,
          max_tokens: request.maxTokens,
        },
        {
          signal: controller.signal,
          // The SDK's per-attempt limit stays above ours, so our deadline is the one that answers.
          timeout: timeoutMs + 1_000,
          fetchOptions: { [CALL]: ctx } as OpenAI.RequestOptions['fetchOptions'],
        },
      );
      call.catch(() => undefined); // it may lose the race below and fail later
      const completion = (await Promise.race([call, stopped])) as unknown;
      return this.toResult(completion, model, request, started);
    } catch (err) {
      const elapsed = Math.round(performance.now() - started);
      if (signal?.aborted) throw signal.reason;
      if (timedOut || err instanceof openAi().APIConnectionTimeoutError) {
        throw new AppError('timeout', `The model did not answer within ${timeoutMs} ms`, { timeout_ms: timeoutMs, elapsed_ms: elapsed });
      }
      throw this.toAppError(err, ctx);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      controller.signal.removeEventListener('abort', stop);
    }
  }

  private toAppError(err: unknown, ctx: CallContext): AppError {
    if (err instanceof AppError) return err;
    const attempts = ctx.attempts;
    if (err instanceof openAi().APIConnectionError) {
      const cause = (err as { cause?: { cause?: { code?: string; message?: string }; message?: string } }).cause;
      const detail = cause?.cause?.code ?? cause?.cause?.message ?? cause?.message ?? err.message;
      return upstream(`The LLM endpoint could not be reached (${detail})`, { status: null, reason: 'connection_failed', message: detail, attempts });
    }
    if (err instanceof openAi().APIError && typeof err.status === 'number') {
      const upstreamMessage = (err.error as { message?: unknown } | undefined)?.message;
      const message = typeof upstreamMessage === 'string' ? upstreamMessage : err.message;
      const wait = err.headers ? retryAfterMs(err.headers) : undefined;
      return upstream(`The LLM endpoint answered ${err.status}: ${message}`, {
        status: err.status,
        reason: err.status === 429 ? 'rate_limited' : 'http_error',
        message,
        attempts,
        ...(wait !== undefined ? { retry_after_ms: Math.max(0, Math.round(wait)) } : {}),
      });
    }
    if (err instanceof SyntaxError) {
      return upstream('The LLM endpoint answered with malformed JSON', { status: 200, reason: 'malformed_response', message: err.message, attempts });
    }
    const message = err instanceof Error ? err.message : String(err);
    this.logger.error('llm call failed', { error: err });
    return upstream(`The LLM call failed: ${message}`, { status: null, reason: 'connection_failed', message, attempts });
  }

  private toResult(completion: unknown, model: string, request: CompletionRequest, started: number): CompletionResult {
    const body = completion as Partial<OpenAI.Chat.Completions.ChatCompletion> | null | undefined;
    const choice = body && typeof body === 'object' && Array.isArray(body.choices) ? body.choices[0] : undefined;
    const message = choice && typeof choice === 'object' ? choice.message : undefined;
    const content = message && typeof message === 'object' ? message.content : undefined;
    if (!message || (typeof content !== 'string' && content !== null)) {
      throw upstream('The LLM endpoint answered without a chat completion', {
        status: 200,
        reason: 'malformed_response',
        message: 'expected choices[0].message.content',
      });
    }
    // Latency is the model's: measured before any token counting of ours.
    const latencyMs = Math.round(performance.now() - started);
    const output = content ?? '';
    const usage = body?.usage;
    const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
    const prompt = num(usage?.prompt_tokens) ?? countPromptTokens(request.messages);
    const completionTokens = num(usage?.completion_tokens) ?? countTokens(output);
    const total = num(usage?.total_tokens) ?? prompt + completionTokens;
    return {
      output,
      model: typeof body?.model === 'string' && body.model ? body.model : model,
      tokens: { prompt, completion: completionTokens, total },
      latencyMs,
      offline: false,
      ...(typeof choice?.finish_reason === 'string' ? { finishReason: choice.finish_reason } : {}),
    };
  }
}
