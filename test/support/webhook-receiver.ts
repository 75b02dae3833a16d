import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './net';

/** One request the receiver got, with the body exactly as sent (signatures are over the raw bytes). */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
  /** The platform's webhook headers, read out because nearly every test asserts on them. */
  event: string;
  delivery: string;
  signature: string | undefined;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/** What to answer: a status, or a status with a body and a delay before the answer. */
export type Reply = number | { status: number; body?: string; delayMs?: number };

/** A local HTTP server that records every request and answers as told (200 by default). */
export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` once started. */
  readonly url: string;
  /** Every request in arrival order; the same array for the receiver's life (tests may empty it with `length = 0`). */
  readonly requests: ReceivedRequest[];
  /** Changes the answer for the requests that follow. */
  reply: (request: ReceivedRequest) => Reply;
  start(): Promise<WebhookReceiver>;
  close(): Promise<void>;
}

/**
 * Creates the receiver (not yet listening: a test file can hold it from the start and `start()`
 * it in `before`). Every request is recorded before it is answered, so a delivery the platform
 * counts as sent is always in `requests`.
 */
export function webhookReceiver(reply: (request: ReceivedRequest) => Reply = () => 200): WebhookReceiver {
  const requests: ReceivedRequest[] = [];
  let url = '';
  const server = http.createServer((req, res) => {
    void readBody(req).then((raw) => {
      const header = (name: string) => req.headers[name] as string | undefined;
      const request: ReceivedRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '',
        headers: req.headers,
        raw,
        body: parse(raw),
        event: String(header('x-svc-event')),
        delivery: String(header('x-svc-delivery')),
        signature: header('x-svc-signature'),
        at: Date.now(),
      };
      requests.push(request);
      const r = receiver.reply(request);
      const { status, body, delayMs } = typeof r === 'number' ? { status: r, body: undefined, delayMs: 0 } : r;
      const answer = () => res.writeHead(status).end(body);
      if (delayMs) setTimeout(answer, delayMs).unref();
      else answer();
    });
  });
  const receiver: WebhookReceiver = {
    get url() {
      return url;
    },
    requests,
    reply,
    async start() {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return receiver;
    },
    async close() {
      if (!server.listening) return;
      server.closeAllConnections(); // a delayed answer or a kept-alive socket must not hold the test
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return receiver;
}

function parse(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
