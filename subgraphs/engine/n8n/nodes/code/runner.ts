import { virtualTimers } from './runner.timers';

/**
 * What runs inside the sandbox for the Code node: written as a function to be type-checked, run
 * from its source text (CODE_RUNNER), so it must use nothing outside itself. It hands back raw
 * results and code.ts validates them as n8n does after its runner serialised them. The code is
 * wrapped as n8n wraps it (`async function VmCodeWrapper() {<code>\n}` from line 1), so `[line N]`
 * in an error means the same line as in n8n.
 */

type Json = Record<string, unknown>;
/** An item as n8n's code sees it. */
export interface CodeItem {
  json: Json;
  /** The item's files, their metadata only: `id` names the file for code.ts when the code hands it back. */
  binary?: Record<string, Json>;
  pairedItem?: unknown;
}

/** The payload code.ts sends in. */
export interface CodePayload {
  code: string;
  each: boolean;
  /** Each item: a failing item becomes an `{error}` item and the others go on (n8n's continueOnFail). */
  continueOnFail: boolean;
  items: CodeItem[];
  /** The bytes (base64) of the input items' files by their `id`, when the code reads them (helpers.getBinaryDataBuffer). */
  buffers?: Record<string, string>;
  /** The items of the nodes the code refers to, by name. */
  nodes: Record<string, CodeItem[]>;
  /** `$('Node').item` for each input item, by node, when the executor follows paired items. */
  paired?: Record<string, (CodeItem | null)[]>;
  /** The context of the nodes the code refers to (`$('Node').context`), when the executor keeps them. */
  contexts?: Record<string, Json>;
  /** Which node run fed input 0 ($prevNode), when the executor says. */
  source?: { name: string; outputIndex: number; runIndex: number };
  runIndex: number;
  node: { id?: string; typeVersion: number; parameters: Record<string, unknown> };
  execution: { id: string; mode: string; resumeUrl: string };
  /** n8n's WorkflowExecuteMode ($mode). */
  mode: string;
  workflow: { active: boolean; id: string; name: string };
  /** n8n's variables ($vars, frozen in the sandbox). */
  vars: Record<string, string>;
  /** The workflow's static data, when the code asks for it: handed back in the answer. */
  staticData?: { global: Record<string, unknown>; node: Record<string, unknown> };
  timezone: string;
  now: number;
}

/** An error as code.ts needs it to write n8n's message. */
export interface RunnerError {
  /** compile: the code does not parse; host: one of n8n's own errors (message as is); user: thrown by the code (message from its stack); serialize: the result is not JSON. */
  kind: 'compile' | 'host' | 'user' | 'serialize';
  message?: string;
  stack?: string;
}

export interface CodeAnswer {
  logs: ['info' | 'warn' | 'error' | 'debug', string][];
  /** The static data as the code left it (when the payload carried it). */
  staticData?: { global: Record<string, unknown>; node: Record<string, unknown> };
  error?: RunnerError;
  /** All items: what the code returned (absent: undefined). */
  result?: unknown;
  /** Each item: one entry per input item that returned something or failed (continueOnFail). */
  results?: EachResult[];
}

/** Whatever was thrown, read as an error may be (a primitive or null reads as no message). */
type ErrorLike = { message?: unknown; stack?: unknown } | null | undefined;

/** `index`: the input item; `binary` as the code returned it (checked by code.ts). */
export type EachResult = { index: number; json?: unknown; binary?: unknown } | { index: number; error: RunnerError };

// Not exported: the runner refers to these by name, and CODE_RUNNER defines them in the sandbox
// (TypeScript would rewrite a reference to an exported constant or an import as `exports.…`).
const LOG_LIMIT = 100;
const SOURCE = 'n8n-code';
declare const VIRTUAL_TIMERS: typeof virtualTimers;
/** The stack's name for the code: stack lines `(CODE_SOURCE:line:column)` are the code's own. */
export const CODE_SOURCE = SOURCE;

/** The isolate's global object as the runner uses it: luxon's DateTime when the sandbox prelude put it there (a getter until luxon is built). */
interface SandboxGlobal {
  Atomics: { waitAsync?: unknown };
  DateTime?: { fromMillis?: (ms: number, opts: { zone: string }) => { startOf(unit: string): unknown } };
  [name: string]: unknown;
}

function codeRunner(payload: string): Promise<string> {
  const P = JSON.parse(payload) as CodePayload;
  const G = globalThis as unknown as SandboxGlobal;
  // Taken before the code runs: it may replace any global.
  const stringify = JSON.stringify;
  const assign = Object.assign;
  // Atomics.waitAsync with a time limit aborts the whole process under isolated-vm 5: the code never gets it.
  delete G.Atomics.waitAsync;
  const logs: [string, string][] = [];

  // n8n's own failures (its data proxy, its require) keep their message; thrown by the code, the message comes from the stack.
  const HOST = new WeakSet<object>();
  const host = (message: string, Kind: ErrorConstructor = Error) => {
    const err = new Kind(message);
    HOST.add(err);
    return err;
  };

  // ----- console: lines go to the execution's log
  const show = (v: unknown): string => {
    if (typeof v === 'string') return v;
    if (v === G) return '[[ExecutionContext]]';
    const seen = new WeakSet();
    try {
      const s = stringify(v, (_k, x) => {
        if (typeof x === 'object' && x !== null) {
          if (seen.has(x)) return '[Circular Reference]';
          seen.add(x);
        }
        return typeof x === 'bigint' ? String(x) : x;
      });
      return s === undefined ? String(v) : s;
    } catch {
      return String(v);
    }
  };
  const logAt =
    (level: string) =>
    (...args: unknown[]) => {
      if (logs.length < LOG_LIMIT) logs.push([level, args.map(show).join(' ').slice(0, 2000)]);
    };
  const noop = () => undefined;
  const console: Record<string, (...args: unknown[]) => void> = {
    log: logAt('info'),
    info: logAt('info'),
    warn: logAt('warn'),
    error: logAt('error'),
    debug: logAt('debug'),
  };
  for (const m of [
    'trace',
    'dir',
    'dirxml',
    'table',
    'time',
    'timeEnd',
    'timeLog',
    'assert',
    'clear',
    'count',
    'countReset',
    'group',
    'groupCollapsed',
    'groupEnd',
  ])
    console[m] = noop;

  // ----- timers, in virtual time (runner.timers.ts)
  const { globals: timerGlobals, settle } = VIRTUAL_TIMERS(host);

  // ----- n8n's variables
  const has = (o: object | undefined, k: string) => o !== undefined && Object.prototype.hasOwnProperty.call(o, k);
  const items = P.items;
  const nodeList = (name: string): CodeItem[] | undefined => (has(P.nodes, name) ? P.nodes[name] : undefined);
  const executed = (name: string) => {
    const list = nodeList(name);
    if (!list) throw host(`Node '${name}' hasn't been executed`);
    return list;
  };
  // Outputs are not kept apart and a node runs once per execution here: only the first branch and run exist.
  const onlyFirst = (name: string, branch: unknown, run: unknown) => {
    if (branch !== undefined && branch !== 0)
      throw host(`Branch ${branch} of node '${name}' is not available here: a node's outputs are read together (only branch 0)`);
    if (run !== undefined && run !== -1 && !(run === 0 && P.runIndex === 0))
      throw host(`Run ${run} of node "${name}" is not available here: only its last run is`);
  };
  const notHere = (what: string) => () => {
    throw host(`${what} is not available here`);
  };
  /** The item of `name` that input item `index` came from: the executor's answer, else the item at the same index. */
  const itemOf = (name: string, index: number, how: string) => {
    const list = executed(name);
    const paired = has(P.paired, name) ? P.paired![name]![index] : list[index];
    if (!paired) throw host(`Can't get data for ${how}: no item of '${name}' is paired with input item ${index}`);
    return paired;
  };
  const contextOf = (name: string | undefined, what: string) => {
    if (name !== undefined && has(P.contexts, name)) return P.contexts![name];
    throw host(`${what} is not available here: node contexts are kept in n8n's execution order v1 only`);
  };
  const dollar = (index: number) => (name: string) => {
    if (!name) throw host('When calling $(), please specify a node');
    const node = {
      get isExecuted() {
        return nodeList(name) !== undefined;
      },
      get item() {
        return itemOf(name, index, `$('${name}').item`);
      },
      pairedItem: (i?: number) => itemOf(name, i ?? index, `$('${name}').pairedItem()`),
      itemMatching: (i?: number) => {
        if (i === undefined) throw host('Missing item index for .itemMatching()');
        return itemOf(name, i, `$('${name}').itemMatching(${i})`);
      },
      first: (branch?: number, run?: number) => (onlyFirst(name, branch, run), executed(name)[0]),
      last: (branch?: number, run?: number) => {
        onlyFirst(name, branch, run);
        const list = executed(name);
        return list[list.length - 1];
      },
      all: (branch?: number, run?: number) => (onlyFirst(name, branch, run), executed(name)),
    };
    Object.defineProperty(node, 'params', { get: notHere(`$('${name}').params (another node's parameters)`) });
    Object.defineProperty(node, 'context', { get: () => contextOf(name, `$('${name}').context`) });
    return node;
  };
  const nodeData = (name: string, index: number) => ({
    get json() {
      const list = executed(name);
      if (list.length <= index) throw host(`"${name}" node has ${list.length} item(s) but you're trying to access item ${index}`);
      return list[index].json;
    },
    get data() {
      return this.json;
    },
    get binary() {
      const list = executed(name);
      return list[index]?.binary ?? {};
    },
    get runIndex() {
      return nodeList(name) ? 0 : -1;
    },
    get context() {
      return contextOf(name, `$node["${name}"].context`);
    },
  });
  const $node = (index: number) => new Proxy({}, { has: () => true, get: (_t, name) => (typeof name === 'string' ? nodeData(name, index) : undefined) });
  const input = (index: number) => {
    const need = () => {
      if (items.length === 0) throw host('No execution data available');
    };
    const only = (what: string, args: unknown[]) => {
      need();
      if (args.length) throw host(`$input.${what}() should have no arguments`);
    };
    const $input = {
      get item() {
        need();
        return items[index];
      },
      all: () => (need(), items),
      first: (...args: unknown[]) => (only('first', args), items[0]),
      last: (...args: unknown[]) => (only('last', args), items[items.length - 1]),
    };
    Object.defineProperty($input, 'params', { get: notHere("$input.params (the previous node's parameters)") });
    Object.defineProperty($input, 'context', { get: () => contextOf(P.source?.name, '$input.context') });
    return $input;
  };
  const unknownSource = () => {
    throw host("$prevNode is not available here: the node that fed this one is known in n8n's execution order v1 only");
  };
  const $env = new Proxy(
    {},
    {
      has: () => true,
      get: () => {
        throw host('access to env vars denied');
      },
    },
  );
  // ----- files: bytes cross as base64 copies both ways, never as references to the host's memory
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const toBase64 = (bytes: Uint8Array): string => {
    const parts: string[] = [];
    for (let i = 0; i < bytes.length; i += 3) {
      const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
      parts.push(B64[n >> 18]! + B64[(n >> 12) & 63]! + (i + 1 < bytes.length ? B64[(n >> 6) & 63] : '=') + (i + 2 < bytes.length ? B64[n & 63] : '='));
    }
    return parts.join('');
  };
  const fromBase64 = (text: string): Uint8Array => {
    const clean = text.replace(/[^A-Za-z0-9+/]/g, '');
    const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
    let bits = 0;
    let acc = 0;
    let j = 0;
    for (let i = 0; i < clean.length; i++) {
      acc = ((acc << 6) | B64.indexOf(clean[i]!)) & 0xffffff;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out[j++] = (acc >> bits) & 255;
      }
    }
    return out.subarray(0, j);
  };
  const latin1 = (bytes: Uint8Array): string => {
    const parts: string[] = [];
    for (let i = 0; i < bytes.length; i += 8192) parts.push(String.fromCharCode.apply(null, Array.from(bytes.subarray(i, i + 8192))));
    return parts.join('');
  };
  const utf8Bytes = (text: string): Uint8Array => {
    const bin = unescape(encodeURIComponent(text));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  };
  /** What helpers.getBinaryDataBuffer gives: bytes whose toString reads them as Node's Buffer does for the usual encodings. */
  class FileBuffer extends Uint8Array {
    override toString(encoding?: unknown): string {
      const enc = String(encoding ?? 'utf8').toLowerCase();
      if (enc === 'base64') return toBase64(this);
      if (enc === 'hex') return Array.from(this, (b) => (b < 16 ? '0' : '') + b.toString(16)).join('');
      if (enc === 'latin1' || enc === 'binary' || enc === 'ascii') return latin1(this);
      if (enc !== 'utf8' && enc !== 'utf-8') throw host(`Unknown encoding: ${String(encoding)}`);
      const bin = latin1(this);
      try {
        return decodeURIComponent(escape(bin));
      } catch {
        // Not valid UTF-8: each byte as its character rather than a failure.
        return bin;
      }
    }
  }
  const helpers = {
    getBinaryDataBuffer: async (itemIndex: unknown, key: unknown) => {
      const item = items[Number(itemIndex)];
      if (!item) throw host(`There is no input item ${String(itemIndex)}`);
      const meta = item.binary?.[String(key)];
      if (!meta) throw host(`This item has no binary field '${String(key)}'`);
      const data = P.buffers?.[String(meta.id)];
      if (data === undefined) throw host(`Binary field '${String(key)}' was not loaded into memory`);
      const bytes = fromBase64(data);
      const buffer = new FileBuffer(bytes.length);
      buffer.set(bytes);
      return buffer;
    },
    prepareBinaryData: async (data: unknown, fileName?: unknown, mimeType?: unknown) => {
      const bytes =
        typeof data === 'string' ? utf8Bytes(data) : data instanceof Uint8Array ? data : data instanceof ArrayBuffer ? new Uint8Array(data) : undefined;
      if (!bytes) throw host('prepareBinaryData takes the bytes of the file (a buffer from getBinaryDataBuffer, a Uint8Array or a string)');
      return {
        data: toBase64(bytes),
        ...(typeof mimeType === 'string' && mimeType ? { mimeType } : {}),
        ...(typeof fileName === 'string' && fileName ? { fileName } : {}),
      };
    },
  };

  // $now and $today are DateTimes, made on first read: luxon is built in the context only when
  // the code touches a date (sandbox/prelude). luxon's DateTime is taken now, whatever the code
  // does to the global; without luxon in the sandbox, they are Dates ($today midnight UTC).
  const own = Object.getOwnPropertyDescriptor(G, 'DateTime');
  const luxonDateTime = own?.get ?? (() => own?.value as SandboxGlobal['DateTime']);
  let dates: [unknown, unknown] | undefined;
  const nowAndToday = () => {
    if (dates) return dates;
    const DateTime = luxonDateTime() as SandboxGlobal['DateTime'];
    if (DateTime && typeof DateTime.fromMillis === 'function') {
      const zoned = DateTime.fromMillis(P.now, { zone: P.timezone });
      dates = [zoned, zoned.startOf('day')];
    } else dates = [new Date(P.now), new Date(Math.floor(P.now / 86_400_000) * 86_400_000)];
    return dates;
  };
  // As assign() would leave them once read or set: plain, writable, enumerable.
  const lazyGlobal = (name: string, value: () => unknown) => {
    const plain = (v: unknown) => Object.defineProperty(G, name, { value: v, writable: true, enumerable: true, configurable: true });
    Object.defineProperty(G, name, {
      get: () => {
        const v = value();
        plain(v);
        return v;
      },
      set: plain,
      enumerable: true,
      configurable: true,
    });
  };

  const vars = (index: number): Record<string, unknown> => ({
    $input: input(index),
    $json: items[index]?.json,
    $data: items[index]?.json,
    $binary: items[index]?.binary ?? {},
    $itemIndex: index,
    $position: index,
    $thisItem: items[index],
    $thisItemIndex: index,
    $node: $node(index),
    $: dollar(index),
    $item: (i: number) => vars(i),
  });
  assign(G, {
    global: G,
    console,
    require: (name: unknown) => {
      throw host(`Module '${name}' is disallowed`);
    },
    module: {},
    ...timerGlobals,
    btoa: (s: unknown) => {
      const text = String(s);
      if (/[^\u0000-\u00ff]/.test(text)) throw host('Invalid character');
      const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
      let out = '';
      for (let i = 0; i < text.length; i += 3) {
        const [a, b, c] = [text.charCodeAt(i), text.charCodeAt(i + 1), text.charCodeAt(i + 2)];
        const n = (a << 16) | ((b || 0) << 8) | (c || 0);
        out += B64[n >> 18]! + B64[(n >> 12) & 63]! + (i + 1 < text.length ? B64[(n >> 6) & 63] : '=') + (i + 2 < text.length ? B64[n & 63] : '=');
      }
      return out;
    },
    atob: (s: unknown) => {
      const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
      let text = String(s).replace(/[\t\n\f\r ]/g, '');
      if (text.length % 4 === 0) text = text.replace(/==?$/, '');
      if (text.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(text)) throw host('The string to be decoded is not correctly encoded.');
      let out = '';
      let bits = 0;
      let acc = 0;
      for (const ch of text) {
        acc = (acc << 6) | B64.indexOf(ch);
        bits += 6;
        if (bits >= 8) {
          bits -= 8;
          out += String.fromCharCode((acc >> bits) & 255);
        }
      }
      return out;
    },
    $execution: P.execution,
    $executionId: P.execution.id,
    $resumeWebhookUrl: P.execution.resumeUrl,
    $workflow: P.workflow,
    $vars: Object.freeze({ ...(P.vars || {}) }),
    $getWorkflowStaticData: (type: unknown) => {
      if (!P.staticData) throw host('Workflow static data is not available here');
      if (type === 'global' || type === 'node') return P.staticData[type];
      throw host(`The type "${String(type)}" is not known. Valid types are "global" and "node".`);
    },
    $secrets: undefined,
    $env,
    $mode: P.mode,
    $runIndex: P.runIndex,
    $thisRunIndex: P.runIndex,
    $nodeVersion: P.node.typeVersion,
    $nodeId: P.node.id,
    $webhookId: undefined,
    $parameter: P.node.parameters,
    $rawParameter: P.node.parameters,
    $prevNode:
      P.source ??
      Object.defineProperties({}, Object.fromEntries(['name', 'outputIndex', 'runIndex'].map((k) => [k, { get: unknownSource, enumerable: true }]))),
    helpers,
    $items: (name?: string, branch?: number, run?: number) => {
      if (name === undefined) return items;
      onlyFirst(name, branch, run);
      return executed(name);
    },
  });

  lazyGlobal('$now', () => nowAndToday()[0]);
  lazyGlobal('$today', () => nowAndToday()[1]);

  // ----- run
  const answer = (body: Record<string, unknown>) => {
    try {
      return stringify({ logs, ...body, ...(P.staticData ? { staticData: P.staticData } : {}) });
    } catch (err) {
      return stringify({ logs, error: { kind: 'serialize', message: String((err as ErrorLike)?.message ?? err) } });
    }
  };
  const failure = (thrown: unknown): RunnerError => {
    const err = thrown as ErrorLike;
    if (typeof err === 'object' && err !== null && HOST.has(err)) return { kind: 'host', message: String(err.message) };
    const errorLike = typeof err === 'object' && err !== null && typeof err.message === 'string';
    return { kind: 'user', stack: errorLike && typeof err.stack === 'string' ? err.stack : '' };
  };
  let code: () => Promise<unknown>;
  try {
    code = (0, eval)(`(async function VmCodeWrapper() {${P.code}\n})\n//# sourceURL=${SOURCE}`);
  } catch (err) {
    return Promise.resolve(answer({ error: { kind: 'compile', message: String((err as ErrorLike)?.message ?? err) } }));
  }
  const runAll = async () => {
    assign(G, vars(0), { items });
    return { result: await settle(code()) };
  };
  const runEach = async () => {
    const results: EachResult[] = [];
    for (let i = 0; i < items.length; i++) {
      assign(G, vars(i), { item: items[i] });
      let r: unknown;
      try {
        r = await settle(code());
      } catch (err) {
        if (!P.continueOnFail) throw err;
        results.push({ index: i, error: failure(err) });
        continue;
      }
      // n8n's runner passes on nothing for null or any other falsy answer.
      if (!r) continue;
      const entry: { index: number; json?: unknown; binary?: unknown } = {
        index: i,
        json: (typeof r === 'object' || typeof r === 'function') && 'json' in r ? r.json : r,
      };
      const binary = (r as { binary?: unknown }).binary;
      // Anything but an object comes back as its type's name: code.ts refuses it as n8n does.
      if (binary) entry.binary = typeof binary === 'object' ? binary : typeof binary;
      results.push(entry);
    }
    return { results };
  };
  return (P.each ? runEach() : runAll()).then(answer, (err) => answer({ error: failure(err) }));
}

/** The sandbox body: `$0` is the payload. */
export const CODE_RUNNER = [
  `const SOURCE = ${JSON.stringify(SOURCE)};`,
  `const LOG_LIMIT = ${LOG_LIMIT};`,
  `const VIRTUAL_TIMERS = ${virtualTimers.toString()};`,
  `return (${codeRunner.toString()})($0);`,
].join('\n');
