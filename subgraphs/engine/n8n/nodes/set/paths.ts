/**
 * Field names as n8n's Set node reads them: with dot notation a lodash path, except that a key
 * the object already has is taken literally; a missing level is created as an object, or an array
 * before an index. Writes copy a container before its first change, so input items are never
 * modified. Results are items as they read once serialised (what the next node and the user see):
 * a field written with undefined is absent, gaps in an array are null.
 */

type Container = Record<string, unknown> | unknown[];

// lodash's path grammar (MIT): property names, [index], ["quoted"] and empty segments.
const PROP_NAME = /[^.[\]]+|\[(?:(-?\d+(?:\.\d+)?)|(["'])((?:(?!\2)[^\\]|\\.)*?)\2)\]|(?=(?:\.|\[\])(?:\.|\[\]|$))/g;
const ESCAPE = /\\(\\)?/g;
const DEEP = /\.|\[(?:[^[\]]*|(["'])(?:(?!\1)[^\\]|\\.)*?\1)\]/;
const PLAIN = /^\w*$/;
const INDEX = /^(?:0|[1-9]\d*)$/;
/** lodash's set stops at these keys (prototype pollution); so does this. */
const GUARDED = new Set(['__proto__', 'constructor', 'prototype']);

const parsed = new Map<string, string[]>();

function stringToPath(s: string): string[] {
  let path = parsed.get(s);
  if (path) return path;
  path = s.charCodeAt(0) === 46 ? [''] : [];
  for (const m of s.matchAll(PROP_NAME)) path.push(m[2] ? m[3]!.replace(ESCAPE, '$1') : (m[1] ?? m[0]));
  if (parsed.size >= 500) parsed.clear();
  parsed.set(s, path);
  return path;
}

function toKey(v: unknown): string {
  if (typeof v === 'string') return v;
  return Object.is(v, -0) ? '-0' : String(v);
}

function hasOwn(v: unknown, key: string): boolean {
  return v !== null && v !== undefined && Object.prototype.hasOwnProperty.call(Object(v), key);
}

function isContainer(v: unknown): v is Container {
  return v !== null && typeof v === 'object';
}

/** A name as path segments, read against `target` (lodash's castPath). */
export function castPath(name: unknown, target: object): string[] {
  if (Array.isArray(name)) return name.map(toKey);
  if (typeof name !== 'string') return [toKey(name)];
  if (PLAIN.test(name) || !DEEP.test(name) || hasOwn(target, name)) return [name];
  return stringToPath(name);
}

/** The value at a path (own properties only), or undefined. */
export function getPath(source: unknown, path: string[]): unknown {
  if (path.length === 0) return undefined;
  let cur = source;
  for (const key of path) {
    if (!hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** n8n's key clean-up without dot notation: `["a.b"]` means the key `a.b` unless the bracketed key itself exists. */
function sanitizeKey(target: object, key: string): string {
  if (hasOwn(target, key) && (target as Record<string, unknown>)[key] !== undefined) return key;
  if ((key.startsWith("['") && key.endsWith("']")) || (key.startsWith('["') && key.endsWith('"]'))) return key.slice(2, -2);
  return key;
}

/**
 * Reads and writes the fields of one output item. `root` is the item's new json, owned by the
 * writer; everything else it reaches is copied before being changed.
 */
export class ItemWriter {
  private readonly owned = new Set<object>();
  readonly root: Record<string, unknown>;

  /**
   * dotNotation: names are paths. sanitizeKeys: without dot notation, `["name"]` means `name`
   * (Set 3.x does this; Set 1/2 take the name as it is).
   */
  constructor(
    root: Record<string, unknown>,
    private readonly dotNotation: boolean,
    private readonly sanitizeKeys: boolean,
  ) {
    this.root = this.own(root);
  }

  get(source: Record<string, unknown>, name: string): unknown {
    if (this.dotNotation) return getPath(source, castPath(name, source));
    const key = this.sanitizeKeys ? sanitizeKey(source, name) : name;
    return hasOwn(source, key) ? source[key] : undefined;
  }

  set(name: unknown, value: unknown): void {
    if (this.dotNotation) return this.setPath(castPath(name, this.root), value);
    const key = toKey(name);
    const target = this.sanitizeKeys ? sanitizeKey(this.root, key) : key;
    // `json["__proto__"] = v` changes n8n's item's prototype, which serialises to nothing.
    if (target !== '__proto__') assign(this.root, target, value);
  }

  unset(name: string): void {
    if (!this.dotNotation) {
      delete this.root[this.sanitizeKeys ? sanitizeKey(this.root, name) : name];
      return;
    }
    const path = castPath(name, this.root);
    const last = path[path.length - 1];
    if (last === undefined) return;
    // Find the parent first: nothing is copied when the field is not there.
    const parentPath = path.slice(0, -1);
    const parent = parentPath.length ? getPath(this.root, parentPath) : this.root;
    if (!isContainer(parent) || !hasOwn(parent, last)) return;
    const target = this.ownedAt(parentPath);
    if (Array.isArray(target) && INDEX.test(last)) target[Number(last)] = null;
    else delete (target as Record<string, unknown>)[last];
  }

  private setPath(path: string[], value: unknown): void {
    let nested: Container = this.root;
    for (let i = 0; i < path.length; i++) {
      const key = path[i]!;
      if (GUARDED.has(key)) return;
      if (i === path.length - 1) return assign(nested, key, value);
      const cur: unknown = hasOwn(nested, key) ? (nested as Record<string, unknown>)[key] : undefined;
      const next: Container = isContainer(cur) ? this.mine(cur) : this.own(INDEX.test(path[i + 1]!) ? [] : {});
      assign(nested, key, next);
      nested = next;
    }
  }

  /** The container at `path` (which exists), with every container on the way owned. */
  private ownedAt(path: string[]): Container {
    let target: Container = this.root;
    for (const key of path) {
      const next = this.mine((target as Record<string, unknown>)[key] as Container);
      assign(target, key, next);
      target = next;
    }
    return target;
  }

  private own<T extends object>(o: T): T {
    this.owned.add(o);
    return o;
  }

  private mine(c: Container): Container {
    if (this.owned.has(c)) return c;
    return this.own(Array.isArray(c) ? c.slice() : { ...c });
  }
}

function assign(target: Container, key: string, value: unknown): void {
  if (Array.isArray(target) && INDEX.test(key)) {
    const index = Number(key);
    for (let j = target.length; j < index; j++) target[j] = null;
    target[index] = value === undefined ? null : value;
  } else if (value === undefined) {
    delete (target as Record<string, unknown>)[key];
  } else {
    (target as Record<string, unknown>)[key] = value;
  }
}
