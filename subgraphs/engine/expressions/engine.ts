import { PRELUDE_KEY, Sandbox, SandboxError, EXPRESSION_LIMITS, type CodeRunner, type Prelude } from '../sandbox';
import { EXPRESSION_RUNNER, type RunnerPayload } from './runner';
import { compilePath, itemOf, MissingNode, NOT_A_PATH, readPath, STR, type PathScope } from './paths';
import { ExpressionSyntaxError, rewrite, type Rewritten } from './syntax';
import { parseTemplate, type Segment } from './templates';
import type { ExpressionData, Item } from './types';

export { compilePath, type PathAccessor } from './paths';
export { parseTemplate } from './templates';
export type { BinaryData, ExpressionData, ExpressionLineage, Item } from './types';

/**
 * `{{ … }}` in node parameters: n8n's expression language (what it offers: docs/engine.md). Plain paths
 * are read without running code (paths.ts); anything else is rewritten (syntax.ts) and evaluated in the
 * sandbox, batched per node over all its items, with luxon and extensions loaded only when used.
 * A parameter that is exactly one `{{ … }}` keeps the value's type. Under n8n's rule (ResolveOptions.n8n)
 * text joins and errors behave as n8n's (a JavaScript error gives undefined); the platform's own nodes
 * get a Date `$now`, JSON in text, and errors that fail the node.
 */

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

export interface ResolveOptions {
  /** Parameter paths (dotted, `*` for any key or index) whose plain strings are expressions. */
  bareExpressions?: string[];
  /** Parameter paths kept verbatim (code). */
  raw?: string[];
  /**
   * n8n's rule: a string is an expression only when it starts with `=` (the rest is a template,
   * `={{ $json.a }}` keeps the value's type); any other string is text, `{{ }}` included. The
   * expressions then also evaluate as n8n's do (see the top of this file).
   */
  n8n?: boolean;
  /**
   * Under n8n's rule, parameter paths (as `raw`) whose text is a template even without the `=`:
   * the `{{ … }}` in it are resolved, the rest kept (n8n's HTML node resolves its template so).
   */
  templates?: string[];
  signal?: AbortSignal;
}

interface Leaf {
  path: (string | number)[];
  segments: Segment[];
  /** A template path (ResolveOptions.templates): always text, each value written as String() writes it. */
  template?: boolean;
}

interface Task {
  expr: string;
  item: number;
  /** Position of the item in the answer. */
  slot: number;
  /** Where the value goes: [leaf, segment]. */
  leaf: number;
  segment: number;
  /** n8n: the value is part of a text, so the sandbox turns it into n8n's text of it. */
  inText: boolean;
}

/** Names whose use needs the prelude in the evaluation's context (luxon's classes built ahead, n8n's helpers). */
const DATE_NAMES = ['DateTime', 'Duration', 'Interval'];
const HELPER_NAMES = ['$ifEmpty', '$min', '$max', '$average', '$not', 'min', 'max', 'not', 'average', 'numberList', 'zip'];
/** Extensions that use luxon (the others work on Dates without building it). */
const LUXON_EXTENSIONS = new Set([
  'beginningOf',
  'endOfMonth',
  'extract',
  'isBetween',
  'isDst',
  'isInLast',
  'isWeekend',
  'minus',
  'plus',
  'format',
  'toDateTime',
  'diffTo',
  'diffToNow',
]);

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

    const n8n = opts.n8n === true;
    const scope = pathScope(data, n8n);
    // values[item][leaf][segment]
    const values: unknown[][][] = indexes.map(() => leaves.map((l) => new Array(l.segments.length)));
    const tasks: Task[] = [];
    indexes.forEach((itemIndex, n) => {
      leaves.forEach((leaf, l) => {
        const inText = n8n && !isWhole(leaf.segments);
        leaf.segments.forEach((seg, s) => {
          if (!('expr' in seg)) return;
          const v = plainPath(seg.expr, scope, itemIndex, n8n);
          if (v !== NOT_A_PATH) values[n]![l]![s] = v;
          else tasks.push({ expr: seg.expr, item: itemIndex, slot: n, leaf: l, segment: s, inText });
        });
      });
    });
    if (tasks.length) await this.evaluate(tasks, scope, values, n8n, opts.signal);

    return indexes.map((_, n) => build(params, leaves, values[n]!, n8n));
  }

  /** Evaluates one expression (without braces) for one item. */
  async evaluateOne(expr: string, data: ExpressionData, itemIndex = 0, signal?: AbortSignal): Promise<unknown> {
    const [value] = await this.resolve({ v: `{{ ${expr} }}` }, data, { signal }, [itemIndex]);
    return value!.v;
  }

  private async evaluate(tasks: Task[], scope: PathScope, values: unknown[][][], n8n: boolean, signal?: AbortSignal): Promise<void> {
    const { data } = scope;
    const exprs = [...new Set(tasks.map((t) => t.expr))];
    const exprIndex = new Map(exprs.map((e, i) => [e, i]));
    const rewritten = exprs.map((e) => {
      try {
        return rewrite(e);
      } catch (err) {
        if (!(err instanceof ExpressionSyntaxError)) throw err;
        throw new ExpressionError(`${err.message} [in {{ ${e} }}]`, e);
      }
    });
    const nodes = referencedNodes(exprs, data.nodes);
    const payload: RunnerPayload = {
      exprs: rewritten.map((r) => r.code),
      tasks: tasks.flatMap((t) => [exprIndex.get(t.expr)!, t.item, t.inText ? 1 : 0]),
      items: data.items.map((i) => i.json),
      ...(exprs.some((e) => e.includes('$binary')) ? { binaries: data.items.map(binaryMetadata) } : {}),
      nodes,
      paired: data.lineage ? pairedItems(data, Object.keys(nodes), tasks) : undefined,
      execution: scope.execution,
      workflow: scope.workflow,
      vars: data.vars ?? {},
      prevNode: data.prevNode ?? null,
      runIndex: data.lineage?.runIndex ?? 0,
      now: Date.now(),
      timezone: data.workflow.timezone,
      dates: false,
      n8n,
    };
    let out: string;
    try {
      const prelude = preludeFor(rewritten, n8n);
      payload.dates = prelude === 'n8n';
      out = await this.sandbox.run({
        body: EXPRESSION_RUNNER,
        input: JSON.stringify(payload),
        signal,
        prelude,
        warmup: prelude === 'n8n' ? zoneWarmup(payload.timezone) : undefined,
      });
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

/** What paths and the sandbox see as `$execution`, `$workflow`, `$prevNode`: n8n's shapes under its rule. */
function pathScope(data: ExpressionData, n8n: boolean): PathScope {
  const { execution, workflow } = data;
  if (!n8n) return { data, execution, workflow, prevNode: data.prevNode ?? {} };
  return {
    data,
    // n8n tells manual runs (and test webhooks) from production ones. The resume URL is signed
    // (an HMAC) when read: only by a path or a sandbox payload that takes it, not by every expression.
    execution: {
      id: execution.id,
      mode: execution.mode === 'manual' || execution.mode === 'test' ? 'test' : 'production',
      get resumeUrl() {
        return execution.resumeUrl;
      },
    },
    workflow: { id: workflow.id, name: workflow.name, active: workflow.active },
    prevNode: data.prevNode ?? {},
  };
}

/** A plain path's value, or NOT_A_PATH when the expression needs the sandbox. */
function plainPath(expr: string, scope: PathScope, index: number, n8n: boolean): unknown {
  const acc = compilePath(expr);
  if (!acc) return NOT_A_PATH;
  try {
    return readPath(acc, scope, index);
  } catch (err) {
    // n8n: reading through null or undefined gives undefined; a node that has not run fails.
    if (n8n && !(err instanceof MissingNode)) return undefined;
    throw new ExpressionError(`${(err as Error).message} [in {{ ${expr} }}]`, expr);
  }
}

/**
 * The least the expressions need in their context. luxon costs most: it is built ahead (`n8n`, with the
 * workflow's zone set at once) only for expressions that name it; at `extensions` it is built if an
 * expression reaches it some other way, and the zone is set then.
 */
function preludeFor(rewritten: Rewritten[], n8n: boolean): Prelude {
  const dates = (r: Rewritten) =>
    DATE_NAMES.some((n) => r.names.has(n)) ||
    [...r.calls].some((c) => LUXON_EXTENSIONS.has(c)) ||
    (n8n && (r.identifiers.has('$now') || r.identifiers.has('$today')));
  if (rewritten.some(dates)) return 'n8n';
  return rewritten.some((r) => r.extensions || HELPER_NAMES.some((n) => r.identifiers.has(n))) ? 'extensions' : 'bare';
}

/** The next evaluations most likely use this workflow's zone: its formatter is made ahead (sandbox/isolate.ts warmup). */
function zoneWarmup(zone: string | undefined): string | undefined {
  if (!zone || zone === 'UTC' || zone === 'DEFAULT') return undefined;
  return `try { globalThis[Symbol.for(${JSON.stringify(PRELUDE_KEY)})].setZone(${JSON.stringify(zone)}); DateTime.now().toISO(); } catch {}`;
}

/** v1 executions: per referenced node, the json of the paired item of each item the tasks evaluate (null: none). */
function pairedItems(data: ExpressionData, names: string[], tasks: Task[]): Record<string, (unknown | null)[]> {
  const indexes = [...new Set(tasks.map((t) => t.item))];
  // Node names are the user's: no key of Object.prototype is special here (nor in the runner's copy).
  const out: Record<string, (unknown | null)[]> = Object.create(null);
  for (const name of names) {
    const list: (unknown | null)[] = [];
    for (const i of indexes) list[i] = itemOf(data, name, 'item', i)?.json ?? null;
    out[name] = Array.from(list, (v) => v ?? null);
  }
  return out;
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
  const out: Record<string, unknown[]> = Object.create(null);
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
      else if (matches(path, opts.templates)) {
        const segments = parseTemplate(value);
        if (segments) out.push({ path, segments, template: true });
      }
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

const isWhole = (segments: Segment[]) => segments.length === 1 && 'expr' in segments[0]!;

function render(segments: Segment[], values: unknown[], n8n: boolean): unknown {
  if (isWhole(segments)) {
    const v = values[0];
    return v === undefined ? null : v;
  }
  return segments
    .map((seg, i) => {
      if ('text' in seg) return seg.text;
      const v = values[i];
      if (n8n) return n8nText(v);
      if (v === undefined || v === null) return '';
      return typeof v === 'object' ? JSON.stringify(v) : String(v);
    })
    .join('');
}

/** n8n's text of a value inside a text: nothing for null, undefined, "" (and NaN), else as Array#join writes it. */
function n8nText(v: unknown): string {
  if (!(v || v === 0 || v === false)) return '';
  const text = (x: unknown): string => {
    if (Array.isArray(x)) return x.map((e) => (e === null || e === undefined ? '' : text(e))).join(',');
    return x !== null && typeof x === 'object' ? '[object Object]' : String(x);
  };
  return text(v);
}

/** A copy of `params` with each leaf replaced by its rendered value (only the paths to leaves are copied). */
function build<T>(params: T, leaves: Leaf[], values: unknown[][], n8n: boolean): T {
  const mine = new Set<object>();
  let root: unknown = params;
  leaves.forEach((leaf, l) => {
    // n8n replaces each `{{ … }}` of a template by its value as text: "undefined" and "null" included.
    const rendered = leaf.template
      ? leaf.segments.map((seg, i) => ('text' in seg ? seg.text : String(values[l]![i]))).join('')
      : render(leaf.segments, values[l]!, n8n);
    if (leaf.path.length === 0) {
      root = rendered;
      return;
    }
    root = setIn(root, leaf.path, rendered, mine);
  });
  return root as T;
}

/** A parameter object or array under construction, indexed by the leaf paths. */
type Container = Record<string | number, unknown>;

function setIn(root: unknown, path: (string | number)[], value: unknown, mine: Set<object>): Container {
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
function shallow(v: unknown, mine: Set<object>): Container {
  if (mine.has(v as object)) return v as Container;
  const c = Array.isArray(v) ? [...(v as unknown[])] : { ...(v as object) };
  mine.add(c);
  return c as Container;
}

/** An item's files as $binary shows them: their metadata, not their bytes. */
function binaryMetadata(item: Item): Record<string, unknown> | null {
  if (!item.binary) return null;
  const out: Record<string, unknown> = {};
  for (const [key, b] of Object.entries(item.binary)) {
    const { data: _data, ...meta } = b;
    out[key] = meta;
  }
  return out;
}
