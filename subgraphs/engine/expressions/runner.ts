import { EXPRESSION_ERROR_KEY, PRELUDE_KEY, type PreludeApi } from '../sandbox';

/**
 * What runs in the sandbox for one batch of expressions (engine.ts): all the expressions of a
 * node over all its items, in one fresh context. Like the prelude, the function's source text is
 * what runs (`$0` is the JSON payload): it must only use what it receives.
 *
 * The answer is JSON text: one result per task, `{v}` a value, `{u: 1}` undefined, `{e}` an error
 * message.
 */

export interface RunnerPayload {
  /** Rewritten sources (syntax.ts). */
  exprs: string[];
  /** Per task: expression index, item index, 1 when the value is part of a text (n8n's rule) else 0. */
  tasks: number[];
  items: unknown[];
  /** Each item's binary metadata (no bytes), when an expression reads $binary. */
  binaries?: (Record<string, unknown> | null)[];
  /** The json of the items of the nodes the expressions name. */
  nodes: Record<string, unknown[]>;
  /** Per node, the json of the paired item of each input item (v1 executions), null where none. */
  paired?: Record<string, (unknown | null)[]>;
  execution: unknown;
  workflow: unknown;
  vars: Record<string, string>;
  prevNode: { name: string; outputIndex: number; runIndex: number } | null;
  runIndex: number;
  now: number;
  timezone?: string;
  /** The expressions name dates (engine.ts asked for luxon built ahead): the zone is set at once; else as luxon is built, if ever. */
  dates: boolean;
  /** n8n's semantics: $now a DateTime, texts as n8n joins them, JavaScript errors give undefined. */
  n8n: boolean;
}

function expressionRunner(input: string, keys: { prelude: string; error: string }): string {
  const P: RunnerPayload = JSON.parse(input);
  const X = (globalThis as Record<symbol, PreludeApi | undefined>)[Symbol.for(keys.prelude)];
  const MARK = Symbol.for(keys.error);
  const fail = (message: string): never => {
    const err = new Error(message);
    (err as Error & Record<symbol, boolean>)[MARK] = true;
    throw err;
  };
  const wrap = (list: unknown[]) => list.map((json) => ({ json }));
  const ITEMS = wrap(P.items);
  const NODES: Record<string, { json: unknown }[]> = Object.create(null);
  for (const k of Object.keys(P.nodes)) NODES[k] = wrap(P.nodes[k]!);
  const nodeList = (name: string) => {
    if (!Object.prototype.hasOwnProperty.call(NODES, name)) fail(`No node called "${name}" has run before this one`);
    return NODES[name]!;
  };
  /** The item of `name` that item `i` came from: its paired item in v1 executions, else the one at the same index. */
  const itemOf = (name: string, i: number) => {
    const list = nodeList(name);
    const paired = P.paired?.[name]?.[i];
    if (paired !== undefined && paired !== null) return { json: paired };
    return list[i] ?? list[0] ?? { json: {} };
  };

  let now: unknown = new Date(P.now);
  let today: unknown = new Date(P.now - (P.now % 86_400_000));
  // luxon is built on first use (sandbox/prelude): an evaluation that names no date leaves it unbuilt.
  const zone = X?.setZone(P.timezone, P.dates || X.loaded() ? undefined : 1);
  // Only when used: a DateTime costs more than a Date.
  if (X && zone && P.n8n && P.exprs.some((e) => e.includes('$now') || e.includes('$today'))) {
    const zoned = X.luxon.DateTime.fromMillis(P.now, { zone });
    now = zoned;
    today = zoned.startOf('day');
  }
  const vars = Object.freeze({ ...P.vars });
  const prevNode = P.prevNode ? Object.freeze({ ...P.prevNode }) : undefined;
  const H = X ? X.helpers : {};
  const PARAMS = [
    '$json',
    '$input',
    '$node',
    '$',
    '$itemIndex',
    '$execution',
    '$workflow',
    '$now',
    '$today',
    '$runIndex',
    '$vars',
    '$prevNode',
    '$$ext',
    '$$opt',
    '$binary',
  ];
  const HELPERS = ['$if', '$ifEmpty', '$min', '$max', '$average', '$not', 'min', 'max', 'not', 'average', 'numberList', 'zip'];
  const helperValues = HELPERS.map((h) => H[h]);
  const FNS = P.exprs.map((src) => {
    try {
      return new Function(...PARAMS, ...HELPERS, 'return (' + src + '\n);');
    } catch (err) {
      return err as Error;
    }
  });

  function scope(i: number): unknown[] {
    const item = ITEMS[i];
    const $input = { item: item ?? { json: {} }, all: () => ITEMS, first: () => ITEMS[0], last: () => ITEMS[ITEMS.length - 1] };
    const $node = new Proxy({}, { get: (_, name) => (typeof name === 'string' ? { json: itemOf(name, i).json } : undefined) });
    const $ = (name: string) => ({
      get isExecuted() {
        return Object.prototype.hasOwnProperty.call(NODES, name);
      },
      get item() {
        return itemOf(name, i);
      },
      first: () => nodeList(name)[0],
      last: () => {
        const list = nodeList(name);
        return list[list.length - 1];
      },
      all: () => nodeList(name),
    });
    // n8n's $binary: the item's files, their metadata (the bytes stay out of the sandbox).
    const binary = (P.binaries && P.binaries[i]) || {};
    return [item ? item.json : {}, $input, $node, $, i, P.execution, P.workflow, now, today, P.runIndex, vars, prevNode, X?.extend, X?.opt, binary];
  }

  /** n8n's text of a value inside a text: empty for null, undefined, "" and NaN, else as Array#join writes it. */
  const text = (v: unknown) => (v || v === 0 || v === false ? [v].join('') : '');
  const encode = (v: unknown): string => {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return '{"u":1}';
    const s = JSON.stringify(typeof v === 'bigint' ? String(v) : v);
    return s === undefined ? '{"u":1}' : '{"v":' + s + '}';
  };
  const isExpressionError = (err: unknown) => !!err && typeof err === 'object' && (err as Record<symbol, unknown>)[MARK] === true;

  const out: string[] = [];
  let scopeOf = -1;
  let args: unknown[] = [];
  for (let t = 0; t < P.tasks.length; t += 3) {
    const fn = FNS[P.tasks[t]!]!;
    const i = P.tasks[t + 1]!;
    const inText = P.tasks[t + 2] === 1;
    if (i !== scopeOf) [scopeOf, args] = [i, scope(i).concat(helperValues)];
    let r: string;
    try {
      if (fn instanceof Error) throw fn;
      const v = fn(...args);
      if (inText) r = encode(text(v));
      else if (P.n8n && typeof v === 'function')
        r = fail(v === X?.loaded()?.DateTime ? 'this is a DateTime, please access its methods' : 'this is a function, please add ()');
      else r = encode(v);
    } catch (err) {
      const message = String((err && (err as Error).message) || err);
      if (fn instanceof Error) r = JSON.stringify({ e: P.n8n ? `invalid syntax (${message})` : message });
      // n8n: a JavaScript error inside an expression gives undefined; its own errors fail the node.
      else if (P.n8n && !isExpressionError(err)) r = inText ? '{"v":""}' : '{"u":1}';
      else r = JSON.stringify({ e: message });
    }
    out.push(r);
  }
  return '[' + out.join(',') + ']';
}

/** The sandbox body (`$0`: the JSON payload); parsed at every evaluation, so without its comment lines. */
export const EXPRESSION_RUNNER = `return (${expressionRunner.toString().replace(/^\s*\/\/.*\n/gm, '')})($0, ${JSON.stringify({ prelude: PRELUDE_KEY, error: EXPRESSION_ERROR_KEY })});`;
