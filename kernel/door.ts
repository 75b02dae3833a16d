import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { ReadableStream } from 'node:stream/web';
import { MAX_AGE_MS, mac, SIGNATURE_HEADER, signedBy } from './auth/handoff';
import { AppError } from './errors';
import type { DoorReply, DoorRequest, HttpDoor } from './subgraph';

/**
 * A raw HTTP door (kernel/subgraph.ts) served by another process: a split deployment's gateway hands
 * each request under the door's prefix to the server of the service that owns it, as one POST on
 * `/doors/<prefix>`, and relays the answer as it arrives. The request goes whole: its description
 * (path, method, headers, query, the caller's address and the platform's base URL), signed with the
 * internal secret, then its raw body. The service answers it exactly as in the gateway's process,
 * and a file answer is streamed through both hops, never held whole.
 */

export const DOORS_PATH = '/doors';
/** The length in bytes of the signed description in front of the body. */
export const META_LENGTH_HEADER = 'x-door-meta-length';
/** Headers of the hop itself, never relayed. */
const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer']);

interface DoorMeta extends Omit<DoorRequest, 'body'> {
  sourceIp: string | null;
  requestId: string;
  /** When the gateway signed it (ms). */
  iat: number;
}

/** The door `prefix` of the service whose server is at `serverUrl` (its GraphQL URL will do: only the origin counts). */
export function remoteDoor(prefix: string, serverUrl: string, secret: string): HttpDoor {
  const url = new URL(`${DOORS_PATH}${prefix}`, serverUrl).toString();
  return {
    prefix,
    async receive(request, sourceIp, requestId = '') {
      const { body, ...described } = request;
      const meta = Buffer.from(JSON.stringify({ ...described, sourceIp, requestId, iat: Date.now() } satisfies DoorMeta));
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/octet-stream', [META_LENGTH_HEADER]: String(meta.length), [SIGNATURE_HEADER]: mac(meta, secret) },
          body: Buffer.concat([meta, body]),
        });
      } catch {
        throw new AppError('service_unavailable', `The service answering ${prefix} cannot be reached`, {});
      }
      const headers: Record<string, string> = {};
      res.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.has(name)) headers[name] = value;
      });
      const length = res.headers.get('content-length');
      if (!res.body || length === '0') {
        await res.body?.cancel();
        return { status: res.status, headers, body: null };
      }
      return { status: res.status, headers, body: Readable.fromWeb(res.body as ReadableStream<Uint8Array>), length: length ? Number(length) : undefined };
    },
  };
}

/**
 * A request a gateway handed over (`raw`: the signed description, then the body), or null when the
 * signature is not the internal secret's or is stale: the door's server answers only its gateways.
 */
export function handedOver(
  raw: Buffer,
  metaLength: unknown,
  signature: unknown,
  secret: string,
): { request: DoorRequest; sourceIp: string | null; requestId: string } | null {
  const length = Number(metaLength);
  if (!Number.isSafeInteger(length) || length <= 0 || length > raw.length || typeof signature !== 'string') return null;
  const meta = raw.subarray(0, length);
  if (!signedBy(meta, signature, secret)) return null;
  const { sourceIp, requestId, iat, ...described } = JSON.parse(meta.toString('utf8')) as DoorMeta;
  if (typeof iat !== 'number' || Math.abs(Date.now() - iat) > MAX_AGE_MS) return null;
  return { request: { ...described, body: raw.subarray(length) }, sourceIp, requestId };
}

/** A door's answer as HTTP: a stream piped as it is read (a caller gone stops the reads), bytes, a text or JSON. */
export function sendDoorReply(reply: FastifyReply, answer: DoorReply): FastifyReply {
  reply.code(answer.status);
  for (const [name, value] of Object.entries(answer.headers ?? {})) {
    if (!HOP_BY_HOP.has(name.toLowerCase())) reply.header(name, value);
  }
  const hasType = Object.keys(answer.headers ?? {}).some((h) => h.toLowerCase() === 'content-type');
  if (answer.body === null || answer.body === undefined || answer.body === '') return reply.send();
  if (answer.body instanceof Readable) {
    const stream = answer.body;
    if (!hasType) reply.header('content-type', 'application/octet-stream');
    if (answer.length !== undefined) reply.header('content-length', String(answer.length));
    reply.raw.on('close', () => stream.destroy());
    return reply.send(stream);
  }
  if (Buffer.isBuffer(answer.body)) {
    if (!hasType) reply.header('content-type', 'application/octet-stream');
    return reply.send(answer.body);
  }
  if (typeof answer.body === 'string') {
    if (!hasType) reply.header('content-type', 'text/plain; charset=utf-8');
    return reply.send(answer.body);
  }
  if (!hasType) reply.header('content-type', 'application/json; charset=utf-8');
  return reply.send(JSON.stringify(answer.body));
}
