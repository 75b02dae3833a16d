import { AppError, errors, type FieldError } from '../../kernel/errors';
import type { Principal, Tier } from '../../kernel/auth/principal';
import { SLUG, SLUG_RULE } from './render';

/** Helpers every prompt-library service shares: errors, validation of common fields, numbers. */

export function promptNotFound(promptId: string, extra: { version?: number; environment?: string; status?: string } = {}): AppError {
  const what =
    extra.version !== undefined
      ? `Prompt ${promptId} has no version ${extra.version}`
      : extra.environment !== undefined
        ? `Prompt ${promptId} has no version promoted to ${extra.environment}`
        : extra.status !== undefined
          ? `Prompt ${promptId} has no ${extra.status} version`
          : `Prompt ${promptId} not found`;
  return new AppError('PROMPT_NOT_FOUND', what, { promptId, ...extra });
}

export function checkSlug(problems: FieldError[], field: string, value: unknown): void {
  if (typeof value !== 'string' || !SLUG.test(value)) problems.push({ field, message: SLUG_RULE });
}

export function throwIf(problems: FieldError[]): void {
  if (problems.length) throw errors.validation(problems);
}

/**
 * Metadata is a free-form object; the keys the docs name must have their documented types:
 * domain, version (a semantic version string), agentId: strings; tags, fragments: string arrays.
 */
export function checkMetadata(problems: FieldError[], field: string, metadata: unknown): Record<string, unknown> {
  if (metadata === undefined || metadata === null) return {};
  if (typeof metadata !== 'object' || Array.isArray(metadata)) {
    problems.push({ field, message: 'must be an object' });
    return {};
  }
  const m = metadata as Record<string, unknown>;
  for (const key of ['domain', 'agentId', 'version']) {
    if (m[key] !== undefined && (typeof m[key] !== 'string' || (m[key] as string).length > 200)) {
      problems.push({ field: `${field}.${key}`, message: 'must be a string of at most 200 characters' });
    }
  }
  if (typeof m.version === 'string' && !/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/.test(m.version)) {
    problems.push({ field: `${field}.version`, message: 'must be a semantic version such as 1.2.0' });
  }
  for (const key of ['tags', 'fragments']) {
    const v = m[key];
    if (v !== undefined && (!Array.isArray(v) || v.length > 100 || v.some((t) => typeof t !== 'string' || t.length > 100))) {
      problems.push({ field: `${field}.${key}`, message: 'must be an array of at most 100 strings' });
    }
  }
  if (JSON.stringify(m).length > 64 * 1024) problems.push({ field, message: 'must be at most 64 KiB as JSON' });
  return m;
}

export function checkText(problems: FieldError[], field: string, value: unknown, opts: { required?: boolean; max: number }): void {
  if (value === undefined || value === null) {
    if (opts.required) problems.push({ field, message: 'is required' });
    return;
  }
  if (typeof value !== 'string') problems.push({ field, message: 'must be a string' });
  else if (opts.required && value.trim() === '') problems.push({ field, message: 'must not be empty' });
  else if (value.length > opts.max) problems.push({ field, message: `must be at most ${opts.max} characters` });
}

/** Model parameters shared by tests, A/B tests, chains and refine. */
export interface ModelParams {
  model?: string | null;
  temperature?: number | null;
  maxTokens?: number | null;
}

export const DEFAULT_TEMPERATURE = 0.7;
export const DEFAULT_MAX_TOKENS = 4096;
export const MAX_MAX_TOKENS = 128_000;

export function checkModelParams(problems: FieldError[], p: ModelParams, prefix = ''): void {
  if (p.temperature !== undefined && p.temperature !== null && !(p.temperature >= 0 && p.temperature <= 1)) {
    problems.push({ field: `${prefix}temperature`, message: 'must be between 0.0 and 1.0' });
  }
  if (p.maxTokens !== undefined && p.maxTokens !== null && !(Number.isInteger(p.maxTokens) && p.maxTokens >= 1 && p.maxTokens <= MAX_MAX_TOKENS)) {
    problems.push({ field: `${prefix}maxTokens`, message: `must be an integer between 1 and ${MAX_MAX_TOKENS}` });
  }
}

/** Per-minute prompt tests by tier. */
export const PROMPT_TESTS_PER_MINUTE: Record<Tier, number> = { free: 5, starter: 20, professional: 50, enterprise: 200 };
export const CHAIN_EXECUTIONS_PER_MINUTE = 30;

/**
 * Who to count a named limit against. `limitKey` null: the platform itself calling through
 * kernel/operations (the engine's prompt node), limited where its own work is admitted.
 */
export function callerKey(p: Principal): { keyId: string | null; tier: Tier | undefined; limitKey: string | null } {
  if (p.kind === 'apiKey') return { keyId: p.keyId, tier: p.tier, limitKey: p.keyId };
  if (p.kind === 'user') return { keyId: null, tier: undefined, limitKey: `user:${p.userId}` };
  return { keyId: null, tier: undefined, limitKey: null };
}

/** Seconds with millisecond precision, the platform's unit for durations. */
export function seconds(ms: number | string | null | undefined): number {
  return Math.round(Number(ms ?? 0)) / 1000;
}

export function round2(n: number | string | null | undefined): number {
  return Math.round(Number(n ?? 0) * 100) / 100;
}

/** Postgres unique violation (the name of the resource is taken). */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === '23505' || (err as { driverError?: { code?: string } })?.driverError?.code === '23505';
}

/** Runs `fn` over `items` with at most `limit` running at once; results in input order. */
export async function mapBounded<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** The error of a failed model call (or of anything else), as stored and reported. */
export function describeFailure(err: unknown): { code: string; message: string; details?: Record<string, unknown> } {
  if (err instanceof AppError) return { code: err.code, message: err.message, details: err.details };
  const e = err as { code?: unknown; message?: unknown } | null;
  return {
    code: typeof e?.code === 'string' ? e.code : 'internal_server_error',
    message: typeof e?.message === 'string' ? e.message : String(err),
  };
}
