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
 *
 * luxon is there in every context with a prelude, but built on first use (lazyLuxon): `DateTime`,
 * `Duration` and `Interval` are getters until then, and building luxon is most of a context's cost.
 * Code that never touches a date never pays for it; code that does gets the same globals.
 */

export const PRELUDE_KEY = 'n8n.expressions';
/** The property that marks an error as one of n8n's expression errors (Symbol.for). */
export const EXPRESSION_ERROR_KEY = 'n8n.expressionError';

/** What the prelude leaves at `globalThis[Symbol.for(PRELUDE_KEY)]`. */
export interface PreludeApi {
  /** luxon, built into the context on first read (lazyLuxon). */
  readonly luxon: typeof Luxon;
  /** luxon when something has built it already, else undefined: it never builds it. */
  loaded(): typeof Luxon | undefined;
  /** The function `value.name(…)` calls; undefined when `optional` and there is none. */
  extend(value: unknown, name: string, optional?: 1): ((...args: unknown[]) => unknown) | undefined;
  /** `value?.rest` for a chain whose rest calls an extension: undefined when value is null or undefined. */
  opt(value: unknown, rest: (value: {}) => unknown): unknown;
  /** n8n's expression functions: $if, $ifEmpty, $min, $max, $average, $not, min, max, not, average, numberList, zip. */
  helpers: Record<string, Helper>;
  fail(message: string): never;
  /**
   * Makes `zone` (IANA name, "UTC"; empty or "DEFAULT": UTC) luxon's default zone; fails on an unknown
   * zone. With `whenLoaded` and luxon not built yet, it is done when luxon is (and fails then): undefined.
   */
  setZone(zone: string | undefined, whenLoaded?: 1): Luxon.Zone | undefined;
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

/** What lazyLuxon gives install(): luxon on demand, and a hook run when it is built. */
interface LuxonLoader {
  load(): typeof Luxon;
  loaded(): typeof Luxon | undefined;
  /** Run on the new luxon before anything gets it; when it throws, luxon is not kept (the next use tries again). */
  onLoad?: (luxon: typeof Luxon) => void;
}

/**
 * Runs in the sandbox: luxon's classes as globals that build luxon (`make`, its compiled code) on
 * first read. Once built, each global still the getter becomes the plain property it is otherwise
 * (writable, configurable, not enumerable); assigning one before only replaces that one.
 */
function lazyLuxon(G: object, make: () => typeof Luxon): LuxonLoader {
  const NAMES = ['DateTime', 'Duration', 'Interval'] as const;
  const plain = (name: string, value: unknown) => Object.defineProperty(G, name, { value, writable: true, configurable: true, enumerable: false });
  const getters: Record<string, () => unknown> = {};
  let luxon: typeof Luxon | undefined;
  const loader: LuxonLoader = {
    loaded: () => luxon,
    load() {
      if (luxon) return luxon;
      const made = make();
      loader.onLoad?.(made);
      luxon = made;
      for (const name of NAMES) {
        const own = Object.getOwnPropertyDescriptor(G, name);
        if (own && own.get === getters[name]) plain(name, made[name]);
      }
      return made;
    },
  };
  for (const name of NAMES) {
    const get = () => loader.load()[name];
    getters[name] = get;
    Object.defineProperty(G, name, { get, set: (value: unknown) => plain(name, value), configurable: true, enumerable: false });
  }
  return loader;
}

/** Runs in the sandbox: builds the hidden PreludeApi. Tables are built on first use, luxon too (lazyLuxon). */
function install(G: object, loader: LuxonLoader, f: Factories, key: string, errorKey: string): void {
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
    Object.defineProperty(lib, 'luxon', { get: () => loader.load() });
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

  const applyZone = (luxon: typeof Luxon, zone: string | undefined) => {
    const name = !zone || zone === 'DEFAULT' ? 'UTC' : zone;
    const normalized = luxon.Info.normalizeZone(name);
    if (!normalized.isValid) fail(`The workflow's time zone "${name}" is not a time zone (use an IANA name such as "Europe/Berlin")`);
    luxon.Settings.defaultZone = normalized;
    return normalized;
  };
  // A zone set before luxon is built applies as it is built.
  let pending: { zone: string | undefined } | undefined;
  loader.onLoad = (luxon) => {
    if (pending) applyZone(luxon, pending.zone);
  };
  function setZone(zone: string | undefined, whenLoaded?: 1) {
    if (whenLoaded && !loader.loaded()) {
      pending = { zone };
      return undefined;
    }
    pending = undefined;
    return applyZone(loader.load(), zone);
  }

  const api: PreludeApi = {
    get luxon() {
      return loader.load();
    },
    loaded: loader.loaded,
    extend,
    opt: (value, rest) => (value === null || value === undefined ? undefined : rest(value)),
    helpers,
    fail,
    setZone,
    names: () => Object.fromEntries(Object.entries(build()).map(([type, table]) => [type, Object.keys(table)])),
  };
  Object.defineProperty(G, Symbol.for(key), { value: api });
}

/**
 * The levels of the prelude (sandbox/isolate.ts Prelude), each with luxon's globals built on first
 * use: those alone (`dates`), with n8n's extensions (`extensions`), or both with luxon built ahead
 * (`n8n`, for runs known to use dates: the context is made before the run takes it).
 */
export type PreludeLevel = 'dates' | 'extensions' | 'n8n';

/**
 * Run in a context right after the prelude, before an evaluation takes it (sandbox/isolate.ts): compiles
 * what most evaluations use (the extension tables; at `n8n`, luxon's construction, zones, ISO output)
 * so that they do not. It changes nothing they can observe (at `n8n`, luxon's globals are then plain
 * properties rather than getters).
 */
export function preludeWarmup(level: PreludeLevel): string {
  if (level === 'dates') return '';
  const api = `globalThis[Symbol.for(${JSON.stringify(PRELUDE_KEY)})]`;
  const dates = `const d = DateTime.fromMillis(0, { zone: 'UTC' });
  JSON.stringify([d, d.startOf('day'), d.plus({ days: 1 }).minus({ hours: 1 }), DateTime.fromISO('2024-01-01T00:00:00.000+01:00', { setZone: true }).toFormat('yyyy-MM-dd HH:mm')]);`;
  return `{ ${api}.names(); ${api}.extend('a', 'isEmpty')(); ${level === 'n8n' ? dates : ''} }`;
}

const sources = new Map<PreludeLevel, string>();

/**
 * The prelude script of a level (luxon's lazy globals; the extensions and install() unless `dates`);
 * assembled once per process. luxon's code is a function in it, run on first use: an isolate that
 * runs the compiled script in each new context compiles it once (sandbox/isolate.ts).
 */
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
  // In parentheses, so that V8 compiles it with the script (and keeps it in the code cache, isolate.ts) though it runs later.
  const luxon = `(function () {\n${readFileSync(luxonFile, 'utf8')}\n;return luxon;\n})`;
  const extensions = [
    ...parts.map(([, fn]) => fn.toString()),
    install.toString(),
    `install(globalThis, loader, { codec, dateConversions, tables: { ${tables.join(', ')} } }, ${JSON.stringify(PRELUDE_KEY)}, ${JSON.stringify(EXPRESSION_ERROR_KEY)});`,
  ];
  const source = ['(function () {', `const loader = (${lazyLuxon.toString()})(globalThis, ${luxon});`, ...(level === 'dates' ? [] : extensions), '})();'].join(
    '\n',
  );
  sources.set(level, source);
  return source;
}
