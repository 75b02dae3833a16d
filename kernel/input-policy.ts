import { AppError, errors } from './errors';

/**
 * What every surface accepts as client data. JSON nests at most MAX_JSON_DEPTH levels, refused before
 * recursive code can overflow the stack (400 `invalid_json`). Text holds no NUL (PostgreSQL cannot
 * store it) and no lone surrogate (unencodable); such text is refused, never altered (400 `validation_error`).
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

/** A container being walked: its children still to visit, and how it was reached (for a violation's path). */
interface Frame {
  parent: Frame | null;
  key: string | number;
  depth: number;
  /** An array's elements, or an object's values in the order they are visited. */
  children: readonly unknown[];
  /** The key of each child (an object's; an array's are their indexes). */
  keys: readonly string[] | null;
  next: number;
}

const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));

/** The dotted path of a frame's container (`""` for the top). */
function pathOf(frame: Frame): string {
  const keys: (string | number)[] = [];
  for (let f: Frame | null = frame; f?.parent; f = f.parent) keys.push(f.key);
  return keys.reverse().join('.');
}

/**
 * The first violation in a parsed JSON value, found without recursion (so depth itself cannot
 * overflow), in the order a depth-first walk meets it. One frame per array or object and no path
 * text until a violation is found: a body of a million numbers is walked without a million
 * allocations.
 */
export function inspectJson(value: unknown, maxDepth = MAX_JSON_DEPTH): Violation | undefined {
  /** The frame of a container at `depth`, or the violation it is (too deep, or one of its keys). */
  const open = (v: object, parent: Frame | null, key: string | number, depth: number): Frame | Violation => {
    const path = parent ? join(pathOf(parent), key) : '';
    if (depth >= maxDepth) return { kind: 'depth', path, message: `nests deeper than ${maxDepth} levels` };
    if (Array.isArray(v)) return { parent, key, depth, children: v, keys: null, next: 0 };
    // An object's keys are all checked first; its values are then visited last key first.
    const keys = Object.keys(v);
    for (const k of keys) {
      const problem = textProblem(k);
      if (problem) return { kind: 'text', path: join(path, k), message: `key ${problem}` };
    }
    keys.reverse();
    return { parent, key, depth, children: keys.map((k) => (v as Record<string, unknown>)[k]), keys, next: 0 };
  };
  const visit = (child: unknown, parent: Frame | null, key: string | number, depth: number): Frame | Violation | undefined => {
    if (typeof child === 'string') {
      const problem = textProblem(child);
      return problem ? { kind: 'text', path: parent ? join(pathOf(parent), key) : '', message: problem } : undefined;
    }
    return child !== null && typeof child === 'object' ? open(child, parent, key, depth) : undefined;
  };
  const stack: Frame[] = [];
  const top = visit(value, null, '', 0);
  if (top && !('children' in top)) return top;
  if (top) stack.push(top);
  while (stack.length) {
    const frame = stack[stack.length - 1]!;
    if (frame.next >= frame.children.length) {
      stack.pop();
      continue;
    }
    const i = frame.next++;
    const found = visit(frame.children[i], frame, frame.keys ? frame.keys[i]! : i, frame.depth + 1);
    if (!found) continue;
    if (!('children' in found)) return found;
    stack.push(found);
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
