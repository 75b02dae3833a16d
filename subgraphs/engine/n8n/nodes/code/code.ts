import { ownEntry } from '../../../../../kernel/names';
import { BudgetExceeded } from '../../../nodes';
import type { BinaryData } from '../../../expressions';
import { isOneOf, NodeError, prepareBinary, type Item, type NodeContext, type NodeDefinition } from '../../../nodes';
import { SandboxError } from '../../../sandbox';
import { CODE_RUNNER, CODE_SOURCE, type CodeAnswer, type CodeItem, type CodePayload, type EachResult, type RunnerError } from './runner';

/**
 * n8n's Code node (1, 2) in JavaScript, as n8n's task runner runs it: all items in one sandbox
 * evaluation (runner.ts), the result checked here with n8n's messages. Items' files reach the code
 * as their metadata (`binary.<key>` without `data`, with an `id` naming the file), their bytes
 * through `helpers.getBinaryDataBuffer` (copied in as base64, only for code that calls it); files
 * the code returns (base64 `data`, `helpers.prepareBinaryData`, or an input file by its `id`) pass
 * on, each checked against BINARY_DATA_MAX_BYTES before it is decoded. Differences no n8n option
 * selects: `items` and `$input.all()` are the same objects; every module is refused in `require`;
 * a node's outputs are read together; `$vars` is read-only; paired items, node contexts and
 * `$prevNode` exist in execution order v1 only. `$getWorkflowStaticData` is kept between
 * production executions (executions/in-flight.ts). What the sandbox lacks altogether (other
 * helpers, Buffer, …) is refused at import.
 */

type Params = Record<string, unknown>;
type Json = Record<string, unknown>;

const MODES = ['runOnceForAllItems', 'runOnceForEachItem'];

// ---------------------------------------------------------------------------------------------
// What is refused at import

const LANGUAGES: Record<string, string> = {
  python: 'Python (Beta), which n8n runs on Pyodide',
  pythonNative: 'Python (Native), which n8n runs on its Python task runner',
};

/** n8n features the code may use that the sandbox does not offer: `needs` says what would. */
const CODE_GAPS: { pattern: RegExp; uses: (m: RegExpMatchArray) => string; needs: string }[] = [
  {
    pattern: /\bhelpers\s*\.\s*(?!(?:getBinaryDataBuffer|prepareBinaryData)\b)([\w$]*)/,
    uses: (m) => `helpers.${m[1]}`,
    needs: "more of n8n's helpers inside the code sandbox than getBinaryDataBuffer and prepareBinaryData (an HTTP Request node makes requests)",
  },
  { pattern: /\$evaluateExpression\b/, uses: () => '$evaluateExpression', needs: 'the expression engine inside the code sandbox' },
  { pattern: /\$fromA[Ii]\b/, uses: () => '$fromAI', needs: 'an AI agent calling the workflow as a tool' },
  { pattern: /\$jmes[Pp]ath\b/, uses: (m) => m[0]!, needs: 'a JMESPath implementation in the sandbox' },
  { pattern: /\$getPairedItem\b/, uses: () => '$getPairedItem', needs: 'paired items tracked from node to node' },
  { pattern: /\$input\s*\.\s*params\b/, uses: () => '$input.params', needs: "the previous node's parameters in the sandbox" },
  { pattern: /\$\([^()]*\)\s*\.\s*params\b/, uses: () => '$(…).params', needs: "other nodes' parameters in the sandbox" },
  { pattern: /\$node\s*(?:\[[^\]]*\]|\.\s*[\w$]+)\s*\.\s*parameter\b/, uses: () => '$node[…].parameter', needs: "other nodes' parameters in the sandbox" },
  { pattern: /\$execution\s*\.\s*customData\b/, uses: () => '$execution.customData', needs: 'custom data stored with the execution' },
  { pattern: /\bresumeFormUrl\b/, uses: () => '$execution.resumeFormUrl', needs: "n8n's form-waiting URL" },
  {
    pattern: /\b(Buffer|TextEncoder|TextDecoder|TextEncoderStream|TextDecoderStream|FormData)\b/,
    uses: (m) => m[1]!,
    needs: 'that Node.js global in the code sandbox',
  },
];

/** Comments are dropped first: mentioning a feature in a comment does not use it. */
function codeGap(code: string): { option: string; message: string } | undefined {
  const live = code.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, '');
  for (const gap of CODE_GAPS) {
    const m = live.match(gap.pattern);
    if (!m) continue;
    const uses = gap.uses(m);
    return { option: `jsCode: ${uses}`, message: `the code uses ${uses}, which the Code node here does not offer: it would need ${gap.needs}` };
  }
  return undefined;
}

function unsupported(p: Params, version: number): { option: string; message: string } | undefined {
  // Version 1 has no language: it always runs JavaScript.
  const language = version >= 2 ? (p.language ?? 'javaScript') : 'javaScript';
  if (language !== 'javaScript') {
    const what = ownEntry(LANGUAGES, language);
    return {
      option: `language: ${language}`,
      message: what
        ? `language "${language}" (${what}) is not supported: it would need a Python runtime in the code sandbox; rewrite the code in JavaScript`
        : `language "${language}" is not one of n8n's (javaScript, python, pythonNative)`,
    };
  }
  return typeof p.jsCode === 'string' ? codeGap(p.jsCode) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Running the code

/** Our execution modes as n8n's ($mode); $execution.mode is 'test' for n8n's manual runs only. */
const N8N_MODES: Record<string, string> = { schedule: 'trigger', subworkflow: 'integrated', test: 'manual' };

/**
 * The files the code is shown, by the `id` it sees them under: a file it hands back by that id
 * (`return items`, a spread copy) passes on as the same file, without its bytes crossing twice.
 */
class Files {
  readonly byId = new Map<string, BinaryData>();

  /** An item as the code sees it: its json, its files' metadata, and its paired item when it has one. */
  item = (i: Item): CodeItem => {
    const item: CodeItem = { json: i.json };
    // An item without files costs this one check.
    if (i.binary !== undefined && i.binary !== null) item.binary = this.binary(i.binary);
    if (i.pairedItem !== undefined) item.pairedItem = i.pairedItem;
    return item;
  };

  private binary(binary: Record<string, BinaryData>): Record<string, Json> {
    const out: Record<string, Json> = {};
    for (const [key, b] of Object.entries(binary)) {
      if (!b) continue;
      const id = `code-file:${this.byId.size}`;
      this.byId.set(id, b);
      const { data: _data, id: _stored, bytes: _bytes, ...meta } = b;
      out[key] = { ...meta, id };
    }
    return out;
  }

  /** The bytes of the input items' files, by id, for code that reads them. */
  buffers(items: CodeItem[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const item of items)
      for (const meta of Object.values(item.binary ?? {})) {
        const b = this.byId.get(String(meta.id));
        if (b?.data) out[String(meta.id)] = b.data;
      }
    return out;
  }
}

/** The nodes the code names (all of them when it names one by a computed value). */
function referencedNodes(code: string, nodes: ReadonlyMap<string, Item[]>): string[] {
  const dynamic = /(?:\$node\s*\[|\$\(|\$items\()\s*(?:[^'"`\s)]|`[^`]*\$\{)/.test(code);
  return [...nodes.keys()].filter((name) => dynamic || code.includes(name) || code.includes(JSON.stringify(name).slice(1, -1)));
}

/** What the executor knows of items' lineage and nodes' contexts (n8n's execution order v1). */
function lineage(ctx: NodeContext, code: string, names: string[], files: Files): Pick<CodePayload, 'paired' | 'contexts'> {
  const { lineage: known } = ctx;
  if (!known) return {};
  // Contexts can be large (a loop's remaining items) and following items back costs a walk per
  // item and node: each is sent only to code that reads it.
  const source = ctx.inputSource?.[0]?.previousNode;
  const contexts = /\.\s*context\b/.test(code)
    ? Object.fromEntries([...names, ...(source ? [source] : [])].map((name) => [name, { ...(known.context(name) ?? {}) }]))
    : {};
  if (!/\.\s*(?:item|pairedItem|itemMatching)\b/.test(code)) return { contexts };
  const pairedWith = (name: string, i: number) => {
    const item = known.pairedItem(name, i);
    return item ? files.item(item) : null;
  };
  const paired = Object.fromEntries(names.map((name) => [name, ctx.items.map((_, i) => pairedWith(name, i))]));
  return { paired, contexts };
}

function payload(ctx: NodeContext, code: string, each: boolean, files: Files): CodePayload {
  const data = ctx.expressionData;
  const mode = ownEntry(N8N_MODES, data.execution.mode) ?? data.execution.mode;
  const names = referencedNodes(code, data.nodes);
  const source = ctx.inputSource?.[0];
  const items = ctx.items.map(files.item);
  return {
    code,
    each,
    continueOnFail: ctx.continueOnFail === true,
    items,
    ...(files.byId.size && USES_BUFFERS.test(code) ? { buffers: files.buffers(items) } : {}),
    nodes: Object.fromEntries(names.map((name) => [name, data.nodes.get(name)!.map(files.item)])),
    ...lineage(ctx, code, names, files),
    ...(source ? { source: { name: source.previousNode, outputIndex: source.previousNodeOutput, runIndex: source.previousNodeRun } } : {}),
    runIndex: ctx.lineage?.runIndex ?? 0,
    node: { id: ctx.node.id, typeVersion: ctx.node.typeVersion ?? 1, parameters: ctx.node.parameters },
    execution: {
      id: data.execution.id,
      mode: mode === 'manual' ? 'test' : 'production',
      resumeUrl: USES_RESUME_URL.test(code) ? data.execution.resumeUrl : '',
    },
    mode,
    workflow: { active: data.workflow.active, id: data.workflow.id, name: data.workflow.name },
    vars: { ...data.vars },
    ...(USES_STATIC_DATA.test(code)
      ? { staticData: { global: ctx.staticData?.get('global') ?? {}, node: ctx.staticData?.get(`node:${ctx.node.name}`) ?? {} } }
      : {}),
    timezone: data.workflow.timezone ?? 'UTC',
    now: Date.now(),
  };
}

/**
 * Only code that can read the resume URL gets it (`$execution`, `$resumeWebhookUrl`): it is an
 * HMAC of the execution's id, a tenth of a millisecond of the platform's CPU at every run.
 */
const USES_RESUME_URL = /\$execution\b|\$resumeWebhookUrl\b|\bresumeUrl\b/;

/** Code that names getBinaryDataBuffer gets its input files' bytes in its sandbox. */
const USES_BUFFERS = /\bgetBinaryDataBuffer\b/;

/** Code that names `$getWorkflowStaticData` gets the static data into its sandbox, and hands it back. */
const USES_STATIC_DATA = /\$getWorkflowStaticData\b/;

/**
 * Every Code node's context has luxon's globals (and $now/$today, DateTimes), but builds luxon on
 * their first read (sandbox/prelude): it is most of a small Code node's cost. Code that names them
 * gets a context with luxon built ahead, off the request path; other code builds it only if it
 * reaches a date another way. A hint for speed only: both give the same globals.
 */
const USES_LUXON = /\$now|\$today|\bDateTime\b|\bDuration\b|\bInterval\b|\bluxon\b/;

/** The sandbox's answer; a failure of the code or of the sandbox is a NodeError with n8n's message. */
async function runInSandbox(ctx: NodeContext, input: CodePayload): Promise<CodeAnswer> {
  const timeoutMs = typeof ctx.node.timeout === 'number' ? ctx.node.timeout * 1000 : undefined;
  const prelude = USES_LUXON.test(input.code) ? 'n8n' : 'dates';
  let raw: string;
  try {
    raw = await ctx.services.codeSandbox.run({ body: CODE_RUNNER, input: JSON.stringify(input), timeoutMs, signal: ctx.signal, prelude });
  } catch (err) {
    if (err instanceof SandboxError) throw sandboxFailure(err, timeoutMs ?? ctx.services.codeSandbox.timeoutMs, ctx.services.codeSandbox.memoryMb);
    throw err;
  }
  const answer = JSON.parse(raw) as CodeAnswer;
  for (const [level, line] of answer.logs) ctx.log(`console: ${line}`, level);
  // As n8n: what the code changed is kept even when it then fails.
  if (answer.staticData && ctx.staticData) {
    ctx.staticData.set('global', answer.staticData.global);
    ctx.staticData.set(`node:${ctx.node.name}`, answer.staticData.node);
  }
  if (answer.error) throw codeFailure(answer.error);
  return answer;
}

export const code: NodeDefinition = {
  name: 'code',
  description:
    "n8n's Code node: runs `jsCode` (JavaScript) once for all items (`mode: runOnceForAllItems`, the default) or once per item (`runOnceForEachItem`), with n8n's variables ($input, $json, $('Node'), items / item, …).",
  n8n: { versions: [1, 2], unsupported },
  raw: ['jsCode', 'pythonCode'],
  invalid(p) {
    if (p.mode !== undefined && !isOneOf(MODES, p.mode)) return { parameter: 'mode', message: `must be one of ${MODES.join(', ')}` };
    if (p.jsCode !== undefined && typeof p.jsCode !== 'string') return { parameter: 'jsCode', message: 'must be text' };
    return undefined;
  },
  async execute(ctx) {
    const p = ctx.node.parameters;
    const each = p.mode === 'runOnceForEachItem';
    const source = typeof p.jsCode === 'string' ? p.jsCode : '';
    if (!source) throw new NodeError('No code to execute', { reason: 'validation' });
    if (each) checkEachItemCode(source);
    let items: Item[];
    const files = new Files();
    try {
      const answer = await runInSandbox(ctx, payload(ctx, source, each, files));
      const returned = each ? answer.results : answer.result;
      if (Array.isArray(returned)) ctx.checkOutput(returned.length);
      const limits = { files, maxBytes: ctx.services.maxBinaryBytes ?? Number.POSITIVE_INFINITY, node: ctx.node };
      items = each ? eachItemOutput(answer.results ?? [], ctx.continueOnFail === true, limits) : allItemsOutput(answer.result, 'result' in answer, limits);
    } catch (err) {
      // continueOnFail: n8n's run for all items gives one {error} item, a failed check of what the
      // code returned included, so a following node (or the error output) gets it; for each item,
      // the sandbox went on item by item.
      if (each || !ctx.continueOnFail || !(err instanceof NodeError) || err.details.reason === 'aborted') throw err;
      return { outputs: [[{ json: { error: err.message } }]] };
    }
    return { outputs: [items] };
  },
};

export const codeNodes: NodeDefinition[] = [code];

// ---------------------------------------------------------------------------------------------
// What the code returned, checked as n8n checks it

/** n8n's keys of an item: one of them on a returned object makes it an item. */
const ITEM_KEYS = new Set(['json', 'binary', 'pairedItem', 'error', 'metadata', 'index']);

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** n8n's ValidationError: where it happened goes in brackets after the message. */
function validation(message: string, description: string, itemIndex?: number, lineNumber?: number): NodeError {
  const item = itemIndex === undefined ? '' : lineNumber === undefined ? `item ${itemIndex}` : `, for item ${itemIndex}`;
  const where = lineNumber === undefined ? item : `line ${lineNumber}${item}`;
  return new NodeError(where ? `${message} [${where}]` : message, { reason: 'validation', description, itemIndex, lineNumber });
}

const notItems = () => validation("Code doesn't return items properly", 'Please return an array of objects, one for each item you would like to output.');

/** In each-item mode n8n refuses the methods that read every item, before running anything. */
function checkEachItemCode(source: string): void {
  const method = source.match(/\$input\.(first|last|all|itemMatching)/)?.[1];
  if (!method) return;
  const line = source.split('\n').findIndex((l) => l.includes(method) && !l.startsWith('//') && !l.startsWith('*')) + 1;
  if (line) throw validation(`Can't use .${method}() here`, "This is only available in 'Run Once for All Items' mode", 0, line);
}

const notObject = (key: 'json' | 'binary', index: number) =>
  validation(`A '${key}' property isn't an object`, `In the returned data, every key named '${key}' must point to an object.`, index);

function checkItem(item: Json, index: number): void {
  if (!isObject(item.json)) throw notObject('json', index);
  if (item.binary !== undefined && !isObject(item.binary)) throw notObject('binary', index);
}

/** A returned object that has one of n8n's item keys may have no other key. */
function checkTopLevelKeys(item: Json, index: number): void {
  const keys = Object.keys(item);
  const reserved = keys.find((k) => ITEM_KEYS.has(k));
  const unknown = keys.find((k) => !ITEM_KEYS.has(k));
  if (unknown === undefined) return;
  if (reserved !== undefined) {
    throw validation(
      'Invalid output format',
      `An output item contains the reserved key <code>${reserved}</code>. To get around this, please wrap each item in an object, under a key called <code>json</code>.`,
      index,
    );
  }
  throw validation(`Unknown top-level item key: ${unknown}`, 'Access the properties of an item under `.json`, e.g. `item.json`', index);
}

/** n8n's normalizeItems: objects become items' json, unless they are items already. */
function normalize(value: Json | Json[]): Json[] {
  if (!Array.isArray(value)) return [value.json ? value : { json: value }];
  const has = (key: string) => value.map((i) => key in i);
  const inconsistent = () => new NodeError('Inconsistent item format', { reason: 'validation' });
  const json = has('json');
  if (json.every(Boolean)) return value;
  if (json.some(Boolean)) throw inconsistent();
  const binary = has('binary');
  if (binary.every(Boolean)) return value.map(({ binary: b, ...rest }) => ({ json: rest, binary: b }));
  if (binary.some(Boolean)) throw inconsistent();
  return value.map((j) => ({ json: j }));
}

/** What returned files are checked against, and the files the code was shown. */
interface Limits {
  files: Files;
  maxBytes: number;
  node: { name: string; type: string };
}

/** The metadata the code may change on a file it hands back by id. */
const META_KEYS = ['mimeType', 'fileType', 'fileName', 'fileExtension', 'directory', 'fileSize'] as const;

/**
 * A returned item's files: one with base64 `data` is a new file (its size checked before it is
 * decoded), one with the `id` of a file the code was shown is that file (with the metadata the
 * code changed).
 */
function returnedFiles(binary: Json, index: number, limits: Limits): Record<string, BinaryData> {
  const out: Record<string, BinaryData> = {};
  for (const [key, value] of Object.entries(binary)) {
    if (!isObject(value)) throw validation(`Binary field '${key}' isn't an object`, 'Every file under `binary` must be an object with base64 `data`.', index);
    if (typeof value.data === 'string' && value.data !== '') {
      const size = Math.floor((value.data.replace(/[^A-Za-z0-9+/]/g, '').length * 3) / 4);
      if (size > limits.maxBytes)
        throw new BudgetExceeded(
          'maxBinaryBytes',
          limits.maxBytes,
          size,
          `Node "${limits.node.name}" made a file of ${size} bytes (binary field '${key}'): the limit BINARY_DATA_MAX_BYTES is ${limits.maxBytes} bytes per file`,
          undefined,
          limits.node,
        );
      const text = (k: string) => (typeof value[k] === 'string' && value[k] !== '' ? (value[k] as string) : undefined);
      out[key] = prepareBinary(Buffer.from(value.data, 'base64'), { fileName: text('fileName'), mimeType: text('mimeType'), directory: text('directory') });
      continue;
    }
    const known = typeof value.id === 'string' ? limits.files.byId.get(value.id) : undefined;
    if (!known)
      throw validation(
        `Binary field '${key}' has no data`,
        'A file the code returns needs its bytes as base64 in `data` (helpers.prepareBinaryData makes one), or must be a file of the input.',
        index,
      );
    const changed = META_KEYS.filter((k) => k in value && value[k] !== known[k]);
    out[key] = changed.length ? { ...known, ...Object.fromEntries(changed.map((k) => [k, value[k]])) } : known;
  }
  return out;
}

/** A returned item's paired item, in the shape items carry it (n8n also takes an index, or a list: its first counts). */
function pairedItemOf(value: unknown): Item['pairedItem'] {
  const p = Array.isArray(value) ? value[0] : value;
  if (typeof p === 'number' && Number.isInteger(p) && p >= 0) return { item: p };
  if (!isObject(p) || typeof p.item !== 'number') return undefined;
  return typeof p.input === 'number' ? { item: p.item, input: p.input } : { item: p.item };
}

function allItemsOutput(result: unknown, returned: boolean, limits: Limits): Item[] {
  if (!returned) throw notItems();
  if (result === null) return [];
  if (typeof result !== 'object') throw notItems();
  if (Array.isArray(result)) {
    if (!result.every(isObject)) throw notItems();
    if (result.some((item) => Object.keys(item).some((k) => ITEM_KEYS.has(k)))) result.forEach(checkTopLevelKeys);
  }
  const list = normalize(result as Json | Json[]);
  list.forEach(checkItem);
  return list.map((i, index): Item => {
    const item: Item = { json: i.json as Json };
    if (i.binary !== undefined) item.binary = returnedFiles(i.binary as Json, index, limits);
    const pairedItem = pairedItemOf(i.pairedItem);
    if (pairedItem) item.pairedItem = pairedItem;
    return item;
  });
}

/** Each result comes from input item `index`; a check failing names its position among the results (as n8n does). */
function eachItemOutput(results: EachResult[], continueOnFail: boolean, limits: Limits): Item[] {
  return results.map((r, position): Item => {
    const pairedItem = { item: r.index };
    if ('error' in r) return { json: { error: codeFailure(r.error).message }, pairedItem };
    // With continueOnFail an item whose result fails the check becomes that item's {error}, as a thrown error does.
    const invalid = !isObject(r.json) ? notObject('json', position) : r.binary !== undefined && !isObject(r.binary) ? notObject('binary', position) : undefined;
    if (invalid && continueOnFail) return { json: { error: invalid.message }, pairedItem };
    if (invalid) throw invalid;
    if (r.binary === undefined) return { json: r.json as Json, pairedItem };
    return { json: r.json as Json, binary: returnedFiles(r.binary as Json, position, limits), pairedItem };
  });
}

// ---------------------------------------------------------------------------------------------
// Failures

/**
 * n8n's message for an error the code threw: the text after the last ':' of the stack's first
 * `…Error: …` line, and `[line N]`: the innermost named function of the code on the stack, else
 * the line of the code itself. The error's type (TypeError, …) goes in `description`.
 */
export function thrownMessage(stack: string): { message: string; description?: string; lineNumber?: number } {
  const rows = stack.split('\n');
  const own = `(${CODE_SOURCE}:`;
  const frame = (row: string) => row.includes(own) && !/\bat (?:async )?eval \(/.test(row);
  const row = rows.find((r) => frame(r) && !r.includes('VmCodeWrapper')) ?? rows.find((r) => frame(r) && r.includes('VmCodeWrapper'));
  const line = row?.slice(row.indexOf(own) + own.length).match(/^(\d+):/)?.[1];
  const lineNumber = line === undefined ? undefined : Number(line);
  const where = lineNumber === undefined ? '' : ` [line ${lineNumber}]`;
  const messageRow = rows.find((r) => r.includes('Error:'));
  const [details, type] = messageRow
    ? messageRow
        .split(':')
        .map((s) => s.trim())
        .reverse()
    : [];
  if (!details) return { message: `Unknown error${where}`, lineNumber };
  return { message: `${details}${where}`, description: type === 'Error' ? undefined : type, lineNumber };
}

function codeFailure(err: RunnerError): NodeError {
  if (err.kind !== 'user')
    return new NodeError(err.message ?? 'Unknown error', { reason: 'script', ...(err.kind === 'compile' ? { description: 'SyntaxError' } : {}) });
  const { message, description, lineNumber } = thrownMessage(err.stack ?? '');
  return new NodeError(message, { reason: 'script', description, lineNumber });
}

function sandboxFailure(err: SandboxError, timeoutMs: number, memoryMb: number): NodeError {
  switch (err.reason) {
    case 'timeout': {
      const s = Math.round(timeoutMs / 100) / 10;
      return new NodeError(`Task execution timed out after ${s} ${s === 1 ? 'second' : 'seconds'}`, {
        reason: 'timeout',
        description:
          'The code was taking too long, so it was stopped: process the data in smaller batches, and make sure every path of the code ends (no endless loop, no promise that never settles).',
      });
    }
    case 'memory':
      return new NodeError(`Code exceeded the memory limit of ${memoryMb} MB`, { reason: 'memory' });
    case 'aborted':
      return new NodeError('Code was stopped: the execution was canceled or timed out', { reason: 'aborted' });
    case 'crashed':
      return new NodeError(`Code crashed its sandbox process (the memory limit is ${memoryMb} MB): ${err.message}`, { reason: 'crashed' });
    default:
      return new NodeError(`Code failed: ${err.message}`, { reason: 'script' });
  }
}
