import { ownEntry, setOwn } from '../../../../../kernel/names';

/**
 * Field paths and comparisons as n8n's item-list nodes see them. n8n reads a field named
 * `a.b[0]` through lodash (`get`, `set`, `unset`, `pick`, `isEqual`, `lt`), so the exact rules
 * of lodash's path syntax decide which values a workflow sees: a literal key wins over a path
 * (`{"a.b": 1}`), `a[0]`, `a["x.y"]` and a leading `.` all parse as lodash parses them, and `lt`
 * compares non-strings as numbers. This is our own implementation of those rules (no lodash
 * dependency), for JSON data. Only own properties are read, so a field name never reaches a
 * prototype (lodash would hand back functions there, which JSON items cannot carry anyway).
 */

export type Json = Record<string, unknown>;

const IS_DEEP = /\.|\[(?:[^[\]]*|(["'])(?:(?!\1)[^\\]|\\.)*?\1)\]/;
const IS_PLAIN = /^\w*$/;
const PROP_NAME = /[^.[\]]+|\[(?:(-?\d+(?:\.\d+)?)|(["'])((?:(?!\2)[^\\]|\\.)*?)\2)\]|(?=(?:\.|\[\])(?:\.|\[\]|$))/g;
const ESCAPE = /\\(\\)?/g;
const INDEX = /^(?:0|[1-9]\d*)$/;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** Parsed paths, shared by every item of every execution (names are few, items many). */
const parsed = new Map<string, string[]>();
const MAX_PARSED = 500;

function parsePath(path: string): string[] {
  let parts = parsed.get(path);
  if (parts) return parts;
  parts = [];
  if (path.charCodeAt(0) === 46) parts.push('');
  for (const m of path.matchAll(PROP_NAME)) {
    parts.push(m[2] !== undefined ? m[3]!.replace(ESCAPE, '$1') : (m[1] ?? m[0]));
  }
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(path, parts);
  return parts;
}

function isObjectLike(v: unknown): v is Json {
  return v !== null && typeof v === 'object';
}

/** lodash's castPath: the name itself when the object has it as a key or it is no path. */
export function pathOf(path: string, object?: unknown): string[] {
  if (typeof path !== 'string') return [String(path)];
  if (IS_PLAIN.test(path) || !IS_DEEP.test(path)) return [path];
  if (object !== null && object !== undefined && path in Object(object)) return [path];
  return parsePath(path);
}

/** `json[key]` for an own key only (the "disable dot notation" reading). */
export function ownValue(json: Json, key: string): unknown {
  return ownEntry(json, key);
}

/** lodash `get(object, path)`. */
export function getPath(object: unknown, path: string): unknown {
  return getParts(object, pathOf(path, object));
}

function getParts(object: unknown, parts: readonly string[]): unknown {
  let value = object;
  for (const key of parts) {
    if (value === null || value === undefined) return undefined;
    value = ownEntry(value, key);
  }
  return parts.length ? value : undefined;
}

/** Whether writing `path` would reach an object's prototype (`__proto__`, `constructor`, …). */
export function reachesPrototype(path: string): boolean {
  return pathOf(path).some((key) => FORBIDDEN.has(key));
}

/** lodash `set(object, path, value)`: missing levels become objects, or arrays before an index. */
export function setPath(object: Json, path: string, value: unknown): void {
  setParts(object, pathOf(path, object), value);
}

function setParts(object: Json, parts: readonly string[], value: unknown): void {
  let nested: unknown = object;
  for (let i = 0; i < parts.length && isObjectLike(nested); i++) {
    const key = parts[i]!;
    if (FORBIDDEN.has(key)) return;
    let next = value;
    if (i < parts.length - 1) {
      const current = (nested as Json)[key];
      next = isObjectLike(current) ? current : INDEX.test(parts[i + 1]!) ? [] : {};
    }
    (nested as Json)[key] = next;
    nested = next;
  }
}

/** lodash `unset(object, path)`. */
export function unsetPath(object: Json, path: string): void {
  const parts = pathOf(path, object);
  const parent = parts.length < 2 ? object : getParts(object, parts.slice(0, -1));
  const key = parts[parts.length - 1];
  if (isObjectLike(parent) && key !== undefined && !FORBIDDEN.has(key)) delete (parent as Json)[key];
}

/** lodash `pick(object, ...paths)`: the paths the object has, rebuilt in the order given. */
export function pickPaths(object: Json, paths: readonly string[]): Json {
  const out: Json = {};
  for (const path of paths) {
    const parts = pathOf(path, object);
    if (hasParts(object, parts)) setParts(out, parts, getParts(object, parts));
  }
  return out;
}

function hasParts(object: unknown, parts: readonly string[]): boolean {
  let value = object;
  for (const key of parts) {
    if (value === null || value === undefined || !Object.prototype.hasOwnProperty.call(Object(value), key)) return false;
    value = Object(value)[key];
  }
  return parts.length > 0;
}

/**
 * The leaf paths of an object, as n8n's `flattenKeys` lists them: `a.b`, `list.0`; empty
 * objects and lists have none. Collected into an object first because that decides their order
 * (integer-like keys first, as for any JavaScript object).
 */
export function flattenKeys(json: Json): string[] {
  const out: Record<string, true> = Object.create(null);
  const walk = (value: unknown, prefix: string): void => {
    if (!isObjectLike(value)) {
      out[prefix] = true;
      return;
    }
    for (const key of Object.keys(value)) walk((value as Json)[key], prefix === '' && value === json ? key : `${prefix}.${key}`);
  };
  walk(json, '');
  return Object.keys(out);
}

/** lodash `isEqual` for JSON values (deep, key order ignored, NaN equals NaN). */
export function isEqual(a: unknown, b: unknown): boolean {
  if (a === b || (a !== a && b !== b)) return true;
  if (!isObjectLike(a) || !isObjectLike(b) || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => isEqual(v, b[i]));
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && isEqual(a[k], (b as Json)[k]));
}

/** lodash `lt`: strings compare as strings, anything else as numbers (lodash's `toNumber`). */
export function lt(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a < b;
  return toNumber(a) < toNumber(b);
}

function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'symbol') return NaN;
  let v: unknown = value;
  if (isObjectLike(v)) v = String(v);
  if (typeof v !== 'string') return v === 0 ? 0 : Number(v);
  const s = v.trim();
  if (/^0b[01]+$/i.test(s)) return parseInt(s.slice(2), 2);
  if (/^0o[0-7]+$/i.test(s)) return parseInt(s.slice(2), 8);
  return /^[-+]0x[0-9a-f]+$/i.test(s) ? NaN : Number(s);
}

/** A copy of JSON data (n8n's `deepCopy` of an item). */
export function deepCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(deepCopy) as T;
  if (!isObjectLike(value)) return value;
  const out: Json = {};
  for (const key of Object.keys(value)) setOwn(out, key, deepCopy((value as Json)[key]));
  return out as T;
}

/** How a field name is read: a lodash path, or (disableDotNotation) a plain key. */
export type FieldReader = (json: Json, field: string) => unknown;

export function fieldReader(disableDotNotation: unknown): FieldReader {
  return disableDotNotation ? ownValue : getPath;
}
