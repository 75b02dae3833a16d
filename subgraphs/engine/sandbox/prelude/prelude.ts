import { readFileSync } from 'node:fs';
import path from 'node:path';
import type * as Luxon from 'luxon';
import { codec } from './codec';
import { dateConversions, dateExtensions } from './dates';
import { stringExtensions } from './strings';
import type { ExtensionTable, Lib } from './types';
import { arrayExtensions, booleanExtensions, numberExtensions, objectExtensions } from './values';

/**
 * The sandbox prelude: n8n's expression language beyond JavaScript (luxon globals, extension methods,
 * helpers such as `$ifEmpty`), evaluated in a context unless the run needs less. Extensions are not put
 * on prototypes: expressions/syntax.ts rewrites `x.name(…)` into `$$ext(x, "name")(…)` and the
 * dispatcher here resolves it by the value's type, in n8n's order. Every function is assembled by its
 * source text (Function#toString), so each must use only what it receives. The script leaves one
 * hidden global, `globalThis[Symbol.for(PRELUDE_KEY)]` (PreludeApi), for the runners.
 */

export const PRELUDE_KEY = 'n8n.expressions';
/** The property that marks an error as one of n8n's expression errors (Symbol.for). */
export const EXPRESSION_ERROR_KEY = 'n8n.expressionError';

/** What the prelude leaves at `globalThis[Symbol.for(PRELUDE_KEY)]`. */
export interface PreludeApi {
  /** Absent in a context made with the extensions only (sandbox/isolate.ts Prelude `extensions`). */
  luxon?: typeof Luxon;
  /** The function `value.name(…)` calls; undefined when `optional` and there is none. */
  extend(value: unknown, name: string, optional?: 1): ((...args: unknown[]) => unknown) | undefined;
  /** `value?.rest` for a chain whose rest calls an extension: undefined when value is null or undefined. */
  opt(value: unknown, rest: (value: {}) => unknown): unknown;
  /** n8n's expression functions: $if, $ifEmpty, $min, $max, $average, $not, min, max, not, average, numberList, zip. */
  helpers: Record<string, Helper>;
  fail(message: string): never;
  /** Makes `zone` (IANA name, "UTC"; empty or "DEFAULT": UTC) luxon's default zone; fails on an unknown zone. */
  setZone(zone: string | undefined): Luxon.Zone;
  /** The extension names of each type (tests compare them with EXTENSION_NAMES). */
  names(): Record<string, string[]>;
}

/** A helper as an expression calls it: with whatever arguments the expression gives (each declares those it reads). */
export type Helper = (...args: never[]) => unknown;

/** Every extension method name: a call `.name(` of one of these goes through the dispatcher. */
export const EXTENSION_NAMES: ReadonlySet<string> = new Set(
  (
    'append average base64Decode base64Encode beginningOf ceil chunk compact diffTo diffToNow difference endOfMonth extract ' +
    'extractDomain extractEmail extractUrl extractUrlPath first floor format hasField hash intersection isBetween isBlank ' +
    'isDomain isDst isEmail isEmpty isEven isInLast isInteger isNotBlank isNotEmpty isNumeric isOdd isUrl isWeekend ' +
    'keepFieldsContaining keys last length max merge min minus parseJson pluck plus quote randomItem removeDuplicates ' +
    'removeField removeFieldsContaining removeMarkdown removeTags renameKeys replaceSpecialChars round smartJoin sum ' +
    'toBoolean toDate toDateTime toDecimalNumber toFloat toInt toJsonString toNumber toSentenceCase toSnakeCase ' +
    'toTitleCase toWholeNumber union unique urlDecode urlEncode values abs'
  ).split(' '),
);

/** The factories install() composes (their sources are in the prelude next to it). */
interface Factories {
  codec: typeof codec;
  dateConversions: typeof dateConversions;
  tables: Record<string, (lib: Lib) => ExtensionTable>;
}

/** Runs in the sandbox: builds the hidden PreludeApi (luxon only when loaded). Tables are built on first use. */
function install(G: object, luxon: typeof Luxon | undefined, f: Factories, key: string, errorKey: string): void {
  const MARK = Symbol.for(errorKey);
  const fail = (message: string): never => {
    const err = new Error(message);
    err.name = 'ExpressionExtensionError';
    (err as Error & Record<symbol, boolean>)[MARK] = true;
    throw err;
  };
  const tag = (v: unknown) => Object.prototype.toString.call(v);
  const isEqual = (a: unknown, b: unknown): boolean => {
    if (a === b || (a !== a && b !== b)) return true;
    if (!a || !b || typeof a !== 'object' || typeof b !== 'object' || tag(a) !== tag(b)) return false;
    if (a instanceof Date) return a.getTime() === (b as Date).getTime();
    if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((v, i) => isEqual(v, (b as unknown[])[i]));
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && isEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    );
  };
  const compactObject = (o: object): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) {
      if (v === null || v === undefined || v === 'nil' || v === '') continue;
      if (typeof v === 'object' && Object.keys(v).length === 0) continue;
      // An own field even for "__proto__".
      Object.defineProperty(out, k, { value: typeof v === 'object' ? compactObject(v) : v, writable: true, enumerable: true, configurable: true });
    }
    return out;
  };

  let lib: Lib | undefined;
  let tables: Record<string, ExtensionTable> | undefined;
  const build = () => {
    if (tables) return tables;
    lib = { codec: f.codec(), fail, isEqual, compactObject } as Lib;
    Object.defineProperty(lib, 'luxon', { get: () => luxon ?? fail('This evaluation has no dates: luxon was not loaded into its context') });
    Object.assign(lib, f.dateConversions(lib));
    const built: Record<string, ExtensionTable> = {};
    for (const [type, make] of Object.entries(f.tables)) built[type] = make(lib);
    tables = built;
    return built;
  };

  // n8n reads an ISO string in UTC with milliseconds (a Date's JSON) as a Date, except for toDate()/toDateTime().
  const isoDate = (v: unknown, name: string) => {
    if (typeof v !== 'string' || name === 'toDate' || name === 'toDateTime' || !/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}.\d{3}Z/.test(v)) return false;
    const d = new Date(v);
    return !Number.isNaN(d.getTime()) && d.toISOString() === v;
  };
  const TYPES = ['Array', 'Date', 'Number', 'Object', 'String', 'Boolean'];
  const generic: ExtensionTable = { isEmpty: (v) => v === null || v === undefined || !v, isNotEmpty: (v) => !(v === null || v === undefined || !v) };

  type Method = (...args: unknown[]) => unknown;
  function find(input: unknown, name: string): Method | undefined {
    const t = build();
    let value = input;
    let type: string | undefined;
    if (Array.isArray(input)) type = 'Array';
    else if (isoDate(input, name)) [type, value] = ['Date', new Date(input as string)];
    else if (typeof input === 'string') type = 'String';
    else if (typeof input === 'number') type = 'Number';
    else if (input && ((input as { isLuxonDateTime?: unknown }).isLuxonDateTime === true || input instanceof Date)) type = 'Date';
    else if (input !== null && typeof input === 'object') type = 'Object';
    else if (typeof input === 'boolean') type = 'Boolean';
    const table = type ? t[type]! : undefined;
    const own = table && Object.prototype.hasOwnProperty.call(table, name) ? table[name] : undefined;
    if (own) return (...args) => own(value, args);
    if (input && typeof (input as Record<string, unknown>)[name] === 'function') return (input as Record<string, Method>)[name]!.bind(input);
    const fallback = generic[name];
    return fallback && ((...args) => fallback(input, args));
  }

  function extend(input: unknown, name: string, optional?: 1) {
    const fn = find(input, name);
    if (fn || optional) return fn;
    if (input === null || input === undefined) {
      fail(`${name} can't be used on ${String(input)} value (to ignore this error, add a ? to the variable before this function, e.g. my_var?.${name})`);
    }
    const t = build();
    const types = TYPES.filter((type) => Object.prototype.hasOwnProperty.call(t[type], name)).map((type) => `"${type}"`);
    if (types.length === 0) fail(`Unknown expression function: ${name}`);
    if (types.length === 1) fail(`${name}() is only callable on type ${types[0]}`);
    const last = types.pop();
    return fail(`${name}() is only callable on types ${types.join(', ')}, and ${last}`);
  }

  const average = (...args: unknown[]) => build().Array!.average!(args, []);
  const not = (v: unknown) => !v;
  const helpers: Record<string, Helper> = {
    $if(...args: unknown[]) {
      if (args.length < 2) fail('$if requires at least 2 parameters: test, value_if_true[, and value_if_false]');
      return args[0] ? args[1] : args.length > 2 ? args[2] : false;
    },
    $ifEmpty: function (value: unknown, fallback: unknown) {
      if (arguments.length !== 2) fail('expected two arguments (value, defaultValue) for this function');
      const empty =
        value === undefined ||
        value === null ||
        value === '' ||
        (typeof value === 'object' && (Array.isArray(value) ? !value.length : !Object.keys(value).length));
      return empty ? fallback : value;
    },
    $min: Math.min,
    $max: Math.max,
    $average: average,
    $not: not,
    min: Math.min,
    max: Math.max,
    not,
    average,
    numberList(start: number, end: number) {
      const size = Math.abs(start - end) + 1;
      return Array.from({ length: size }, (_, i) => (start < end ? start + i : start - i));
    },
    zip(keys: unknown[], values: unknown[]) {
      if (!Array.isArray(keys) || !Array.isArray(values)) fail('keys and values must be arrays');
      if (keys.length !== values.length) fail('keys and values not of equal length');
      const out: Record<string, unknown> = {};
      keys.forEach((k, i) => (out[k as string] = values[i]));
      return out;
    },
  };

  function setZone(zone: string | undefined) {
    if (!luxon) return fail('This evaluation has no dates: luxon was not loaded into its context');
    const name = !zone || zone === 'DEFAULT' ? 'UTC' : zone;
    const normalized = luxon.Info.normalizeZone(name);
    if (!normalized.isValid) fail(`The workflow's time zone "${name}" is not a time zone (use an IANA name such as "Europe/Berlin")`);
    luxon.Settings.defaultZone = normalized;
    return normalized;
  }

  const api: PreludeApi = {
    luxon,
    extend,
    opt: (value, rest) => (value === null || value === undefined ? undefined : rest(value)),
    helpers,
    fail,
    setZone,
    names: () => Object.fromEntries(Object.entries(build()).map(([type, table]) => [type, Object.keys(table)])),
  };
  Object.defineProperty(G, Symbol.for(key), { value: api });
  for (const name of ['DateTime', 'Duration', 'Interval'] as const) {
    if (luxon) Object.defineProperty(G, name, { value: luxon[name], writable: true, configurable: true, enumerable: false });
  }
}

/** The levels of the prelude (sandbox/isolate.ts Prelude): the extensions alone, or luxon and the extensions. */
export type PreludeLevel = 'extensions' | 'n8n';

/**
 * Run in a context right after the prelude, before an evaluation takes it (sandbox/isolate.ts): compiles
 * what most evaluations use (the extension tables; luxon's construction, zones, ISO output) so
 * that they do not. It changes nothing they can observe.
 */
export function preludeWarmup(level: PreludeLevel): string {
  const api = `globalThis[Symbol.for(${JSON.stringify(PRELUDE_KEY)})]`;
  const dates = `const d = DateTime.fromMillis(0, { zone: 'UTC' });
  JSON.stringify([d, d.startOf('day'), d.plus({ days: 1 }).minus({ hours: 1 }), DateTime.fromISO('2024-01-01T00:00:00.000+01:00', { setZone: true }).toFormat('yyyy-MM-dd HH:mm')]);`;
  return `{ ${api}.names(); ${api}.extend('a', 'isEmpty')(); ${level === 'n8n' ? dates : ''} }`;
}

const sources = new Map<PreludeLevel, string>();

/** The prelude script of a level (luxon when asked for, the extensions, install()); assembled once per process. */
export function preludeSource(level: PreludeLevel): string {
  const cached = sources.get(level);
  if (cached) return cached;
  const luxonFile = path.join(path.dirname(require.resolve('luxon/package.json')), 'build', 'global', 'luxon.min.js');
  const parts: [string, Function][] = [
    ['codec', codec],
    ['dateConversions', dateConversions],
    ['Date', dateExtensions],
    ['String', stringExtensions],
    ['Number', numberExtensions],
    ['Boolean', booleanExtensions],
    ['Array', arrayExtensions],
    ['Object', objectExtensions],
  ];
  const tables = parts.slice(2).map(([type, fn]) => `${JSON.stringify(type)}: ${fn.name}`);
  const luxon = level === 'n8n' ? `(function () {\n${readFileSync(luxonFile, 'utf8')}\n;return luxon;\n})()` : 'undefined';
  const source = [
    '(function () {',
    `const luxon = ${luxon};`,
    ...parts.map(([, fn]) => fn.toString()),
    install.toString(),
    `install(globalThis, luxon, { codec, dateConversions, tables: { ${tables.join(', ')} } }, ${JSON.stringify(PRELUDE_KEY)}, ${JSON.stringify(EXPRESSION_ERROR_KEY)});`,
    '})();',
  ].join('\n');
  sources.set(level, source);
  return source;
}
