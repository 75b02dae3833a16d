import type { Item } from '../../../nodes';

/**
 * Matching items of two inputs by field values, as n8n's Merge node does ("Fields to Match"):
 * field names are lodash paths (`a.b`, `a[0]`, `['x.y']`) unless dot notation is disabled; values
 * match when deeply equal (lodash `isEqual`), or with "Fuzzy Compare" under n8n's loose rules
 * (`1` and `"1"`, `true` and `"true"`, null and `""`, …). Exact matching uses an index of input 2
 * built once; fuzzy matching compares pairs, as the rules are not an equivalence.
 */

type Json = Record<string, unknown>;

export interface FieldPair {
  field1: unknown;
  field2: unknown;
}

export interface MatchOptions {
  fuzzyCompare: boolean;
  disableDotNotation: boolean;
  multipleMatches: 'all' | 'first';
  /** One record per (input 1 item, match) pair; otherwise one per input 1 item with all its matches. */
  pairEachMatch: boolean;
}

export interface Matches {
  matched: { entry: Item; matches: Item[] }[];
  /** The input 2 items that matched, in input 2's order. */
  matched2: Item[];
  unmatched1: Item[];
  unmatched2: Item[];
}

// lodash's property-path grammar (castPath/stringToPath), so `a.b[0]` and `['a.b']` read the same way.
const DEEP_PROP = /\.|\[(?:[^[\]]*|(["'])(?:(?!\1)[^\\]|\\.)*?\1)\]/;
const PLAIN_PROP = /^\w*$/;
const PROP_NAME = /[^.[\]]+|\[(?:(-?\d+(?:\.\d+)?)|(["'])((?:(?!\2)[^\\]|\\.)*?)\2)\]|(?=(?:\.|\[\])(?:\.|\[\]|$))/g;
const ESCAPE_CHAR = /\\(\\)?/g;

function pathSegments(path: string): string[] {
  const segments: string[] = path.charCodeAt(0) === 46 ? [''] : [];
  path.replace(PROP_NAME, (match, number?: string, quote?: string, inner?: string) => {
    segments.push(quote ? inner!.replace(ESCAPE_CHAR, '$1') : (number ?? match));
    return match;
  });
  return segments;
}

/** lodash `get(object, path)` for one path, parsed once. */
export function pathReader(path: unknown): (object: Json) => unknown {
  if (typeof path !== 'string' || PLAIN_PROP.test(path) || !DEEP_PROP.test(path)) {
    const key = String(path);
    return (object) => object[key];
  }
  const segments = pathSegments(path);
  return (object) => {
    // A key that is literally the whole path wins over the path (lodash's `isKey`).
    if (path in object) return object[path];
    let value: unknown = object;
    let i = 0;
    while (value !== null && value !== undefined && i < segments.length) value = (value as Json)[segments[i++]!];
    return i > 0 && i === segments.length ? value : undefined;
  };
}

/** The value of a "Fields to Match" field in an item's json. */
export function fieldReader(field: unknown, disableDotNotation: boolean): (json: Json) => unknown {
  if (!disableDotNotation) return pathReader(field);
  const key = String(field);
  return (json) => json[key];
}

/** lodash `isEqual` for item data. */
export function isEqual(a: unknown, b: unknown): boolean {
  if (a === b || (a !== a && b !== b)) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!isEqual(a[i], b[i])) return false; // holes read as undefined
    return true;
  }
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && +a === +b;
  const keysA = Object.keys(a);
  if (keysA.length !== Object.keys(b).length) return false;
  return keysA.every((k) => Object.prototype.hasOwnProperty.call(b, k) && isEqual((a as Json)[k], (b as Json)[k]));
}

/** null, '' and [] count as the same "empty" value under fuzzy compare. */
function isEmptyish(v: unknown): boolean {
  return v === null || v === '' || (Array.isArray(v) && v.length === 0);
}

function jsonEquals(text: string, value: unknown): boolean {
  try {
    return isEqual(JSON.parse(text), value);
  } catch {
    return false;
  }
}

function boolMatches(bool: boolean, other: unknown): boolean {
  if (typeof other === 'string') {
    const lower = other.toLocaleLowerCase();
    return bool ? lower === 'true' || other === '1' : lower === 'false' || other === '0';
  }
  return typeof other === 'number' && other === (bool ? 1 : 0);
}

/** n8n's `fuzzyCompare(true)` (compare version 1), as the Merge node uses it. */
export function fuzzyEquals(a: unknown, b: unknown): boolean {
  if (a !== null && b !== null && typeof a === typeof b) return isEqual(a, b);
  if (isEmptyish(a) && (isEmptyish(b) || b === undefined)) return true;
  if (a === undefined && isEmptyish(b)) return true;
  if (typeof a === 'number' && typeof b === 'string') return a.toString() === b;
  if (typeof a === 'string' && typeof b === 'number') return a === b.toString();
  if (a !== null && typeof a === 'object' && typeof b === 'string') return jsonEquals(b, a);
  if (b !== null && typeof a === 'string' && typeof b === 'object') return jsonEquals(a, b);
  if (typeof a === 'boolean' && boolMatches(a, b)) return true;
  if (typeof b === 'boolean' && boolMatches(b, a)) return true;
  return isEqual(a, b);
}

/** A string equal for two values exactly when `isEqual` holds (key order ignored, 0 and -0 alike). */
function canonical(v: unknown): string {
  switch (typeof v) {
    case 'undefined':
      return 'u';
    case 'number':
      return v !== v ? 'NaN' : `n${v === 0 ? 0 : v}`;
    case 'string':
      return `s${JSON.stringify(v)}`;
    case 'boolean':
      return v ? 'T' : 'F';
    case 'bigint':
      return `b${v}`;
    case 'object':
      if (v === null) return 'null';
      if (Array.isArray(v)) return `[${Array.from({ length: v.length }, (_, i) => canonical(v[i])).join(',')}]`;
      if (v instanceof Date) return `d${+v}`;
      return `{${Object.keys(v)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${canonical((v as Json)[k])}`)
        .join(',')}}`;
    default:
      return `?${String(v)}`;
  }
}

/**
 * n8n's `findMatches`: each input 1 item's values (by `field1`) looked up in input 2 (by
 * `field2`); an item missing one of its values matches nothing. Pairs naming the same input 2
 * field count once, with the last pair's input 1 field (n8n keys its lookup by `field2`).
 */
export function findMatches(input1: Item[], input2: Item[], pairs: FieldPair[], options: MatchOptions): Matches {
  const byField2 = new Map<string, unknown>();
  for (const pair of pairs) byField2.set(String(pair.field2), pair.field1);
  const read1 = [...byField2.values()].map((f) => fieldReader(f, options.disableDotNotation));
  const read2 = [...byField2.keys()].map((f) => fieldReader(f, options.disableDotNotation));
  const values2 = input2.map((item) => read2.map((read) => read(item.json)));
  const lookup = options.fuzzyCompare ? fuzzyLookup(values2) : exactLookup(values2);
  const result: Matches = { matched: [], matched2: [], unmatched1: [], unmatched2: [] };
  const matchedIn2 = new Set<number>();
  for (const entry of input1) {
    const values = read1.map((read) => read(entry.json));
    const found = values.includes(undefined) ? [] : lookup(values);
    const indexes = options.multipleMatches === 'all' ? found : found.slice(0, 1);
    if (indexes.length === 0) {
      result.unmatched1.push(entry);
      continue;
    }
    for (const i of indexes) matchedIn2.add(i);
    const matches = indexes.map((i) => input2[i]!);
    if (options.pairEachMatch) for (const match of matches) result.matched.push({ entry, matches: [match] });
    else result.matched.push({ entry, matches });
  }
  input2.forEach((item, i) => (matchedIn2.has(i) ? result.matched2 : result.unmatched2).push(item));
  return result;
}

type Lookup = (values: unknown[]) => number[];

function exactLookup(values2: unknown[][]): Lookup {
  const index = new Map<string, number[]>();
  values2.forEach((values, i) => {
    if (values.includes(undefined)) return; // never equal to a defined value
    const key = canonical(values);
    const list = index.get(key);
    if (list) list.push(i);
    else index.set(key, [i]);
  });
  return (values) => index.get(canonical(values)) ?? [];
}

function fuzzyLookup(values2: unknown[][]): Lookup {
  return (values) => {
    const found: number[] = [];
    values2.forEach((other, i) => {
      if (values.every((v, k) => fuzzyEquals(v, other[k]))) found.push(i);
    });
    return found;
  };
}
