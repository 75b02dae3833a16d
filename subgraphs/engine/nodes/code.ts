import { SandboxError } from '../sandbox';
import { NodeError, isOneOf, isPlainObject, toItems, type Item, type NodeDefinition } from './types';

/**
 * The code node: JavaScript in the sandbox (sandbox/isolate.ts). It gets `items` (the input items,
 * `{json}` each), `$input` (`all()`, `first()`, `last()`, `item`), `$json`, `$node`, `$()`,
 * `$execution`, `$workflow`, `$now`, and a `console` whose lines go to the execution's logs;
 * it returns items or plain objects, possibly through a promise. `mode: runOnceForEachItem`
 * runs the code once per item (`$json`/`item` are that item's json) and takes one object back.
 */

const MODES = ['runOnceForAllItems', 'runOnceForEachItem'];
const MAX_LOG_LINES = 100;

export const code: NodeDefinition = {
  name: 'code',
  description:
    'Runs `code` (JavaScript) in the sandbox with `items`; returns items or plain objects. `mode`: runOnceForAllItems (default) or runOnceForEachItem.',
  missing: (p) => (typeof p.code === 'string' && p.code.trim() ? [] : ['code']),
  invalid: (p) => (p.mode !== undefined && !isOneOf(MODES, p.mode) ? { parameter: 'mode', message: `must be one of ${MODES.join(', ')}` } : undefined),
  raw: ['code'],
  async execute(ctx) {
    const [p] = await ctx.parameters([0]);
    const each = p!.mode === 'runOnceForEachItem';
    const data = ctx.expressionData;
    const nodes: Record<string, unknown[]> = Object.create(null);
    // Only the nodes the code names are copied in (all of them when it reaches $node dynamically).
    const source = String(p!.code);
    const dynamic = /\$node\s*\[\s*[^'"\s]|\$\(\s*[^'"\s]/.test(source);
    for (const [name, list] of data.nodes) {
      if (dynamic || source.includes(name)) nodes[name] = list.map((i) => i.json);
    }
    const payload = {
      code: source,
      each,
      items: ctx.items.map((i) => i.json),
      nodes,
      execution: data.execution,
      workflow: data.workflow,
      now: Date.now(),
    };
    const timeoutMs = typeof ctx.node.timeout === 'number' ? ctx.node.timeout * 1000 : undefined;
    let raw: string;
    try {
      // Our code node's $now is a Date: no luxon, no extensions.
      raw = await ctx.services.codeSandbox.run({ body: CODE_RUNNER, input: JSON.stringify(payload), timeoutMs, signal: ctx.signal, prelude: 'bare' });
    } catch (err) {
      if (err instanceof SandboxError) {
        throw new NodeError(codeErrorMessage(err, ctx.services.codeSandbox.memoryMb), { reason: err.reason });
      }
      throw err;
    }
    const answer = JSON.parse(raw) as { result?: unknown; results?: unknown[]; logs: string[]; error?: string };
    for (const line of answer.logs) ctx.log(`console: ${line}`);
    if (answer.error !== undefined) throw new NodeError(`Code failed: ${answer.error}`, { reason: 'script' });
    const returned = each ? answer.results : answer.result;
    if (Array.isArray(returned)) ctx.checkOutput(returned.length);
    let out: Item[];
    if (each) {
      out = (answer.results ?? []).flatMap((r, i) => {
        if (r === null || r === undefined) return [];
        if (!isPlainObject(r)) throw new NodeError(`Code must return an object for each item; item ${i} returned ${typeof r}`);
        return toItems([r], 'Code results');
      });
    } else {
      if (answer.result === undefined) throw new NodeError('Code must return items or plain objects (it returned nothing)');
      out = toItems(answer.result, 'Code results');
    }
    return { outputs: [out] };
  },
};

function codeErrorMessage(err: SandboxError, memoryMb: number): string {
  switch (err.reason) {
    case 'timeout':
      return `Code ran past its time limit: ${err.message}`;
    case 'memory':
      return `Code exceeded the memory limit of ${memoryMb} MB`;
    case 'aborted':
      return 'Code was stopped: the execution was canceled or timed out';
    case 'crashed':
      return `Code crashed its sandbox process (the memory limit is ${memoryMb} MB): ${err.message}`;
    default:
      return `Code failed: ${err.message}`;
  }
}

/** Runs inside the sandbox: `$0` is the JSON payload, the answer is JSON text. */
const CODE_RUNNER = `
const P = JSON.parse($0);
const logs = [];
const show = (v) => { if (typeof v === 'string') return v; try { return JSON.stringify(v); } catch (e) { return String(v); } };
const line = (...args) => { if (logs.length < ${MAX_LOG_LINES}) logs.push(args.map(show).join(' ').slice(0, 2000)); };
const console = { log: line, info: line, warn: line, error: line, debug: line };
const wrap = (list) => list.map((json) => ({ json }));
const items = wrap(P.items);
const NODES = Object.create(null);
for (const k of Object.keys(P.nodes)) NODES[k] = wrap(P.nodes[k]);
const nodeList = (name) => {
  if (!Object.prototype.hasOwnProperty.call(NODES, name)) throw new Error('No node called "' + name + '" has run before this one');
  return NODES[name];
};
const $node = new Proxy({}, { get: (_, name) => typeof name === 'string' ? { json: (nodeList(name)[0] || { json: {} }).json } : undefined });
const $ = (name) => { const list = nodeList(name); return { item: list[0], first: () => list[0], last: () => list[list.length - 1], all: () => list }; };
const now = new Date(P.now);
const today = new Date(P.now); today.setUTCHours(0, 0, 0, 0);
let fn;
try {
  fn = new Function('items', '$input', '$json', 'item', '$itemIndex', '$node', '$', '$execution', '$workflow', '$now', '$today', 'console',
    'return (async () => {\\n' + P.code + '\\n})();');
} catch (err) {
  return JSON.stringify({ logs, error: 'SyntaxError: ' + err.message });
}
const input = (i) => ({ item: items[i], all: () => items, first: () => items[0], last: () => items[items.length - 1] });
const call = (i) => {
  const json = items[i] ? items[i].json : {};
  return fn(items, input(i), json, json, i, $node, $, P.execution, P.workflow, now, today, console);
};
const finish = (body) => {
  try {
    return JSON.stringify(Object.assign({ logs }, body));
  } catch (err) {
    return JSON.stringify({ logs, error: 'the result is not JSON serialisable (' + err.message + ')' });
  }
};
const fail = (err) => JSON.stringify({ logs, error: String(err && err.stack ? String(err.stack).split('\\n')[0] : err) });
if (P.each) {
  return (async () => {
    const results = [];
    for (let i = 0; i < items.length; i++) { const r = await call(i); results.push(r === undefined ? null : r); }
    return results;
  })().then((results) => finish({ results }), fail);
}
return call(0).then((result) => finish({ result }), fail);
`;
