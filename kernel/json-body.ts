import type { FastifyInstance } from 'fastify';
import { AppError } from './errors';
import { inspectJson, violationError } from './input-policy';

/**
 * How every JSON body is read, on /graphql and on the REST surfaces alike: an empty body is no
 * body, text that is not JSON is `invalid_json`, and what parses must pass the input policy.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new AppError('invalid_json', 'The request body is not valid JSON', { parse_error: (err as Error).message });
  }
  const violation = inspectJson(parsed);
  if (violation) throw violationError(violation, 'body');
  return parsed;
}

/** Replaces Fastify's JSON parser in `scope` with `parseJsonBody`: its refusals reach the scope's error handler as AppErrors. */
export function useJsonBodyParser(scope: FastifyInstance): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, raw, done) => {
    try {
      done(null, parseJsonBody(raw as string));
    } catch (err) {
      done(err as AppError, undefined);
    }
  });
}

/** Fastify's refusal of a body over the route's limit, as the platform's error; undefined for any other error. */
export function bodyTooLarge(err: { code?: string }, limitBytes: number | undefined): AppError | undefined {
  if (err.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') return undefined;
  return new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large', { limit_bytes: limitBytes });
}
