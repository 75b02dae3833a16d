import { setOwn } from '../../../kernel/names';
import { AppError, errors, type FieldError } from '../../../kernel/errors';
import {
  ON_ERROR,
  versionOf,
  workflowInvalid,
  type Connection,
  type Connections,
  type WorkflowDefinition,
  type WorkflowNode,
  type WorkflowSettings,
  validTimezone,
  isPlainObject,
  objectOf,
  type NodeDefinition,
} from '../nodes';
import { NODE_TYPES, nodeType } from './catalog';

/**
 * A workflow definition (n8n's format): nodes by unique name, and connections from a
 * node's outputs to other nodes' inputs. Everything is checked here before anything is stored:
 * shapes (validation_error, by field), then meaning (WORKFLOW_INVALID with details naming the
 * node): unknown type, duplicate name, a connection to a missing node, output or input, a
 * required parameter missing, a cycle.
 */

export const MAX_EXECUTION_TIMEOUT_S = 86_400;
const MAX_NODES = 500;

/** Checks and normalises nodes, connections and settings; throws validation_error or WORKFLOW_INVALID. */
export function validateDefinition(input: { nodes: unknown; connections: unknown; settings?: unknown }): WorkflowDefinition {
  const problems: FieldError[] = [];
  if (!Array.isArray(input.nodes)) throw errors.field('nodes', 'must be a list of nodes');
  if (input.nodes.length > MAX_NODES) throw errors.field('nodes', `at most ${MAX_NODES} nodes`);
  const nodes = input.nodes.map((raw, i) => normaliseNode(raw, `nodes.${i}`, problems));
  const connections = input.connections === undefined || input.connections === null ? {} : input.connections;
  if (!isPlainObject(connections)) problems.push({ field: 'connections', message: 'must be an object: node name to {main: [[{node, type, index}]]}' });
  const settings = input.settings === undefined || input.settings === null ? {} : input.settings;
  if (!isPlainObject(settings)) problems.push({ field: 'settings', message: 'must be an object' });
  else checkSettings(settings, problems);
  if (problems.length) throw errors.validation(problems);

  const byName = new Map<string, { node: WorkflowNode; def: NodeDefinition }>();
  for (const node of nodes) {
    const def = nodeType(node.type);
    if (!def) {
      throw workflowInvalid(`Node "${node.name}" has an unknown type "${node.type}"`, {
        reason: 'unknown_node_type',
        node: node.name,
        type: node.type,
        known: knownTypes(),
      });
    }
    if (byName.has(node.name)) {
      throw workflowInvalid(`Two nodes are named "${node.name}"`, { reason: 'duplicate_node_name', node: node.name });
    }
    byName.set(node.name, { node, def });
  }
  for (const { node, def } of byName.values()) {
    const version = versionOf(node);
    if (def.n8n) checkN8n(node, def.n8n, version);
    const missing = def.missing?.(node.parameters, version) ?? [];
    if (missing.length) {
      throw workflowInvalid(`Node "${node.name}" is missing required parameters: ${missing.join(', ')}`, {
        node: node.name,
        nodeType: node.type,
        missingParameters: missing,
      });
    }
    const bad = def.invalid?.(node.parameters, version);
    if (bad) {
      const message = `Node "${node.name}": parameter ${bad.parameter} ${bad.message}`;
      const details = { reason: 'invalid_parameter', node: node.name, nodeType: node.type, parameter: bad.parameter };
      throw bad.code === 'SCHEDULE_INVALID' ? new AppError('SCHEDULE_INVALID', message, details) : workflowInvalid(message, details);
    }
  }
  const normalised = checkConnections(connections as Record<string, unknown>, byName);
  const definition = { nodes, connections: normalised, settings: settings as WorkflowSettings };
  compile(definition); // rejects cycles
  return definition;
}

/** Outputs of a node: its type's, plus n8n's error output when failed items leave by their own. */
export function outputCount(node: WorkflowNode, def: NodeDefinition): number {
  return (def.outputs?.(node.parameters, versionOf(node)) ?? 1) + (node.onError === 'continueErrorOutput' ? 1 : 0);
}

/** An n8n node at a version and with options this engine runs exactly as n8n does, or WORKFLOW_INVALID saying what is missing. */
function checkN8n(node: WorkflowNode, n8n: NonNullable<NodeDefinition['n8n']>, version: number): void {
  if (!n8n.versions.includes(version)) {
    throw workflowInvalid(
      `Node "${node.name}" is ${node.type} version ${version}; versions ${n8n.versions.join(', ')} are supported (re-create the node in n8n at one of them, or ask for version ${version})`,
      { reason: 'unsupported_version', node: node.name, type: node.type, typeVersion: version, supportedVersions: [...n8n.versions] },
    );
  }
  const gap = n8n.unsupported?.(node.parameters, version);
  if (gap) {
    throw workflowInvalid(`Node "${node.name}" (${node.type} ${version}): ${gap.message}`, {
      reason: 'unsupported_option',
      node: node.name,
      type: node.type,
      typeVersion: version,
      option: gap.option,
    });
  }
}

function knownTypes(): string[] {
  return [...NODE_TYPES.keys()];
}

function normaliseNode(raw: unknown, field: string, problems: FieldError[]): WorkflowNode {
  if (!isPlainObject(raw)) {
    problems.push({ field, message: 'must be an object {name, type, position, parameters}' });
    return { name: '', type: '', position: [0, 0], parameters: {} };
  }
  const str = (key: string, max: number, required = false) => {
    const v = raw[key];
    if (v === undefined || v === null) {
      if (required) problems.push({ field: `${field}.${key}`, message: 'is required' });
      return undefined;
    }
    if (typeof v !== 'string' || (required && v.trim() === '') || v.length > max) {
      problems.push({ field: `${field}.${key}`, message: `must be a${required ? ' non-empty' : ''} string of at most ${max} characters` });
      return undefined;
    }
    return v;
  };
  const bool = (key: string) => {
    const v = raw[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') problems.push({ field: `${field}.${key}`, message: 'must be a boolean' });
    return v === true;
  };
  const num = (key: string, min: number, max: number, integer = false) => {
    const v = raw[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (integer && !Number.isInteger(v))) {
      problems.push({ field: `${field}.${key}`, message: `must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}` });
      return undefined;
    }
    return v;
  };
  const oneOf = <T extends string>(key: string, allowed: readonly T[]) => {
    const v = raw[key];
    if (v === undefined || v === null) return undefined;
    if (!allowed.includes(v as T)) problems.push({ field: `${field}.${key}`, message: `must be one of ${allowed.join(', ')}` });
    return v as T;
  };
  const node: WorkflowNode = {
    name: str('name', 128, true) ?? '',
    type: str('type', 200, true) ?? '',
    position: [0, 0],
    parameters: {},
  };
  if (raw.position !== undefined && raw.position !== null) {
    const p = raw.position;
    if (!Array.isArray(p) || p.length !== 2 || !p.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      problems.push({ field: `${field}.position`, message: 'must be [x, y] numbers' });
    } else node.position = [p[0], p[1]];
  }
  if (raw.parameters !== undefined && raw.parameters !== null) {
    if (!isPlainObject(raw.parameters)) problems.push({ field: `${field}.parameters`, message: 'must be an object' });
    else node.parameters = raw.parameters;
  }
  const optional: Partial<WorkflowNode> = {
    id: raw.id === undefined || raw.id === null ? undefined : String(raw.id).slice(0, 200),
    typeVersion: num('typeVersion', 0, 1000),
    notes: str('notes', 10_000),
    disabled: bool('disabled'),
    retryOnFail: bool('retryOnFail'),
    maxTries: num('maxTries', 1, 10, true),
    waitBetweenTries: num('waitBetweenTries', 0, 300_000, true),
    continueOnFail: bool('continueOnFail'),
    timeout: num('timeout', 0.001, MAX_EXECUTION_TIMEOUT_S),
    onError: oneOf('onError', ON_ERROR),
    alwaysOutputData: bool('alwaysOutputData'),
    executeOnce: bool('executeOnce'),
  };
  for (const [k, v] of Object.entries(optional)) if (v !== undefined) (node as unknown as Record<string, unknown>)[k] = v;
  if (raw.credentials !== undefined && raw.credentials !== null) {
    const refs = raw.credentials;
    const ok =
      isPlainObject(refs) &&
      Object.values(refs).every(
        (r) => isPlainObject(r) && typeof r.id === 'string' && r.id.length <= 200 && typeof r.name === 'string' && r.name.length <= 200,
      );
    if (!ok) problems.push({ field: `${field}.credentials`, message: 'must be an object: credential type to {id, name} of a stored credential' });
    else if (Object.keys(refs).length)
      node.credentials = Object.fromEntries(Object.entries(refs).map(([t, r]) => [t, { id: String(objectOf(r).id), name: String(objectOf(r).name) }]));
  }
  return node;
}

function checkSettings(s: Record<string, unknown>, problems: FieldError[]): void {
  if (s.timezone !== undefined && !validTimezone(s.timezone)) problems.push({ field: 'settings.timezone', message: 'must be an IANA time zone' });
  if (s.errorWorkflow !== undefined && (typeof s.errorWorkflow !== 'string' || s.errorWorkflow.length > 200)) {
    problems.push({ field: 'settings.errorWorkflow', message: 'must be a workflow id' });
  }
  const t = s.executionTimeout;
  if (t !== undefined && !(typeof t === 'number' && Number.isFinite(t) && t > 0 && t <= MAX_EXECUTION_TIMEOUT_S)) {
    problems.push({ field: 'settings.executionTimeout', message: `must be seconds from 1 to ${MAX_EXECUTION_TIMEOUT_S}` });
  }
}

function checkConnections(raw: Record<string, unknown>, byName: Map<string, { node: WorkflowNode; def: NodeDefinition }>): Connections {
  const out: Connections = {};
  for (const [source, value] of Object.entries(raw)) {
    const from = byName.get(source);
    if (!from) {
      throw workflowInvalid(`A connection starts at "${source}", which is not a node`, { reason: 'unknown_connection_source', node: source });
    }
    if (!isPlainObject(value)) {
      throw workflowInvalid(`Connections of "${source}" must be {main: [[{node, type, index}]]}`, { reason: 'invalid_connection', node: source });
    }
    for (const kind of Object.keys(value)) {
      if (kind !== 'main') {
        throw workflowInvalid(`Connections of "${source}" use the type "${kind}"; only "main" exists`, {
          reason: 'invalid_connection_type',
          node: source,
          type: kind,
        });
      }
    }
    const main = value.main ?? [];
    if (!Array.isArray(main)) throw workflowInvalid(`Connections of "${source}" must be {main: [[…]]}`, { reason: 'invalid_connection', node: source });
    const outputs = outputCount(from.node, from.def);
    const lists: Connection[][] = [];
    main.forEach((targets, output) => {
      const list = targets ?? [];
      if (!Array.isArray(list)) throw workflowInvalid(`Output ${output} of "${source}" must be a list`, { reason: 'invalid_connection', node: source, output });
      if (list.length && output >= outputs) {
        throw workflowInvalid(`"${source}" (${from.node.type}) has no output ${output}`, { reason: 'invalid_output', node: source, output, outputs });
      }
      lists.push(
        list.map((c: unknown) => {
          if (!isPlainObject(c) || typeof c.node !== 'string') {
            throw workflowInvalid(`A connection of "${source}" must be {node, type, index}`, { reason: 'invalid_connection', node: source, output });
          }
          const to = byName.get(c.node);
          if (!to) {
            throw workflowInvalid(`"${source}" connects to "${c.node}", which is not a node`, {
              reason: 'unknown_connection_target',
              node: source,
              target: c.node,
            });
          }
          if (c.type !== undefined && c.type !== 'main') {
            throw workflowInvalid(`The connection from "${source}" to "${c.node}" has type "${String(c.type)}"; only "main" exists`, {
              reason: 'invalid_connection_type',
              node: source,
              target: c.node,
            });
          }
          const index = c.index === undefined ? 0 : c.index;
          const inputs = to.def.trigger ? 0 : (to.def.inputs?.(to.node.parameters, versionOf(to.node)) ?? 1);
          if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= inputs) {
            throw workflowInvalid(`"${c.node}" (${to.node.type}) has no input ${String(index)}`, {
              reason: 'invalid_input',
              node: source,
              target: c.node,
              input: index,
              inputs,
            });
          }
          return { node: c.node, type: 'main' as const, index: index as number };
        }),
      );
    });
    while (lists.length && lists[lists.length - 1]!.length === 0) lists.pop();
    // Keyed by node names, which may be any text (`__proto__` too).
    if (lists.length) setOwn(out, source, { main: lists });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The graph the executor walks

export interface Edge {
  node: string;
  output: number;
  input: number;
}

export interface CompiledWorkflow {
  definition: WorkflowDefinition;
  /**
   * n8n's executionOrder v1 (`settings.executionOrder === 'v1'`, what n8n 1.x exports): nodes run
   * from an execution stack, once per arriving branch, and connections may loop (loop-v1.ts).
   */
  v1: boolean;
  /**
   * Every node in an order where each comes after all the nodes that feed it (v1: the nodes in a
   * loop come last, in definition order).
   */
  order: string[];
  byName: Map<string, WorkflowNode>;
  /** Per node, where its items come from. */
  incoming: Map<string, Edge[]>;
  /** Per node, where its items go. */
  outgoing: Map<string, Edge[]>;
  /**
   * v1: per node, its outgoing edges in the order they are put on the front of the execution
   * stack (n8n: the target lowest and then rightmost on the canvas first, so that the top-left
   * one ends up in front and runs first).
   */
  scheduling: Map<string, Edge[]>;
  /** v1: per node, how many inputs its connections use (the highest connected input + 1). */
  inputSlots: Map<string, number>;
}

export function isV1(settings: WorkflowSettings): boolean {
  return settings.executionOrder === 'v1';
}

const compiledCache = new WeakMap<WorkflowDefinition, CompiledWorkflow>();

export function compile(definition: WorkflowDefinition): CompiledWorkflow {
  const cached = compiledCache.get(definition);
  if (cached) return cached;
  const byName = new Map(definition.nodes.map((n) => [n.name, n]));
  const incoming = new Map<string, Edge[]>(definition.nodes.map((n) => [n.name, []]));
  const outgoing = new Map<string, Edge[]>(definition.nodes.map((n) => [n.name, []]));
  for (const [source, { main }] of Object.entries(definition.connections)) {
    main.forEach((targets, output) => {
      for (const c of targets) {
        incoming.get(c.node)?.push({ node: source, output, input: c.index });
        outgoing.get(source)?.push({ node: c.node, output, input: c.index });
      }
    });
  }
  // Kahn's algorithm; ties broken by the nodes' order in the definition (stable, predictable).
  const position = new Map(definition.nodes.map((n, i) => [n.name, i]));
  const remaining = new Map(definition.nodes.map((n) => [n.name, new Set(incoming.get(n.name)!.map((e) => e.node)).size]));
  const ready = definition.nodes.filter((n) => remaining.get(n.name) === 0).map((n) => n.name);
  const order: string[] = [];
  while (ready.length) {
    ready.sort((a, b) => position.get(a)! - position.get(b)!);
    const name = ready.shift()!;
    order.push(name);
    for (const target of new Set(outgoing.get(name)!.map((e) => e.node))) {
      const left = remaining.get(target)! - 1;
      remaining.set(target, left);
      if (left === 0) ready.push(target);
    }
  }
  const v1 = isV1(definition.settings);
  if (order.length !== definition.nodes.length) {
    const inCycle = definition.nodes.map((n) => n.name).filter((n) => !order.includes(n));
    // n8n's v1 order runs loops (Split In Batches, a loop back to an earlier node): the executor guards against endless ones.
    if (v1) order.push(...inCycle);
    else
      throw workflowInvalid(`The connections form a loop through ${inCycle.map((n) => `"${n}"`).join(', ')}; workflows must not loop`, {
        reason: 'cycle',
        nodes: inCycle,
      });
  }
  const scheduling = new Map<string, Edge[]>();
  const inputSlots = new Map<string, number>();
  if (v1) {
    for (const n of definition.nodes) {
      scheduling.set(n.name, schedulingOrder(outgoing.get(n.name)!, byName));
      inputSlots.set(
        n.name,
        incoming.get(n.name)!.reduce((max, e) => Math.max(max, e.input + 1), 0),
      );
    }
  }
  const compiled = { definition, v1, order, byName, incoming, outgoing, scheduling, inputSlots };
  compiledCache.set(definition, compiled);
  return compiled;
}

/** n8n sorts a node's targets bottom-to-top, then right-to-left, and puts each on the front of the stack in turn. */
function schedulingOrder(edges: Edge[], byName: Map<string, WorkflowNode>): Edge[] {
  const at = (e: Edge) => byName.get(e.node)!.position;
  return [...edges].sort((a, b) => at(b)[1] - at(a)[1] || at(b)[0] - at(a)[0]);
}

/** The nodes reachable from `start` (itself included). */
export function descendants(compiled: CompiledWorkflow, start: string): Set<string> {
  const seen = new Set<string>([start]);
  const stack = [start];
  while (stack.length) {
    for (const e of compiled.outgoing.get(stack.pop()!) ?? []) {
      if (!seen.has(e.node)) {
        seen.add(e.node);
        stack.push(e.node);
      }
    }
  }
  return seen;
}

export function isTrigger(node: WorkflowNode): boolean {
  return nodeType(node.type)?.trigger === true;
}
