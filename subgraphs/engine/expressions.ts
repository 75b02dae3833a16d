import { Sandbox, SandboxError, EXPRESSION_LIMITS, type CodeRunner } from './sandbox';

/**
 * `{{ … }}` in node parameters, over `$json`, `$input`, `$node["Name"].json` (and n8n's
 * `$('Name')`, `$execution`, `$workflow`, `$itemIndex`, `$now`).
 *
 * Plain paths (`$json.customer.email`, `$node["Fetch"].json.items[0]`) are resolved here,
 * without evaluating any code. Anything else goes to the sandbox (sandbox.ts), batched: all the
 * expressions of one node over all its items in one evaluation. A parameter that is exactly one
 * `{{ … }}` keeps the value's type; text around expressions makes a string.
 */

export interface Item {
  json: Record<string, unknown>;
  /** n8n: the input item this one came from (input 0 unless `input`). */
  pairedItem?: { item: number; input?: number };
}

export interface ExpressionData {
  /** The items of the node's main input. */
  items: Item[];
  /** The items each completed node passed on (all its outputs, in order), by node name. */
  nodes: ReadonlyMap<string, Item[]>;
  execution: { id: string; mode: string; resumeUrl: string };
  /** timezone: the workflow's settings.timezone (default UTC). */
  workflow: { id: string; name: string; active: boolean; timezone?: string };
}

export class ExpressionError extends Error {
  constructor(
    message: string,
    readonly expression: string,
    readonly reason: SandboxError['reason'] | 'expression' = 'expression',
  ) {
    super(message);
    this.name = 'ExpressionError';
  }
}

// ---------------------------------------------------------------------------------------------
// Templates

type Segment = { text: string } | { expr: string };

const templates = new Map<string, Segment[] | null>();

/** The segments of a string holding `{{ … }}`, or null when it holds none. */
export function parseTemplate(source: string): Segment[] | null {
  const cached = templates.get(source);
  if (cached !== undefined) return cached;
  const parsed = source.includes('{{') ? splitTemplate(source) : null;
  if (templates.size > 10_000) templates.clear();
  templates.set(source, parsed);
  return parsed;
}

function splitTemplate(s: string): Segment[] | null {
  const out: Segment[] = [];
  let text = '';
  let i = 0;
  while (i < s.length) {
    if (s[i] === '{' && s[i + 1] === '{') {
      const end = findClose(s, i + 2);
      if (end < 0) {
        text += s.slice(i);
        break;
      }
      if (text) out.push({ text });
      text = '';
      out.push({ expr: s.slice(i + 2, end).trim() });
      i = end + 2;
    } else {
      text += s[i];
      i++;
    }
  }
  if (text) out.push({ text });
  return out.some((seg) => 'expr' in seg) ? out : null;
}

/** The index of the `}}` closing an expression, skipping braces inside literals and nested objects. */
function findClose(s: string, from: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0 && s[i + 1] === '}') return i;
      if (depth > 0) depth--;
    }
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// The fast path: plain paths, no code

type Root =
  | { kind: 'json' }
  | { kind: 'input'; pick: 'item' | 'first' | 'last' }
  | { kind: 'node'; name: string; pick: 'item' | 'first' | 'last' }
  | { kind: 'itemIndex' }
  | { kind: 'execution' }
  | { kind: 'workflow' };

export interface PathAccessor {
  root: Root;
  path: (string | number)[];
}

const NOT_A_PATH = Symbol('not a path');
const paths = new Map<string, PathAccessor | null>();
const STR = `(?:"((?:[^"\\\\]|\\\\.)*)"|'((?:[^'\\\\]|\\\\.)*)')`;
const ROOTS: [RegExp, (m: RegExpExecArray) => Root][] = [
  [/^\$json(?=$|[.[])/, () => ({ kind: 'json' })],
  [/^\$input\.item\.json(?=$|[.[])/, () => ({ kind: 'input', pick: 'item' })],
  [/^\$input\.first\(\)\.json(?=$|[.[])/, () => ({ kind: 'input', pick: 'first' })],
  [/^\$input\.last\(\)\.json(?=$|[.[])/, () => ({ kind: 'input', pick: 'last' })],
  [new RegExp(`^\\$node\\[\\s*${STR}\\s*\\]\\.json(?=$|[.[])`), (m) => ({ kind: 'node', name: unquote(m), pick: 'item' })],
  [/^\$node\.([A-Za-z_$][\w$]*)\.json(?=$|[.[])/, (m) => ({ kind: 'node', name: m[1]!, pick: 'item' })],
  [
    new RegExp(`^\\$\\(\\s*${STR}\\s*\\)\\.(item|first\\(\\)|last\\(\\))\\.json(?=$|[.[])`),
    (m) => ({ kind: 'node', name: unquote(m), pick: m[3]!.startsWith('first') ? 'first' : m[3]!.startsWith('last') ? 'last' : 'item' }),
  ],
  [/^\$itemIndex$/, () => ({ kind: 'itemIndex' })],
  [/^\$execution(?=[.[])/, () => ({ kind: 'execution' })],
  [/^\$workflow(?=[.[])/, () => ({ kind: 'workflow' })],
];
const SEGMENTS: [RegExp, (m: RegExpExecArray) => string | number][] = [
  [/^\.([A-Za-z_$][\w$]*)/, (m) => m[1]!],
  [/^\[\s*(\d+)\s*\]/, (m) => Number(m[1])],
  [new RegExp(`^\\[\\s*${STR}\\s*\\]`), (m) => unquote(m)],
];

function unquote(m: RegExpExecArray): string {
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

function pick(list: Item[] | undefined, how: 'item' | 'first' | 'last', index: number): Item | undefined {
  if (!list || list.length === 0) return undefined;
  if (how === 'first') return list[0];
  if (how === 'last') return list[list.length - 1];
  return list[index] ?? list[0];
}

/** Resolves an accessor for one item; NOT_A_PATH when JavaScript semantics need the sandbox. */
function readPath(acc: PathAccessor, data: ExpressionData, index: number): unknown {
  let value: unknown;
  switch (acc.root.kind) {
    case 'json':
      value = data.items[index]?.json ?? {};
      break;
    case 'input':
      value = pick(data.items, acc.root.pick, index)?.json ?? {};
      break;
    case 'node': {
      const list = data.nodes.get(acc.root.name);
      if (!list) throw new ExpressionError(`No node called "${acc.root.name}" has run before this one`, acc.root.name);
      value = pick(list, acc.root.pick, index)?.json ?? {};
      break;
    }
    case 'itemIndex':
      return index;
    case 'execution':
      value = data.execution;
      break;
    case 'workflow':
      value = data.workflow;
      break;
  }
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

// ---------------------------------------------------------------------------------------------
// The engine

export interface ResolveOptions {
  /** Parameter paths (dotted, `*` for any key or index) whose plain strings are expressions. */
  bareExpressions?: string[];
  /** Parameter paths kept verbatim (code). */
  raw?: string[];
  /**
   * n8n's rule: a string is an expression only when it starts with `=` (the rest is a template,
   * `={{ $json.a }}` keeps the value's type); any other string is text, `{{ }}` included.
   */
  n8n?: boolean;
  signal?: AbortSignal;
}

interface Leaf {
  path: (string | number)[];
  segments: Segment[];
}

interface Task {
  expr: string;
  item: number;
  /** Position of the item in the answer. */
  slot: number;
  /** Where the value goes: [leaf, segment]. */
  leaf: number;
  segment: number;
}

export class ExpressionEngine {
  readonly sandbox: CodeRunner;

  constructor(sandbox?: CodeRunner) {
    this.sandbox = sandbox ?? new Sandbox({ ...EXPRESSION_LIMITS, poolSize: 4 });
  }

  /**
   * The parameters resolved for each of `itemIndexes` (default: every input item, or one
   * evaluation at index 0 when there are none). Parameters without expressions are returned
   * as they are (the same object for every item: treat it as read-only).
   */
  async resolve<T>(params: T, data: ExpressionData, opts: ResolveOptions = {}, itemIndexes?: number[]): Promise<T[]> {
    const indexes = itemIndexes ?? (data.items.length ? data.items.map((_, i) => i) : [0]);
    const leaves: Leaf[] = [];
    collect(params, [], leaves, opts);
    if (leaves.length === 0) return indexes.map(() => params);

    // values[item][leaf][segment]
    const values: unknown[][][] = indexes.map(() => leaves.map((l) => new Array(l.segments.length)));
    const tasks: Task[] = [];
    indexes.forEach((itemIndex, n) => {
      leaves.forEach((leaf, l) => {
        leaf.segments.forEach((seg, s) => {
          if (!('expr' in seg)) return;
          const acc = compilePath(seg.expr);
          if (acc) {
            let v: unknown;
            try {
              v = readPath(acc, data, itemIndex);
            } catch (err) {
              throw new ExpressionError(`${(err as Error).message} [in {{ ${seg.expr} }}]`, seg.expr);
            }
            if (v !== NOT_A_PATH) {
              values[n]![l]![s] = v;
              return;
            }
          }
          tasks.push({ expr: seg.expr, item: itemIndex, slot: n, leaf: l, segment: s });
        });
      });
    });
    if (tasks.length) await this.evaluate(tasks, data, values, opts.signal);

    return indexes.map((_, n) => build(params, leaves, values[n]!));
  }

  /** Evaluates one expression (without braces) for one item. */
  async evaluateOne(expr: string, data: ExpressionData, itemIndex = 0, signal?: AbortSignal): Promise<unknown> {
    const [value] = await this.resolve({ v: `{{ ${expr} }}` }, data, { signal }, [itemIndex]);
    return value!.v;
  }

  private async evaluate(tasks: Task[], data: ExpressionData, values: unknown[][][], signal?: AbortSignal): Promise<void> {
    const exprs = [...new Set(tasks.map((t) => t.expr))];
    const exprIndex = new Map(exprs.map((e, i) => [e, i]));
    const payload = {
      exprs,
      tasks: tasks.flatMap((t) => [exprIndex.get(t.expr)!, t.item]),
      items: data.items.map((i) => i.json),
      nodes: referencedNodes(exprs, data.nodes),
      execution: data.execution,
      workflow: data.workflow,
      now: Date.now(),
    };
    let out: string;
    try {
      out = await this.sandbox.run({ body: EXPRESSION_RUNNER, input: JSON.stringify(payload), signal });
    } catch (err) {
      const e = err as SandboxError;
      const reason = e instanceof SandboxError ? e.reason : 'script';
      throw new ExpressionError(`Expression evaluation failed: ${e.message} [in {{ ${exprs[0]} }}]`, exprs[0]!, reason);
    }
    const results = JSON.parse(out) as ({ v: unknown } | { u: 1 } | { e: string })[];
    tasks.forEach((t, i) => {
      const r = results[i]!;
      if ('e' in r) throw new ExpressionError(`${r.e} [in {{ ${t.expr} }}]`, t.expr);
      values[t.slot]![t.leaf]![t.segment] = 'u' in r ? undefined : r.v;
    });
  }
}

function referencedNodes(exprs: string[], nodes: ReadonlyMap<string, Item[]>): Record<string, unknown[]> {
  const names = new Set<string>();
  let dynamic = false;
  const named = new RegExp(`\\$node\\[\\s*${STR}\\s*\\]|\\$\\(\\s*${STR}\\s*\\)|\\$node\\.([A-Za-z_$][\\w$]*)`, 'g');
  for (const e of exprs) {
    if (!e.includes('$node') && !e.includes('$(')) continue;
    let seen = 0;
    for (const m of e.matchAll(named)) {
      seen++;
      names.add((m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5] ?? '').replace(/\\(.)/g, '$1'));
    }
    const mentions = (e.match(/\$node\b|\$\(/g) ?? []).length;
    if (mentions > seen) dynamic = true;
  }
  const out: Record<string, unknown[]> = {};
  for (const [name, list] of nodes) {
    if (dynamic || names.has(name)) out[name] = list.map((i) => i.json);
  }
  return out;
}

function matches(path: (string | number)[], patterns: string[] | undefined): boolean {
  if (!patterns?.length) return false;
  const p = path.map(String);
  return patterns.some((pattern) => {
    const parts = pattern.split('.');
    return parts.length === p.length && parts.every((part, i) => part === '*' || part === p[i]);
  });
}

function collect(value: unknown, path: (string | number)[], out: Leaf[], opts: ResolveOptions): void {
  if (matches(path, opts.raw)) return;
  if (typeof value === 'string') {
    if (opts.n8n) {
      if (value.startsWith('=')) out.push({ path, segments: parseTemplate(value.slice(1)) ?? [{ text: value.slice(1) }] });
      return;
    }
    let segments = parseTemplate(value);
    if (!segments && value.trim() !== '' && matches(path, opts.bareExpressions)) segments = [{ expr: value.trim() }];
    if (segments) out.push({ path, segments });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => collect(v, [...path, i], out, opts));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) collect(v, [...path, k], out, opts);
  }
}

function render(segments: Segment[], values: unknown[]): unknown {
  if (segments.length === 1 && 'expr' in segments[0]!) {
    const v = values[0];
    return v === undefined ? null : v;
  }
  return segments
    .map((seg, i) => {
      if ('text' in seg) return seg.text;
      const v = values[i];
      if (v === undefined || v === null) return '';
      return typeof v === 'object' ? JSON.stringify(v) : String(v);
    })
    .join('');
}

/** A copy of `params` with each leaf replaced by its rendered value (only the paths to leaves are copied). */
function build<T>(params: T, leaves: Leaf[], values: unknown[][]): T {
  const mine = new Set<object>();
  let root: any = params;
  leaves.forEach((leaf, l) => {
    const rendered = render(leaf.segments, values[l]!);
    if (leaf.path.length === 0) {
      root = rendered;
      return;
    }
    root = setIn(root, leaf.path, rendered, mine);
  });
  return root as T;
}

function setIn(root: any, path: (string | number)[], value: unknown, mine: Set<object>): any {
  const top = shallow(root, mine);
  let cur = top;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    const next = shallow(cur[key], mine);
    cur[key] = next;
    cur = next;
  }
  cur[path[path.length - 1]!] = value;
  return top;
}

/** A shallow copy made once per build: the caller's parameters are never modified. */
function shallow(v: any, mine: Set<object>): any {
  if (mine.has(v)) return v;
  const c = Array.isArray(v) ? [...v] : { ...v };
  mine.add(c);
  return c;
}

/**
 * Runs inside the sandbox. `$0` is the JSON payload; the answer is JSON text: one result per
 * task, `{v}` a value, `{u: 1}` undefined, `{e}` an error message.
 */
const EXPRESSION_RUNNER = `
const P = JSON.parse($0);
const wrap = (list) => list.map((json) => ({ json }));
const ITEMS = wrap(P.items);
const NODES = {};
for (const k of Object.keys(P.nodes)) NODES[k] = wrap(P.nodes[k]);
const pick = (list, how, i) => list.length ? (how === 'first' ? list[0] : how === 'last' ? list[list.length - 1] : (list[i] || list[0])) : { json: {} };
const nodeList = (name) => {
  if (!Object.prototype.hasOwnProperty.call(NODES, name)) throw new Error('No node called "' + name + '" has run before this one');
  return NODES[name];
};
const now = new Date(P.now);
const today = new Date(P.now); today.setUTCHours(0, 0, 0, 0);
const FNS = P.exprs.map((src) => {
  try {
    return new Function('$json', '$input', '$node', '$', '$itemIndex', '$execution', '$workflow', '$now', '$today', '$runIndex', 'return (' + src + '\\n);');
  } catch (err) {
    return err;
  }
});
const out = [];
for (let t = 0; t < P.tasks.length; t += 2) {
  const fn = FNS[P.tasks[t]];
  const i = P.tasks[t + 1];
  let r;
  try {
    if (fn instanceof Error) throw fn;
    const input = { item: ITEMS[i] || { json: {} }, all: () => ITEMS, first: () => ITEMS[0], last: () => ITEMS[ITEMS.length - 1] };
    const $node = new Proxy({}, { get: (_, name) => typeof name === 'string' ? { json: pick(nodeList(name), 'item', i).json } : undefined });
    const $ = (name) => { const list = nodeList(name); return { item: pick(list, 'item', i), first: () => list[0], last: () => list[list.length - 1], all: () => list }; };
    const json = ITEMS[i] ? ITEMS[i].json : {};
    const v = fn(json, input, $node, $, i, P.execution, P.workflow, now, today, 0);
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') r = '{"u":1}';
    else {
      const s = JSON.stringify(typeof v === 'bigint' ? String(v) : v);
      r = s === undefined ? '{"u":1}' : '{"v":' + s + '}';
    }
  } catch (err) {
    r = JSON.stringify({ e: String(err && err.message || err) });
  }
  out.push(r);
}
return '[' + out.join(',') + ']';
`;
