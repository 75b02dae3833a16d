import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './net';

/**
 * A small local OpenAI-compatible server for tests and benchmarks: `POST /v1/chat/completions` answers
 * a real `chat.completion` (by default `echo: ` + the last user message, usage in words; SSE chunks when
 * `stream: true`), `GET /v1/models` lists `opts.models`, anything else is a 404 in OpenAI's error shape.
 * Every request is recorded in `requests`; `reply`, `fail` and `delay` steer the next answers.
 */

export interface RecordedRequest {
  method: string;
  /** Path with query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** Lower-case header names (node's IncomingHttpHeaders), e.g. `headers.authorization`. */
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body (the raw text when it is not JSON; undefined when empty). */
  body: unknown;
  /** Date.now() when the request was complete (to measure gaps between retries). */
  at: number;
}

export interface FakeChatMessage {
  role: string;
  content: string | null | Array<{ type: string; text?: string }>;
}

/** A chat-completion request's body, as the platform's LLM client sends it (its messages' content is text). */
export interface ChatBody {
  model?: string;
  messages: { role: string; content: string }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [field: string]: unknown;
}

/** What a `reply` function may return: the content, or more control over the answer. */
export interface FakeReply {
  content?: string;
  /** `null` leaves `usage` out of the answer (providers that report none). Default: word counts. */
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number } | null;
  finishReason?: string;
  /** Answer this status instead (with an OpenAI error body unless `raw` is given). */
  status?: number;
  headers?: Record<string, string>;
  /** Send exactly this as the body (a string as is, anything else as JSON): for malformed answers. */
  raw?: unknown;
}

export type ReplyFn = (body: ChatBody, request: RecordedRequest) => string | FakeReply | Promise<string | FakeReply>;

export interface FakeLlmOptions {
  /** Models listed by GET /v1/models. Default: `default`, `model-b`, `model-c`. */
  models?: string[];
}

export interface FakeLlm {
  /** Base URL ending with `/v1` (what LLM_BASE_URL takes), e.g. `http://127.0.0.1:34567/v1`. */
  url: string;
  port: number;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Only the chat-completion requests' bodies, in order (a shortcut over `requests`). */
  chatBodies(): ChatBody[];
  /** Decide the answer per request; `null` restores the default echo. */
  reply(fn: ReplyFn | null): void;
  /** The next `n` chat calls answer `status` (with these headers, e.g. `{'retry-after': '1'}`). */
  fail(n: number, status: number, headers?: Record<string, string>): void;
  /** Delay every chat answer by `ms` (0 turns it off). */
  delay(ms: number): void;
  /** Forget recorded requests and restore the defaults (no reply fn, no failures, no delay). */
  reset(): void;
  close(): Promise<void>;
}

/** Words of a text, the fake's unit of "tokens". */
export function fakeTokenCount(text: string): number {
  const t = text.trim();
  return t ? t.split(/\s+/).length : 0;
}

function contentText(content: FakeChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? '').join('');
  return '';
}

export async function startFakeLlm(opts: FakeLlmOptions = {}): Promise<FakeLlm> {
  const models = opts.models ?? ['default', 'model-b', 'model-c'];
  const requests: RecordedRequest[] = [];
  let replyFn: ReplyFn | null = null;
  let failures: { remaining: number; status: number; headers: Record<string, string> } | null = null;
  let delayMs = 0;
  let seq = 0;
  const timers = new Set<NodeJS.Timeout>();

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed || res.writableEnded) return;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };

  const errorBody = (status: number, message: string) => ({
    error: {
      message,
      type: status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error',
      param: null,
      code: status === 429 ? 'rate_limit_exceeded' : null,
    },
  });

  async function chat(recorded: RecordedRequest, res: http.ServerResponse): Promise<void> {
    if (delayMs > 0) await wait(delayMs);
    if (failures && failures.remaining > 0) {
      const f = failures;
      f.remaining--;
      if (f.remaining === 0) failures = null;
      return send(res, f.status, errorBody(f.status, `fake failure (${f.status})`), f.headers);
    }
    if (!isChatBody(recorded.body)) return send(res, 400, errorBody(400, "'messages' is a required property"));
    const body = recorded.body;
    const messages: FakeChatMessage[] = body.messages;
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    let answer: FakeReply = { content: `echo: ${lastUser ? contentText(lastUser.content) : ''}` };
    if (replyFn) {
      const r = await replyFn(body, recorded);
      answer = typeof r === 'string' ? { content: r } : r;
    }
    if (answer.raw !== undefined) return send(res, answer.status ?? 200, answer.raw, answer.headers);
    if (answer.status && answer.status >= 400) {
      return send(res, answer.status, errorBody(answer.status, answer.content ?? `fake failure (${answer.status})`), answer.headers);
    }
    const content = answer.content ?? '';
    const promptTokens = messages.reduce((n, m) => n + fakeTokenCount(contentText(m.content)), 0);
    const completionTokens = fakeTokenCount(content);
    const usage =
      answer.usage === null
        ? undefined
        : answer.usage
          ? { ...answer.usage, total_tokens: answer.usage.total_tokens ?? answer.usage.prompt_tokens + answer.usage.completion_tokens }
          : { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    const id = `chatcmpl-fake-${++seq}`;
    const created = Math.floor(Date.now() / 1000);
    const model = typeof body.model === 'string' ? body.model : models[0];
    const finishReason = answer.finishReason ?? 'stop';

    if (body.stream === true) {
      if (res.destroyed) return;
      res.writeHead(answer.status ?? 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...answer.headers });
      const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
      res.write(chunk({ role: 'assistant', content }, null));
      const includeUsage = body.stream_options?.include_usage === true && usage;
      res.write(chunk({}, finishReason));
      if (includeUsage) res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }

    send(
      res,
      answer.status ?? 200,
      {
        id,
        object: 'chat.completion',
        created,
        model,
        system_fingerprint: 'fp_fake',
        choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: finishReason }],
        ...(usage ? { usage } : {}),
      },
      answer.headers,
    );
  }

  const server = http.createServer((req, res) => {
    void readBody(req).then((text) => {
      let body: unknown = undefined;
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      const recorded: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body, at: Date.now() };
      requests.push(recorded);
      const pathname = (req.url ?? '/').split('?')[0].replace(/\/+$/, '');
      if (req.method === 'POST' && pathname === '/v1/chat/completions') {
        chat(recorded, res).catch((err) => send(res, 500, errorBody(500, String(err))));
      } else if (req.method === 'GET' && pathname === '/v1/models') {
        send(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake-llm' })) });
      } else {
        send(res, 404, errorBody(404, `Unknown path ${req.method} ${req.url}`));
      }
    });
  });
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    chatBodies: () =>
      requests
        .filter((r) => r.method === 'POST' && r.path.startsWith('/v1/chat/completions'))
        .map((r) => r.body)
        .filter(isChatBody),
    reply(fn) {
      replyFn = fn;
    },
    fail(n, status, headers = {}) {
      failures = n > 0 ? { remaining: n, status, headers } : null;
    },
    delay(ms) {
      delayMs = Math.max(0, ms);
    },
    reset() {
      requests.length = 0;
      replyFn = null;
      failures = null;
      delayMs = 0;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function isChatBody(body: unknown): body is ChatBody {
  return body !== null && typeof body === 'object' && Array.isArray((body as { messages?: unknown }).messages);
}
