import { AppError, errors } from './errors';

/**
 * What the platform accepts as client data, decided once for every surface (REST bodies, path
 * and query parameters, GraphQL bodies and variables, graphql-ws payloads, inbound webhook bodies):
 *
 * - JSON nests at most MAX_JSON_DEPTH levels (objects and arrays). Deeper data is refused before
 *   any code walks it recursively (validation, storage, YAML export) and overflows the stack.
 * - Text holds no NUL character (PostgreSQL cannot store U+0000 in text or jsonb) and no lone
 *   UTF-16 surrogate (not a character: it cannot be encoded, and would be silently replaced).
 *   Such text is refused, never altered.
 *
 * A violation is a 400: `invalid_json` for nesting, `validation_error` naming the field or
 * parameter for text.
 */
export const MAX_JSON_DEPTH = 64;

// A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const BAD_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export interface Violation {
  kind: 'depth' | 'text';
  /** Dotted path of the offending value or key (`""` for the top). */
  path: string;
  message: string;
}

/** Why `text` is refused, or undefined when it is acceptable. */
export function textProblem(text: string): string | undefined {
  const m = BAD_TEXT.exec(text);
  if (!m) return undefined;
  return m[0] === '\u0000' ? 'must not contain a NUL character (\\u0000)' : 'must not contain a lone UTF-16 surrogate (invalid Unicode)';
}

/** The first violation in a parsed JSON value, found without recursion (so depth itself cannot overflow). */
export function inspectJson(value: unknown, maxDepth = MAX_JSON_DEPTH): Violation | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
  while (stack.length) {
    const { value: v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return { kind: 'text', path, message: problem };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= maxDepth) return { kind: 'depth', path, message: `nests deeper than ${maxDepth} levels` };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: join(path, i), depth: depth + 1 });
      continue;
    }
    for (const [key, item] of Object.entries(v)) {
      const problem = textProblem(key);
      if (problem) return { kind: 'text', path: join(path, key), message: `key ${problem}` };
      stack.push({ value: item, path: join(path, key), depth: depth + 1 });
    }
  }
  return undefined;
}

/** The AppError for a violation; `where` names the top value (`body`, `variables`…). */
export function violationError(v: Violation, where: string): AppError {
  const field = !v.path ? where : v.path.length > 120 ? `${v.path.slice(0, 120)}…` : v.path;
  if (v.kind === 'depth') {
    return new AppError('invalid_json', `The ${where} ${v.message}`, { parse_error: `${field} ${v.message}`, max_depth: MAX_JSON_DEPTH });
  }
  return errors.field(field, v.message);
}

/** Throws the 400 for the first violation in `value`. */
export function assertAcceptableJson(value: unknown, where: string): void {
  const v = inspectJson(value);
  if (v) throw violationError(v, where);
}

/** Throws a validation_error naming the first parameter (path or query string) whose text is refused. */
export function assertAcceptableParams(params: Record<string, unknown> | undefined): void {
  for (const [name, value] of Object.entries(params ?? {})) {
    for (const text of Array.isArray(value) ? value : [value]) {
      if (typeof text !== 'string') continue;
      const problem = textProblem(text);
      if (problem) throw errors.field(name, problem);
    }
  }
}

/**
 * The last line of defence, for input that reached the database or a recursive walk some other
 * way: PostgreSQL refusing text it cannot store (22P05 untranslatable character, 22021 bad byte
 * sequence) or data too deep for it (54001), and a stack overflow, are the client's input, not a
 * fault of the platform: 400, never 500.
 */
export function refusedInput(err: unknown): AppError | undefined {
  const code = (err as { code?: unknown })?.code;
  if (code === '22P05' || code === '22021') return errors.field('input', 'contains text the platform does not store (NUL or invalid Unicode)');
  if (code === '54001' || (err instanceof RangeError && /call stack/i.test(err.message))) {
    return new AppError('invalid_json', `The input nests too deeply (at most ${MAX_JSON_DEPTH} levels)`, { max_depth: MAX_JSON_DEPTH });
  }
  return undefined;
}
