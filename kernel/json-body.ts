import type { FastifyInstance } from 'fastify';
import { AppError } from './errors';
import { inspectJson, violationError } from './input-policy';

/**
 * How every JSON body is read, on /graphql and on the REST surfaces alike: an empty body is no
 * body, text that is not JSON is `invalid_json`, and what parses must pass the input policy.
 */
export function parseJsonBody(text: string): unknown {
  const parsed = parseJson(text);
  const violation = inspectJson(parsed);
  if (violation) throw violationError(violation, 'body');
  return parsed;
}

/** Bodies from this size on are read a step per turn of the event loop (see `inTurn`). */
const LARGE_BODY_CHARS = 64 * 1024;
const waiting: (() => void)[] = [];

function drain(): void {
  try {
    waiting[0]!(); // stays queued while it runs, so what it queues waits for a turn of its own
  } finally {
    waiting.shift();
    if (waiting.length) setImmediate(drain);
  }
}

/**
 * Runs `job` in a turn of the event loop of its own, after the jobs queued before it. Parsing or
 * walking megabytes takes tens of milliseconds; several large bodies that end together would
 * otherwise be read back to back while every other request waits. An immediate queued from inside
 * one runs on the next turn, after the poll phase has taken new requests in.
 */
function inTurn(job: () => void): void {
  waiting.push(job);
  if (waiting.length === 1) setImmediate(drain);
}

/** The body's value (undefined for an empty body), or the 400 `invalid_json`. */
function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new AppError('invalid_json', 'The request body is not valid JSON', { parse_error: (err as Error).message });
  }
}

/** Replaces Fastify's JSON parser in `scope` with `parseJsonBody`: its refusals reach the scope's error handler as AppErrors. */
export function useJsonBodyParser(scope: FastifyInstance): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, raw, done) => {
    const text = raw as string;
    const refuse = (err: unknown) => done(err as AppError, undefined);
    if (text.length < LARGE_BODY_CHARS) {
      try {
        done(null, parseJsonBody(text));
      } catch (err) {
        refuse(err);
      }
      return;
    }
    // A large body: parsed in one turn, checked against the input policy in the next.
    inTurn(() => {
      let parsed: unknown;
      try {
        parsed = parseJson(text);
      } catch (err) {
        return refuse(err);
      }
      inTurn(() => {
        const violation = inspectJson(parsed);
        if (violation) refuse(violationError(violation, 'body'));
        else done(null, parsed);
      });
    });
  });
}

/** Fastify's refusal of a body over the route's limit, as the platform's error; undefined for any other error. */
export function bodyTooLarge(err: { code?: string }, limitBytes: number | undefined): AppError | undefined {
  if (err.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') return undefined;
  return new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large', { limit_bytes: limitBytes });
}
