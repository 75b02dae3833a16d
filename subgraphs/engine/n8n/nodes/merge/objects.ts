/**
 * How n8n's Merge node folds the json of matched items into one object. n8n uses lodash's
 * `merge`, `mergeWith`, `assign` and `assignWith` for its "Merging Nested Fields" and "Minimize
 * Empty Fields" options; the functions here reproduce their observable semantics on item json
 * (key order: the target's keys first, new keys appended; nested arrays merged index by index;
 * `undefined` never overwrites a key that exists) without depending on lodash.
 */

type Json = Record<string, unknown>;
type Customizer = (targetValue: unknown, sourceValue: unknown) => unknown;

/** Merges `sources` into `target` (as one argument list) and returns the result. */
export type MergeFn = (target: Json, ...sources: Json[]) => Json;

export interface ClashOptions {
  mergeMode: 'deepMerge' | 'shallowMerge';
  /** "Minimize Empty Fields": an empty value (undefined, null, '') never replaces the other version. */
  overrideEmpty: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && (typeof v === 'object' || typeof v === 'function');
}

function isPlain(v: unknown): v is Json {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === null || proto === Object.prototype;
}

/** lodash's "array-like object": an object (not a function) with a valid integer `length`. */
function isArrayLikeObject(v: unknown): v is ArrayLike<unknown> {
  if (v === null || typeof v !== 'object') return false;
  const length = (v as { length?: unknown }).length;
  return typeof length === 'number' && length >= 0 && length % 1 === 0 && length <= Number.MAX_SAFE_INTEGER;
}

/** lodash's `eq` (SameValueZero). */
function same(a: unknown, b: unknown): boolean {
  return a === b || (a !== a && b !== b);
}

/** An own data property, even for `__proto__` (a plain assignment would set the prototype). */
function define(object: Json, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}

/** lodash's `safeGet`: a function-valued `constructor` and `__proto__` read as absent. */
function read(object: Json, key: string): unknown {
  if (key === '__proto__') return undefined;
  const value = object[key];
  return key === 'constructor' && typeof value === 'function' ? undefined : value;
}

/** lodash's `assignMergeValue`: `undefined` only fills a missing key; an equal value is left alone. */
function assignMergeValue(object: Json, key: string, value: unknown): void {
  if ((value !== undefined && !same(object[key], value)) || (value === undefined && !(key in object))) define(object, key, value);
}

/** lodash's `assignValue` (used by assign/assignWith). */
function assignValue(object: Json, key: string, value: unknown): void {
  if (!(Object.prototype.hasOwnProperty.call(object, key) && same(object[key], value)) || (value === undefined && !(key in object))) define(object, key, value);
}

function keysOf(source: object): string[] {
  if (Array.isArray(source)) return Array.from({ length: source.length }, (_, i) => String(i)).concat(Object.keys(source).filter((k) => !/^\d+$/.test(k)));
  const keys: string[] = [];
  for (const key in source) keys.push(key);
  return keys;
}

/** lodash's `baseMerge`: `source` deep-merged into `object` in place. */
function mergeInto(object: Json, source: object, customizer: Customizer | undefined): void {
  if (object === source) return;
  for (const key of keysOf(source)) {
    const sourceValue = read(source as Json, key);
    if (isObject(sourceValue)) {
      mergeDeep(object, key, sourceValue, customizer);
      continue;
    }
    const custom = customizer?.(read(object, key), sourceValue);
    assignMergeValue(object, key, custom === undefined ? sourceValue : custom);
  }
}

/** lodash's `baseMergeDeep`: an array or plain object merged into what the target holds at `key`. */
function mergeDeep(object: Json, key: string, sourceValue: Record<string, unknown>, customizer: Customizer | undefined): void {
  const objectValue = read(object, key);
  const custom = customizer?.(objectValue, sourceValue);
  if (custom !== undefined) return assignMergeValue(object, key, custom);
  let merged: unknown;
  if (Array.isArray(sourceValue)) {
    if (Array.isArray(objectValue)) merged = objectValue;
    else if (isArrayLikeObject(objectValue)) merged = Array.from({ length: objectValue.length }, (_, i) => objectValue[i]);
    else merged = [];
  } else if (isPlain(sourceValue)) {
    // An object (even an array) already there receives the keys; anything else is replaced by a fresh object.
    merged = isObject(objectValue) && typeof objectValue !== 'function' ? objectValue : {};
  } else {
    return assignMergeValue(object, key, sourceValue);
  }
  mergeInto(merged as Json, sourceValue, customizer);
  assignMergeValue(object, key, merged);
}

function assignInto(object: Json, source: Json, customizer: Customizer | undefined): void {
  for (const key of Object.keys(source)) {
    const custom = customizer?.(object[key], source[key]);
    assignValue(object, key, custom === undefined ? source[key] : custom);
  }
}

/** "Minimize Empty Fields": keep the target's version when the other one is empty. */
const keepUnlessEmpty: Customizer = (targetValue, sourceValue) =>
  sourceValue === undefined || sourceValue === null || sourceValue === '' ? targetValue : undefined;

/** A deep copy of plain objects and arrays (other values are kept as they are). */
function cloneDeep<T>(value: T): T {
  if (Array.isArray(value)) return value.map(cloneDeep) as T;
  if (!isPlain(value)) return value;
  const out: Json = {};
  for (const key of Object.keys(value)) define(out, key, cloneDeep(value[key]));
  return out as T;
}

/**
 * n8n's `selectMergeMethod` for the clash options (undefined: none, or "Always Add Input Number
 * to Field Names", which hides them). With "Minimize Empty Fields" and a deep merge n8n merges into
 * a shallow copy, so nested objects of an item merged several times end up holding every merge;
 * its outputs show that, so it is reproduced on private copies made once per nested object and
 * execution (`shared`), leaving the input items untouched.
 */
export function mergeMethod(options: ClashOptions | undefined, shared: WeakMap<object, unknown> = new WeakMap()): MergeFn {
  if (options?.overrideEmpty && options.mergeMode === 'shallowMerge') {
    return (target, ...sources) => {
      const out = { ...target };
      for (const source of sources) assignInto(out, source, keepUnlessEmpty);
      return out;
    };
  }
  if (options?.overrideEmpty) {
    return (target, ...sources) => {
      const out: Json = {};
      for (const key of Object.keys(target)) define(out, key, sharedCopy(target[key], shared));
      for (const source of sources) mergeInto(out, source, keepUnlessEmpty);
      return out;
    };
  }
  if (options?.mergeMode === 'shallowMerge') {
    return (target, ...sources) => {
      const out: Json = {};
      for (const object of [target, ...sources]) assignInto(out, object, undefined);
      return out;
    };
  }
  return (target, ...sources) => {
    const out: Json = {};
    for (const object of [target, ...sources]) mergeInto(out, object, undefined);
    return out;
  };
}

function sharedCopy(value: unknown, shared: WeakMap<object, unknown>): unknown {
  if (!Array.isArray(value) && !isPlain(value)) return value;
  let copy = shared.get(value);
  if (copy === undefined) shared.set(value, (copy = cloneDeep(value)));
  return copy;
}

/** n8n's `addSuffixToEntriesKeys`: every top-level key renamed `<key>_<suffix>`. */
export function withSuffix(json: Json, suffix: string): Json {
  const out: Json = {};
  for (const key of Object.keys(json)) define(out, `${key}_${suffix}`, json[key]);
  return out;
}
