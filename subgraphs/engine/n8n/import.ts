import { ownEntry } from '../../../kernel/names';
import { HTTP_AUTH_TYPES, workflowInvalid, isPlainObject, listOf, objectOf, type NodeDefinition } from '../nodes';
import { parseTemplate } from '../expressions';
import { N8N_NODE_PREFIX, N8N_NODES } from './nodes';

/**
 * n8n exports -> our format. The core nodes that run natively (n8n/nodes) are kept as n8n wrote
 * them, settings included, and checked when the workflow is validated (Schedule Trigger, Interval,
 * Wait and Respond to Webhook among them); the other triggers, HTTP Request and the legacy
 * Function nodes map to `engine.<name>` with our parameters. Sticky notes are kept beside the
 * nodes (never run); what has no equivalent is WORKFLOW_INVALID naming the node;
 * credentials are never part of an export, so they are dropped with a note.
 */

type Params = Record<string, unknown>;
type Mapper = (params: Params, node: Params) => { type: string; parameters: Params; notes?: string };

const N8N_PREFIXES = ['n8n-nodes-base.', '@n8n/n8n-nodes-base.'];

export function isN8nType(type: unknown): type is string {
  return typeof type === 'string' && N8N_PREFIXES.some((p) => type.startsWith(p));
}

export interface ImportedWorkflow {
  name?: string;
  nodes: unknown;
  connections: unknown;
  settings: Record<string, unknown>;
  tags: string[];
  active?: boolean;
  /** n8n's pinned data: the items each named node outputs in manual runs instead of running. */
  pinData?: Record<string, { json: Record<string, unknown> }[]>;
  /** The export's sticky notes, drawn with the workflow and never run. */
  stickyNotes: StickyNote[];
}

/** A sticky note of n8n's editor: markdown at a place on the canvas, of a size and one of n8n's colors (1 to 7). */
export interface StickyNote {
  name: string;
  content: string;
  position: [number, number];
  width: number;
  height: number;
  color: number;
}

export const STICKY_NOTE_TYPE = 'n8n-nodes-base.stickyNote';
/** Bounds that keep a stored workflow's notes small whatever the export holds. */
const MAX_STICKY_NOTES = 100;
const MAX_STICKY_CONTENT = 20_000;
const MAX_STICKY_SIZE = 10_000;

const isStickyNote = (n: unknown): n is Params => isPlainObject(n) && n.type === STICKY_NOTE_TYPE;

const finite = (v: unknown, fallback: number, min: number, max: number): number =>
  typeof v === 'number' && Number.isFinite(v) ? Math.min(max, Math.max(min, v)) : fallback;

/** The sticky notes of an export's nodes, as n8n draws them (its defaults: 240 x 160, color 1). */
function stickyNotesOf(nodes: unknown[]): StickyNote[] {
  const notes = nodes.filter(isStickyNote);
  if (notes.length > MAX_STICKY_NOTES) {
    throw workflowInvalid(`The workflow has ${notes.length} sticky notes; at most ${MAX_STICKY_NOTES} are kept`, { reason: 'too_many_sticky_notes' });
  }
  return notes.map((n, i) => {
    const params = isPlainObject(n.parameters) ? n.parameters : {};
    const content = typeof params.content === 'string' ? params.content : '';
    if (content.length > MAX_STICKY_CONTENT) {
      throw workflowInvalid(`Sticky note "${String(n.name)}" has more than ${MAX_STICKY_CONTENT} characters`, { reason: 'sticky_note_too_long', node: n.name });
    }
    const at = Array.isArray(n.position) ? n.position : [];
    return {
      name: typeof n.name === 'string' && n.name ? n.name.slice(0, 200) : `Sticky Note ${i + 1}`,
      content,
      position: [finite(at[0], 0, -1e7, 1e7), finite(at[1], 0, -1e7, 1e7)],
      width: finite(params.width, 240, 20, MAX_STICKY_SIZE),
      height: finite(params.height, 160, 20, MAX_STICKY_SIZE),
      color: Math.round(finite(params.color, 1, 1, 7)),
    };
  });
}

/** A stored sticky note as the n8n node an export carries (so n8n, and this import, read it back). */
export function stickyNoteNode(note: StickyNote): Record<string, unknown> {
  return {
    name: note.name,
    type: STICKY_NOTE_TYPE,
    typeVersion: 1,
    position: note.position,
    parameters: { content: note.content, width: note.width, height: note.height, color: note.color },
  };
}

/** n8n's `pinData` ({node: [{json}] or, in older exports, [plain object]}), for the nodes the workflow has. */
function pinDataOf(raw: unknown, nodes: unknown): Record<string, { json: Record<string, unknown> }[]> | undefined {
  if (!isPlainObject(raw) || !Array.isArray(nodes)) return undefined;
  const names = new Set(nodes.filter(isPlainObject).map((n) => n.name));
  const out: Record<string, { json: Record<string, unknown> }[]> = {};
  for (const [name, items] of Object.entries(raw)) {
    if (!names.has(name) || !Array.isArray(items) || !items.length) continue;
    const list = items.filter(isPlainObject).map((i) => ({ json: isPlainObject(i.json) ? i.json : i }));
    if (list.length) Object.defineProperty(out, name, { value: list, enumerable: true, writable: true, configurable: true });
  }
  return Object.keys(out).length ? out : undefined;
}

/** Our workflow input from an export in our format or n8n's (mixed node types are fine). */
export function importWorkflow(raw: Params): ImportedWorkflow {
  const nodes = Array.isArray(raw.nodes) ? raw.nodes : raw.nodes;
  const mapped = Array.isArray(nodes) ? nodes.filter((n) => !isStickyNote(n)).map((n) => (isPlainObject(n) && isN8nType(n.type) ? mapNode(n) : n)) : nodes;
  const settings: Record<string, unknown> = isPlainObject(raw.settings) ? { ...raw.settings } : {};
  if (typeof settings.executionTimeout === 'number' && settings.executionTimeout <= 0) delete settings.executionTimeout;
  for (const [k, v] of Object.entries(settings)) if (v === null) delete settings[k];
  if (Array.isArray(nodes) && nodes.some((n) => isPlainObject(n) && isN8nType(n.type))) n8nExecutionOrder(settings);
  const tags = Array.isArray(raw.tags)
    ? raw.tags.map((t: unknown) => (isPlainObject(t) ? t.name : t)).filter((t: unknown): t is string => typeof t === 'string' && t.length > 0)
    : [];
  return {
    name: typeof raw.name === 'string' ? raw.name : undefined,
    nodes: mapped,
    connections: raw.connections ?? {},
    settings,
    tags,
    active: typeof raw.active === 'boolean' ? raw.active : undefined,
    pinData: pinDataOf(raw.pinData, mapped),
    stickyNotes: Array.isArray(nodes) ? stickyNotesOf(nodes) : [],
  };
}

/** n8n's nodes that run as they are, by their n8n type (the engine's own nodes are `engine.*`). */
const RUN_NATIVELY: ReadonlyMap<string, NodeDefinition> = new Map(N8N_NODES.map((n) => [`${N8N_NODE_PREFIX}${n.name}`, n]));

function mapNode(node: Params): Params {
  const type = String(node.type);
  const short = type.slice(type.lastIndexOf('.') + 1);
  if (RUN_NATIVELY.get(`${N8N_PREFIXES[0]}${short}`)?.n8n) return nativeNode(node, `${N8N_PREFIXES[0]}${short}`);
  const mapper = ownEntry(MAPPERS, short);
  if (!mapper) {
    throw workflowInvalid(`Node "${node.name}" has the n8n type "${node.type}", which has no equivalent here`, {
      reason: 'unknown_node_type',
      node: node.name,
      type: node.type,
      supported: supportedN8nTypes(),
    });
  }
  const params = isPlainObject(node.parameters) ? node.parameters : {};
  let mapped: ReturnType<Mapper>;
  try {
    mapped = mapper(params, node);
  } catch (err) {
    if (err instanceof Unsupported) {
      throw workflowInvalid(`Node "${node.name}" (${node.type}): ${err.message}`, { reason: 'unsupported_parameter', node: node.name, type: node.type });
    }
    throw err;
  }
  const out = withSettings(node, { name: node.name, type: mapped.type, parameters: mapped.parameters }, mapped.notes);
  // A mapped node keeps only the credential it authenticates with (n8n may leave others behind on a node).
  if (isPlainObject(out.credentials)) {
    const used = mapped.parameters.authentication;
    if (typeof used === 'string' && isPlainObject(out.credentials[used])) out.credentials = { [used]: out.credentials[used] };
    else {
      // A Webhook trigger's own authentication is set on its registration (POST /webhooks), not by an n8n credential.
      if (mapped.type !== 'engine.httpRequest') {
        const note = `n8n credentials (${Object.keys(out.credentials).join(', ')}) were not imported: ${mapped.type} does not use them`;
        out.notes = out.notes ? `${out.notes}\n${note}` : note;
      }
      delete out.credentials;
    }
  }
  return out;
}

/** A node this engine runs under its n8n name: type, version and parameters kept as n8n wrote them. */
function nativeNode(node: Params, type: string): Params {
  const out = withSettings(node, { name: node.name, type, parameters: isPlainObject(node.parameters) ? node.parameters : {} });
  // n8n's own error handling runs as n8n runs it (executor/loop.ts), not as our continueOnFail.
  delete out.continueOnFail;
  if (node.onError === 'continueRegularOutput' || node.onError === 'continueErrorOutput') out.onError = node.onError;
  else if (node.continueOnFail === true) out.onError = 'continueRegularOutput';
  if (node.alwaysOutputData === true) out.alwaysOutputData = true;
  if (node.executeOnce === true) out.executeOnce = true;
  return out;
}

/** The n8n node's position, id, version, notes and settings (retries, error handling) on our node. */
function withSettings(node: Params, out: Params, note?: string): Params {
  const notes = [typeof node.notes === 'string' ? node.notes : undefined, note].filter(Boolean).join('\n');
  out.position = Array.isArray(node.position) ? node.position : [0, 0];
  if (node.id !== undefined) out.id = String(node.id);
  if (typeof node.typeVersion === 'number') out.typeVersion = node.typeVersion;
  if (notes) out.notes = notes;
  if (node.disabled === true) out.disabled = true;
  // {type: {id, name}}: resolved against the stored credentials when the workflow is saved (credentials/).
  if (isPlainObject(node.credentials) && Object.keys(node.credentials).length) out.credentials = node.credentials;
  if (node.retryOnFail === true) out.retryOnFail = true;
  if (typeof node.maxTries === 'number') out.maxTries = Math.min(Math.max(Math.round(node.maxTries), 1), 10);
  if (typeof node.waitBetweenTries === 'number') out.waitBetweenTries = Math.min(Math.max(Math.round(node.waitBetweenTries), 0), 300_000);
  if (node.continueOnFail === true || node.onError === 'continueRegularOutput' || node.onError === 'continueErrorOutput') out.continueOnFail = true;
  return out;
}

/**
 * An n8n export runs in n8n's v1 order, which every n8n 1.x workflow records; one without the
 * setting (n8n before 1.0) gets it. n8n's legacy order (v0) is not run here: refused, not run in
 * a different order.
 */
function n8nExecutionOrder(settings: Record<string, unknown>): void {
  const order = settings.executionOrder ?? 'v1';
  if (order !== 'v1') {
    throw workflowInvalid(
      `The workflow uses n8n's legacy execution order "${String(order)}", which is not supported: in n8n open the workflow's settings, choose the execution order "v1 (recommended)" and export it again`,
      { reason: 'unsupported_execution_order', executionOrder: order },
    );
  }
  settings.executionOrder = 'v1';
}

/** Every n8n type an import accepts: those run natively, then those mapped to an engine node. */
export function supportedN8nTypes(): string[] {
  const native = [...RUN_NATIVELY.entries()].filter(([, d]) => d.n8n).map(([t]) => t);
  const mapped = Object.keys(MAPPERS)
    .map((k) => `${N8N_PREFIXES[0]}${k}`)
    .filter((t) => !native.includes(t));
  return [...native, ...mapped];
}

class Unsupported extends Error {}

// ---------------------------------------------------------------------------------------------
// Values and expressions

/** n8n marks expression values with a leading `=`; ours are recognised by `{{ }}` alone. */
function value(v: unknown): unknown {
  if (typeof v === 'string') return v.startsWith('=') ? v.slice(1) : v;
  if (Array.isArray(v)) return v.map(value);
  if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, value(x)]));
  return v;
}

// ---------------------------------------------------------------------------------------------
// Node by node

function legacyCron(params: Params): string {
  const item = objectOf(listOf(objectOf(params.triggerTimes).item)[0]);
  switch (item.mode ?? 'everyDay') {
    case 'everyMinute':
      return '* * * * *';
    case 'everyHour':
      return `${item.minute ?? 0} * * * *`;
    case 'everyDay':
      return `${item.minute ?? 0} ${item.hour ?? 0} * * *`;
    case 'everyWeek':
      return `${item.minute ?? 0} ${item.hour ?? 0} * * ${item.weekday ?? 1}`;
    case 'everyMonth':
      return `${item.minute ?? 0} ${item.hour ?? 0} ${item.dayOfMonth ?? 1} * *`;
    case 'custom':
      return String(item.cronExpression ?? '');
    default:
      throw new Unsupported(`the cron mode "${item.mode}" is not supported`);
  }
}

function entries(list: unknown): Params {
  const out: Params = {};
  for (const e of listOf(list)) if (isPlainObject(e) && typeof e.name === 'string' && e.name) out[e.name] = value(e.value);
  return out;
}

function jsonParam(v: unknown): unknown {
  const x = value(v);
  if (typeof x !== 'string' || x.includes('{{')) return x;
  try {
    return JSON.parse(x);
  } catch {
    return x;
  }
}

function httpRequest(params: Params, node: Params): ReturnType<Mapper> {
  const version = Number(node.typeVersion ?? 1);
  const options = objectOf(params.options);
  const out: Params = { url: value(params.url ?? '') };
  if (version < 3) {
    out.method = params.requestMethod ?? 'GET';
    if (params.jsonParameters) {
      if (params.bodyParametersJson !== undefined) out.body = jsonParam(params.bodyParametersJson);
      if (params.queryParametersJson !== undefined) out.query = jsonParam(params.queryParametersJson);
      if (params.headerParametersJson !== undefined) out.headers = jsonParam(params.headerParametersJson);
    } else {
      const body = entries(objectOf(params.bodyParametersUi).parameter);
      const query = entries(objectOf(params.queryParametersUi).parameter);
      const headers = entries(objectOf(params.headerParametersUi).parameter);
      if (Object.keys(body).length) out.body = body;
      if (Object.keys(query).length) out.query = query;
      if (Object.keys(headers).length) out.headers = headers;
    }
    if (options.fullResponse === true) out.fullResponse = true;
    if (options.ignoreResponseCode === true) out.ignoreHttpErrors = true;
    if (params.responseFormat === 'file') {
      out.responseFormat = 'file';
      out.outputPropertyName = value(params.dataPropertyName ?? 'data');
    }
    if (params.sendBinaryData === true) {
      // "data", or for a multipart body "field:key" pairs separated by commas.
      const spec = String(params.binaryPropertyName ?? 'data');
      if (options.bodyContentType === 'multipart-form-data' || spec.includes(':')) {
        out.multipart = [
          ...Object.entries(out.body && isPlainObject(out.body) ? out.body : {}).map(([name, v]) => ({ name, value: v })),
          ...spec.split(',').map((pair) => {
            const [name, key] = pair.includes(':') ? pair.split(':') : [pair, pair];
            return { name: name!.trim(), binary: key!.trim() };
          }),
        ];
      } else out.bodyBinary = spec.trim();
      delete out.body;
    }
  } else {
    out.method = params.method ?? 'GET';
    if (params.sendQuery) out.query = params.specifyQuery === 'json' ? jsonParam(params.jsonQuery) : entries(objectOf(params.queryParameters).parameters);
    if (params.sendHeaders)
      out.headers = params.specifyHeaders === 'json' ? jsonParam(params.jsonHeaders) : entries(objectOf(params.headerParameters).parameters);
    if (params.sendBody) {
      const type = params.contentType ?? 'json';
      if (type === 'raw') {
        out.body = value(params.body ?? '');
        if (params.rawContentType) out.headers = { ...(out.headers ?? {}), 'Content-Type': params.rawContentType };
      } else if (type === 'json') {
        out.body = params.specifyBody === 'json' ? jsonParam(params.jsonBody) : entries(objectOf(params.bodyParameters).parameters);
      } else if (type === 'multipart-form-data') {
        out.multipart = listOf(objectOf(params.bodyParameters).parameters)
          .map(objectOf)
          .filter((e) => typeof e.name === 'string' && e.name)
          .map((e) =>
            e.parameterType === 'formBinaryData' ? { name: e.name, binary: value(e.inputDataFieldName ?? 'data') } : { name: e.name, value: value(e.value) },
          );
      } else if (type === 'binaryData') {
        out.bodyBinary = value(params.inputDataFieldName ?? 'data');
      } else if (type === 'form-urlencoded') {
        const form = entries(objectOf(params.bodyParameters).parameters);
        out.body = Object.entries(form)
          .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
          .join('&');
        out.headers = { ...(out.headers ?? {}), 'Content-Type': 'application/x-www-form-urlencoded' };
      } else {
        throw new Unsupported(`the body content type "${type}" is not supported`);
      }
    }
    const response = objectOf(objectOf(options.response).response);
    if (response.fullResponse === true) out.fullResponse = true;
    if (response.neverError === true) out.ignoreHttpErrors = true;
    if (response.responseFormat === 'file') {
      out.responseFormat = 'file';
      out.outputPropertyName = value(response.outputPropertyName ?? 'data');
    }
  }
  if (typeof options.timeout === 'number') out.timeout = options.timeout;
  const auth = httpAuthentication(params, version, node.credentials);
  if (auth) {
    if (!isPlainObject(objectOf(node.credentials)[auth])) throw new Unsupported(`the authentication ${auth} names no ${auth} credential (credentials.${auth})`);
    out.authentication = auth;
  }
  return { type: 'engine.httpRequest', parameters: out };
}

/** v1 and v2 name their authentication; v3 and later name a credential type, generic or "predefined". */
const LEGACY_AUTH: Record<string, string> = { headerAuth: 'httpHeaderAuth', queryAuth: 'httpQueryAuth', basicAuth: 'httpBasicAuth', oAuth2: 'oAuth2Api' };

/** The credential type an HTTP Request node authenticates with, or undefined for none; refused when it has no equivalent here. */
function httpAuthentication(params: Params, version: number, credentials: unknown): string | undefined {
  const auth = params.authentication ?? 'none';
  if (auth === 'none') return undefined;
  let type: unknown;
  if (version < 3) {
    type = ownEntry(LEGACY_AUTH, auth);
    if (!type) throw new Unsupported(`the authentication "${auth}" is not supported (${Object.keys(LEGACY_AUTH).join(', ')} are)`);
  } else if (auth === 'genericCredentialType' || auth === 'predefinedCredentialType') {
    type = auth === 'genericCredentialType' ? params.genericAuthType : params.nodeCredentialType;
    // A hand-edited export without the type: the one credential the node names tells it.
    const named = isPlainObject(credentials) ? Object.keys(credentials) : [];
    if ((type === undefined || type === '') && named.length === 1) type = named[0];
  } else throw new Unsupported(`the authentication "${auth}" is not supported`);
  if (!(HTTP_AUTH_TYPES as readonly unknown[]).includes(type)) {
    throw new Unsupported(`the credential type "${String(type)}" is not supported: HTTP requests authenticate with ${HTTP_AUTH_TYPES.join(', ')}`);
  }
  return type as string;
}

const MAPPERS: Record<string, Mapper> = {
  manualTrigger: () => ({ type: 'engine.manualTrigger', parameters: {} }),
  start: () => ({ type: 'engine.manualTrigger', parameters: {} }),
  executeWorkflowTrigger: () => ({ type: 'engine.manualTrigger', parameters: {} }),
  // The workflow named as another's settings.errorWorkflow starts with what n8n's Error Trigger emits (executions/children.ts).
  errorTrigger: () => ({ type: 'engine.manualTrigger', parameters: {} }),
  webhook: (p) => {
    const kept: Params = {};
    // Its options and v1's binaryData say where uploaded files go (webhooks/files.ts); its answer settings how the caller is answered.
    for (const k of [
      'path',
      'httpMethod',
      'responseMode',
      'responseCode',
      'responseData',
      'responseBinaryPropertyName',
      'options',
      'binaryData',
      'binaryPropertyName',
    ])
      if (p[k] !== undefined) kept[k] = p[k];
    return { type: 'engine.webhook', parameters: kept };
  },
  cron: (p) => ({ type: 'engine.scheduleTrigger', parameters: { cron: legacyCron(p) } }),
  function: (p) => ({ type: 'engine.code', parameters: { code: String(p.functionCode ?? 'return items;') } }),
  functionItem: (p) => ({ type: 'engine.code', parameters: { code: String(p.functionCode ?? 'return item;'), mode: 'runOnceForEachItem' } }),
  httpRequest,
};
