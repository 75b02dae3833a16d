import type { ExpressionData, Item } from './types';

/**
 * The fast path of engine.ts: plain paths (`$json.customer.email`,
 * `$node["Fetch"].json.items[0]`, `$('Set').item.json.x`, `$execution.id`) are read here, without
 * evaluating any code. A path whose JavaScript meaning needs the sandbox (a string's method, an
 * inherited property) gives NOT_A_PATH.
 */

type Pick = 'item' | 'first' | 'last';
type Root =
  | { kind: 'json' }
  | { kind: 'input'; pick: Pick }
  | { kind: 'node'; name: string; pick: Pick }
  | { kind: 'itemIndex' | 'runIndex' | 'execution' | 'workflow' | 'vars' | 'prevNode' };

export interface PathAccessor {
  root: Root;
  path: (string | number)[];
}

/** What the paths read besides the items: the views of engine.ts (n8n's or the platform's). */
export interface PathScope {
  data: ExpressionData;
  execution: unknown;
  workflow: unknown;
  prevNode: unknown;
}

export const NOT_A_PATH = Symbol('not a path');

/** A node's items are needed but the node has not run: the expression fails (n8n's ExpressionError too). */
export class MissingNode extends Error {
  constructor(readonly node: string) {
    super(`No node called "${node}" has run before this one`);
  }
}

const paths = new Map<string, PathAccessor | null>();
export const STR = `(?:"((?:[^"\\\\]|\\\\.)*)"|'((?:[^'\\\\]|\\\\.)*)')`;
const pickOf = (s: string): Pick => (s.startsWith('first') ? 'first' : s.startsWith('last') ? 'last' : 'item');
const ROOTS: [RegExp, (m: RegExpExecArray) => Root][] = [
  [/^\$json(?=$|[.[])/, () => ({ kind: 'json' })],
  [/^\$input\.(item|first\(\)|last\(\))\.json(?=$|[.[])/, (m) => ({ kind: 'input', pick: pickOf(m[1]!) })],
  [new RegExp(`^\\$node\\[\\s*${STR}\\s*\\]\\.json(?=$|[.[])`), (m) => ({ kind: 'node', name: unquote(m), pick: 'item' })],
  [/^\$node\.([A-Za-z_$][\w$]*)\.json(?=$|[.[])/, (m) => ({ kind: 'node', name: m[1]!, pick: 'item' })],
  [new RegExp(`^\\$\\(\\s*${STR}\\s*\\)\\.(item|first\\(\\)|last\\(\\))\\.json(?=$|[.[])`), (m) => ({ kind: 'node', name: unquote(m), pick: pickOf(m[3]!) })],
  [/^\$itemIndex$/, () => ({ kind: 'itemIndex' })],
  [/^\$runIndex$/, () => ({ kind: 'runIndex' })],
  [/^\$execution(?=[.[])/, () => ({ kind: 'execution' })],
  [/^\$workflow(?=[.[])/, () => ({ kind: 'workflow' })],
  [/^\$vars(?=[.[])/, () => ({ kind: 'vars' })],
  [/^\$prevNode(?=[.[])/, () => ({ kind: 'prevNode' })],
];
const SEGMENTS: [RegExp, (m: RegExpExecArray) => string | number][] = [
  [/^\.([A-Za-z_$][\w$]*)/, (m) => m[1]!],
  [/^\[\s*(\d+)\s*\]/, (m) => Number(m[1])],
  [new RegExp(`^\\[\\s*${STR}\\s*\\]`), (m) => unquote(m)],
];

export function unquote(m: RegExpExecArray): string {
  const raw = m[1] ?? m[2] ?? '';
  return raw.replace(/\\(.)/g, '$1');
}

/** A plain path expression as an accessor, or null when it needs the sandbox. */
export function compilePath(source: string): PathAccessor | null {
  const cached = paths.get(source);
  if (cached !== undefined) return cached;
  const accessor = parsePath(source.trim());
  if (paths.size > 10_000) paths.clear();
  paths.set(source, accessor);
  return accessor;
}

function parsePath(s: string): PathAccessor | null {
  for (const [re, make] of ROOTS) {
    const m = re.exec(s);
    if (!m) continue;
    const root = make(m);
    const path: (string | number)[] = [];
    let rest = s.slice(m[0].length);
    while (rest.length) {
      let matched = false;
      for (const [sre, seg] of SEGMENTS) {
        const sm = sre.exec(rest);
        if (sm) {
          path.push(seg(sm));
          rest = rest.slice(sm[0].length);
          matched = true;
          break;
        }
      }
      if (!matched) return null;
    }
    return { root, path };
  }
  return null;
}

function pick(list: Item[], how: Pick, index: number): Item | undefined {
  if (how === 'first') return list[0];
  if (how === 'last') return list[list.length - 1];
  return list[index] ?? list[0];
}

/** The item of `name` that input item `index` came from: its paired item in v1 executions, else the one at the same index. */
export function itemOf(data: ExpressionData, name: string, how: Pick, index: number): Item | undefined {
  const list = data.nodes.get(name);
  if (!list) throw new MissingNode(name);
  if (how === 'item' && data.lineage) return data.lineage.pairedItem(name, index) ?? pick(list, how, index);
  return pick(list, how, index);
}

function rootValue(root: Root, scope: PathScope, index: number): unknown {
  const { data } = scope;
  switch (root.kind) {
    case 'json':
      return data.items[index]?.json ?? {};
    case 'input':
      return (data.items.length ? pick(data.items, root.pick, index)?.json : undefined) ?? {};
    case 'node':
      return itemOf(data, root.name, root.pick, index)?.json ?? {};
    case 'itemIndex':
      return index;
    case 'runIndex':
      return data.lineage?.runIndex ?? 0;
    case 'vars':
      return data.vars ?? {};
    default:
      return scope[root.kind];
  }
}

/** Resolves an accessor for one item; NOT_A_PATH when JavaScript semantics need the sandbox. */
export function readPath(acc: PathAccessor, scope: PathScope, index: number): unknown {
  let value = rootValue(acc.root, scope, index);
  for (const key of acc.path) {
    if (value === null || value === undefined) {
      throw new TypeError(`Cannot read properties of ${value === null ? 'null' : 'undefined'} (reading '${String(key)}')`);
    }
    if (typeof value === 'string') {
      if (key === 'length') value = value.length;
      else if (typeof key === 'number') value = value[key];
      else return NOT_A_PATH;
      continue;
    }
    if (typeof value !== 'object') return NOT_A_PATH;
    if (Array.isArray(value) && key === 'length') {
      value = value.length;
      continue;
    }
    const k = String(key);
    if (Object.prototype.hasOwnProperty.call(value, k)) value = (value as Record<string, unknown>)[k];
    else if (k in Object.prototype || (Array.isArray(value) && k in Array.prototype)) return NOT_A_PATH;
    else value = undefined;
  }
  return value;
}
