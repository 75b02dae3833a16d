import { ownEntry } from '../../../../../kernel/names';
import { DateTime } from 'luxon';
import { isPlainObject, NodeError, objectOf } from '../../../nodes';

/**
 * n8n's "filter" parameter (If 2.x, Filter 2.x, Switch 3.x), its values resolved for one item:
 * each value is checked (strict) or converted (loose) to the operator's type, with n8n's wording
 * when that fails, then compared. n8n reads only the options stored in the parameter (its editor
 * derives them from the node's ignoreCase / looseTypeValidation while editing), so a parameter
 * written by hand without options gets what that editor would have stored.
 */

/** How a filter's options follow from its node's parameters, per node type (its typeOptions.filter). */
export interface FilterEditorRule {
  /** From this typeVersion on, looseTypeValidation is a node parameter; before, an entry of `options`. */
  looseParameterSince: number;
  /** From this typeVersion on, the filter's own version is 2 (loose booleans parse "false" as false). */
  filterVersion2Since: number;
}

export interface FilterSettings {
  ignoreCase: boolean;
  strict: boolean;
  version: number;
}

export interface FilterRun {
  itemIndex: number;
  /** The workflow's time zone: date strings without an offset are read in it (as n8n's luxon default zone). */
  zone: string;
  /** The settings when the parameter stores no options (see editorSettings). */
  fallback: FilterSettings;
}

/** The text n8n adds to a failure under strict type validation when the failure has none of its own. */
export const LOOSE_TYPE_HINT = "Try changing the type of comparison. Alternatively you can enable 'Convert types where required'.";

/** The options n8n's editor stores in a node's filter, from the node's parameters (`={{ !$parameter.options.ignoreCase }}` …). */
export function editorSettings(params: Record<string, unknown>, nodeVersion: number, rule: FilterEditorRule): FilterSettings {
  return {
    ignoreCase: Boolean(objectOf(params.options).ignoreCase),
    strict: !looseTypeValidation(params, nodeVersion, rule),
    version: nodeVersion >= rule.filterVersion2Since ? 2 : 1,
  };
}

/** Whether the node asks for loose type validation (a node parameter from `looseParameterSince`, an option before). */
export function looseTypeValidation(params: Record<string, unknown>, nodeVersion: number, rule: FilterEditorRule): boolean {
  return Boolean(nodeVersion < rule.looseParameterSince ? objectOf(params.options).looseTypeValidation : params.looseTypeValidation);
}

/** Whether one item passes the filter; a value of the wrong type fails with n8n's message, naming condition and item. */
export function filterPasses(value: unknown, run: FilterRun): boolean {
  const filter = isPlainObject(value) ? value : {};
  const settings = storedSettings(filter.options, run.fallback);
  const conditions: unknown[] = Array.isArray(filter.conditions) ? filter.conditions : [];
  // The editor writes "and" for a new filter; any other combinator passes nothing, as in n8n.
  const combinator = filter.combinator ?? 'and';
  const check = (condition: unknown, index: number) => conditionPasses(isPlainObject(condition) ? condition : {}, settings, index, run);
  if (combinator === 'and') return conditions.every(check);
  if (combinator === 'or') return conditions.some(check);
  return false;
}

/** The options as n8n's runtime reads them: a missing caseSensitive ignores case, a missing typeValidation is loose. */
function storedSettings(options: unknown, fallback: FilterSettings): FilterSettings {
  if (!isPlainObject(options)) return fallback;
  return { ignoreCase: !options.caseSensitive, strict: options.typeValidation === 'strict', version: Number(options.version ?? 1) };
}

// ---------------------------------------------------------------------------------------------
// Values checked or converted to the operator's type

type Parsed = { ok: true; value: unknown } | { ok: false };

const ok = (value: unknown): Parsed => ({ ok: true, value });
const INVALID: Parsed = { ok: false };

function parseOperand(value: unknown, type: string, settings: FilterSettings, zone: string): Parsed {
  if (type === 'any' || value === null || value === undefined) return ok(value);
  if (type === 'boolean' && !settings.strict) {
    // Filter version 1 took any truthy value as true, "false" included.
    const parsed = settings.version >= 2 ? toBoolean(value) : undefined;
    return ok(parsed ?? Boolean(value));
  }
  if (type === 'number') {
    if (Number.isNaN(value)) return ok(value);
    const blank = (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);
    if (blank && settings.version >= 3) return ok(null);
  }
  return convert(value, type, settings.strict, zone);
}

function convert(value: unknown, type: string, strict: boolean, zone: string): Parsed {
  switch (type.toLowerCase()) {
    case 'string':
      if (strict && typeof value !== 'string') return INVALID;
      return ok(typeof value === 'object' ? JSON.stringify(value) : String(value));
    case 'number': {
      if (strict && typeof value !== 'number') return INVALID;
      const n = Number(value);
      return Number.isNaN(n) ? INVALID : ok(n);
    }
    case 'boolean': {
      if (strict && typeof value !== 'boolean') return INVALID;
      const b = toBoolean(value);
      return b === undefined ? INVALID : ok(b);
    }
    case 'datetime': {
      const date = toDateTime(value, zone);
      return date ? ok(date) : INVALID;
    }
    case 'object': {
      if (strict && (value === null || (typeof value !== 'object' && typeof value !== 'function'))) return INVALID;
      const o = toObject(value);
      return o ? ok(o) : INVALID;
    }
    case 'array': {
      if (strict && !Array.isArray(value)) return INVALID;
      const a = toArray(value);
      return a ? ok(a) : INVALID;
    }
    default:
      return ok(value);
  }
}

function toBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  if (!(typeof value === 'string' && value.trim() === '')) {
    const n = Number(value);
    if (n === 0) return false;
    if (n === 1) return true;
  }
  return undefined;
}

/** As n8n: ISO 8601, HTTP, RFC 2822, SQL, then whatever Date.parse reads. */
function toDateTime(value: unknown, zone: string): DateTime | undefined {
  const text = String(value).trim();
  const opts = { zone, setZone: true };
  for (const parse of [DateTime.fromISO, DateTime.fromHTTP, DateTime.fromRFC2822, DateTime.fromSQL]) {
    const date = parse(text, opts);
    if (date.isValid) return date;
  }
  const date = DateTime.fromMillis(Date.parse(text), { zone });
  return date.isValid ? date : undefined;
}

function toArray(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  const text = String(value);
  const parsed = parseJson(text) ?? parseJson(text.replace(/'/g, '"'));
  return Array.isArray(parsed?.value) ? parsed.value : undefined;
}

function toObject(value: unknown): object | undefined {
  if (isPlainObject(value)) return value;
  const text = String(value);
  const parsed = parseJson(text) ?? parseJsObject(text);
  const o = parsed?.value;
  return typeof o === 'object' && o !== null && !Array.isArray(o) ? o : undefined;
}

function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** A JavaScript object literal as n8n accepts one: single quotes, unquoted keys, trailing commas. */
function parseJsObject(text: string): { value: unknown } | undefined {
  const source = text.trim();
  if (!source.startsWith('{') || !source.endsWith('}')) return undefined;
  const json = source
    .replace(/"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'/g, (s) => (s.startsWith('"') ? s : `"${s.slice(1, -1).replace(/"/g, '\\"')}"`))
    .replace(/([{,]\s*)([A-Za-z_$][\w$]*)(\s*:)/g, '$1"$2"$3')
    .replace(/,(\s*[}\]])/g, '$1');
  return parseJson(json);
}

// ---------------------------------------------------------------------------------------------
// One condition

interface Operator {
  type: string;
  operation: string;
  rightType: string;
  singleValue: boolean;
}

/** The editor's operator for a new condition. */
const DEFAULT_OPERATOR: Record<string, unknown> = { type: 'string', operation: 'equals' };

function operatorOf(condition: Record<string, unknown>): Operator {
  const op: Record<string, unknown> = isPlainObject(condition.operator) ? condition.operator : DEFAULT_OPERATOR;
  const type = String(op.type ?? DEFAULT_OPERATOR.type);
  return { type, operation: String(op.operation ?? ''), rightType: String(op.rightType ?? type), singleValue: Boolean(op.singleValue) };
}

function conditionPasses(condition: Record<string, unknown>, settings: FilterSettings, index: number, run: FilterRun): boolean {
  const operator = operatorOf(condition);
  const { left, right } = operands(condition, operator, settings, index, run);
  const exists = left !== undefined && left !== null && !Number.isNaN(left);
  if (operator.operation === 'exists') return exists;
  if (operator.operation === 'notExists') return !exists;
  const table = Object.hasOwn(COMPARISONS, operator.type) ? COMPARISONS[operator.type]! : {};
  const compare = Object.hasOwn(table, operator.operation) ? table[operator.operation] : undefined;
  // n8n logs an unknown type or operation and lets the condition fail.
  return compare ? compare(left, right, { exists, ignoreCase: settings.ignoreCase }) : false;
}

function operands(
  condition: Record<string, unknown>,
  operator: Operator,
  settings: FilterSettings,
  index: number,
  run: FilterRun,
): { left: unknown; right: unknown } {
  const { leftValue, rightValue } = condition;
  const left = parseOperand(leftValue, operator.type, settings, run.zone);
  const right = parseOperand(rightValue, operator.rightType, settings, run.zone);
  const rightOk = right.ok || operator.singleValue;
  if (left.ok && rightOk) return { left: left.value, right: right.ok ? right.value : undefined };
  const fail = (message: string, description: string) => new NodeError(message, { description, itemIndex: run.itemIndex, condition: index });
  if (!left.ok && !rightOk && typeof leftValue === typeof rightValue) {
    throw fail(`Comparison type expects ${article(operator.type)} but both fields are ${article(typeof leftValue)}`, retryHint(settings.strict));
  }
  const [type, value, position] = !left.ok ? [operator.type, leftValue, 'first'] : [operator.rightType, rightValue, 'second'];
  const from = (typeof value).toLocaleLowerCase();
  const suffix = `[condition ${index}, item ${run.itemIndex}]`;
  const message = settings.strict
    ? `Wrong type: '${String(value)}' is ${article(from)} but was expecting ${article(type)} ${suffix}`
    : `Conversion error: the ${from} '${String(value)}' can't be converted to ${article(type)} ${suffix}`;
  throw fail(message, typeHint(type, position, settings.strict));
}

const article = (noun: string) => `${'aeiou'.includes(noun.charAt(0)) ? 'an' : 'a'} ${noun}`;

const retryHint = (strict: boolean) => (strict ? LOOSE_TYPE_HINT : 'Try changing the type of the comparison.');

const CONVERSIONS: Record<string, string> = { string: '.toString()', number: '.toNumber()', boolean: '.toBoolean()' };

function typeHint(type: string, position: string, strict: boolean): string {
  const conversion = ownEntry(CONVERSIONS, type);
  if (!strict || !conversion) return retryHint(strict);
  return `Try either: 1. Enabling 'Convert types where required'; 2. Converting the ${position} field to ${article(type)} by adding ${conversion}`;
}

// ---------------------------------------------------------------------------------------------
// Operations by type

/** Operands already converted to the condition's type (a missing one is undefined). */
type Compare = (left: unknown, right: unknown, ctx: { exists: boolean; ignoreCase: boolean }) => boolean;

const isRegexOp = (operation: string) => operation === 'regex' || operation === 'notRegex';

/** String operands, lower-cased when case is ignored (a regex keeps its pattern and gets the i flag instead). */
function strings(compare: (left: string, right: string, ignoreCase: boolean) => boolean, operation: string): Compare {
  const lower = !isRegexOp(operation);
  return (left, right, { ignoreCase }) => {
    const fold = (v: unknown) => (ignoreCase && lower && typeof v === 'string' ? v.toLocaleLowerCase() : v);
    return compare((fold(left) ?? '') as string, (fold(right) ?? '') as string, ignoreCase);
  };
}

const regexCache = new Map<string, RegExp>();

/** `/pattern/flags` or a bare pattern (n8n's regex operand); compiled once per pattern and flags. */
export function regex(pattern: string, ignoreCase: boolean): RegExp {
  const key = `${ignoreCase ? 'i' : '-'}${pattern}`;
  let re = regexCache.get(key);
  if (!re) {
    const m = /^\/(.*?)\/([gimusy]*)$/.exec(pattern || '');
    const source = m ? m[1]! : String(pattern || '');
    const flags = m ? m[2]! : '';
    try {
      re = new RegExp(source, ignoreCase && !flags.includes('i') ? `${flags}i` : flags);
    } catch (err) {
      throw new NodeError((err as Error).message);
    }
    if (regexCache.size >= 1000) regexCache.clear();
    regexCache.set(key, re);
  }
  re.lastIndex = 0;
  return re;
}

const STRING_OPS: Record<string, (l: string, r: string, ignoreCase: boolean) => boolean> = {
  empty: (l) => l.length === 0,
  notEmpty: (l) => l.length !== 0,
  equals: (l, r) => l === r,
  notEquals: (l, r) => l !== r,
  contains: (l, r) => l.includes(r),
  notContains: (l, r) => !l.includes(r),
  startsWith: (l, r) => l.startsWith(r),
  notStartsWith: (l, r) => !l.startsWith(r),
  endsWith: (l, r) => l.endsWith(r),
  notEndsWith: (l, r) => !l.endsWith(r),
  regex: (l, r, i) => regex(r, i).test(l),
  notRegex: (l, r, i) => !regex(r, i).test(l),
};

const ORDERED: Record<string, (l: number, r: number) => boolean> = {
  equals: (l, r) => l === r,
  notEquals: (l, r) => l !== r,
  gt: (l, r) => l > r,
  lt: (l, r) => l < r,
  gte: (l, r) => l >= r,
  lte: (l, r) => l <= r,
};

const DATE_OPS: Record<string, (l: number, r: number) => boolean> = {
  equals: ORDERED.equals!,
  notEquals: ORDERED.notEquals!,
  after: ORDERED.gt!,
  before: ORDERED.lt!,
  afterOrEquals: ORDERED.gte!,
  beforeOrEquals: ORDERED.lte!,
};

const BY_EXISTENCE: Record<string, Compare> = { empty: (_l, _r, { exists }) => !exists, notEmpty: (_l, _r, { exists }) => exists };

function arrayContains(list: unknown[], value: unknown, ignoreCase: boolean): boolean {
  if (ignoreCase && typeof value === 'string') {
    const wanted = value.toLocaleLowerCase();
    return list.some((v) => typeof v === 'string' && v.toLocaleLowerCase() === wanted);
  }
  return list.includes(value);
}

const ARRAY_LENGTH: Record<string, (length: number, n: number) => boolean> = {
  lengthEquals: (a, n) => a === n,
  lengthNotEquals: (a, n) => a !== n,
  lengthGt: (a, n) => a > n,
  lengthLt: (a, n) => a < n,
  lengthGte: (a, n) => a >= n,
  lengthLte: (a, n) => a <= n,
};

const mapValues = <T, U>(o: Record<string, T>, f: (v: T, k: string) => U): Record<string, U> =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v, k)]));

const COMPARISONS: Record<string, Record<string, Compare>> = {
  string: mapValues(STRING_OPS, (op, name) => strings(op, name)),
  number: {
    ...BY_EXISTENCE,
    ...mapValues(
      ORDERED,
      (op): Compare =>
        (l, r) =>
          op(l as number, r as number),
    ),
  },
  dateTime: {
    ...BY_EXISTENCE,
    // A missing date compares as false either way.
    ...mapValues(
      DATE_OPS,
      (op): Compare =>
        (l, r) =>
          Boolean(l && r) && op((l as DateTime).toMillis(), (r as DateTime).toMillis()),
    ),
  },
  boolean: {
    ...BY_EXISTENCE,
    true: (l) => Boolean(l),
    false: (l) => !l,
    equals: (l, r) => l === r,
    notEquals: (l, r) => l !== r,
  },
  array: {
    contains: (l, r, { ignoreCase }) => arrayContains((l as unknown[] | undefined) ?? [], r, ignoreCase),
    notContains: (l, r, { ignoreCase }) => !arrayContains((l as unknown[] | undefined) ?? [], r, ignoreCase),
    empty: (l) => ((l as unknown[] | undefined) ?? []).length === 0,
    notEmpty: (l) => ((l as unknown[] | undefined) ?? []).length !== 0,
    ...mapValues(
      ARRAY_LENGTH,
      (op): Compare =>
        (l, r) =>
          op(((l as unknown[] | undefined) ?? []).length, r as number),
    ),
  },
  object: {
    empty: (l) => !l || Object.keys(l).length === 0,
    notEmpty: (l) => Boolean(l) && Object.keys(l as object).length !== 0,
  },
};
