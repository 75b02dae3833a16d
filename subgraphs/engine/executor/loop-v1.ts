import { versionOf, type WorkflowNode, type ItemLineage, type PairedItemData, type SourceData } from '../nodes';
import { type Edge } from './compile';
import type { LogEntry, NodeRunner, Progress, RunOutcome, RunRequest, StoredRun, V1RunContext } from './types';
import type { Item } from '../expressions';
import { nodeType } from './catalog';
import { BUDGET_VARIABLES, BudgetExceeded, Yielder } from '../nodes';

/**
 * n8n's execution order v1 (what n8n 1.x exports), with loops: an execution stack where the
 * targets of a run's outputs go to the front, top-left (canvas position) first, so branches are
 * followed depth first; a node with several inputs (Merge) waits for data on each for the same
 * run, and runs with what it has once the stack is empty. Resume, retry and re-runs replay the
 * algorithm from the start, taking runs already stored (`RunRequest.stored`) with their node
 * context from storage instead of running them, so a wait inside a loop resumes in place.
 */

/** Steps a paired item is followed back (loops make chains long, not endless). */
const MAX_LINEAGE_STEPS = 100_000;

/** Thrown inside the loop when the execution's signal is aborted (both orders). */
export class Aborted extends Error {
  constructor(readonly reason: unknown) {
    super('aborted');
  }
}

interface StackEntry {
  node: string;
  /** Items by input; null: nothing arrived at that input. */
  inputs: (Item[] | null)[];
  sources: (SourceData | null)[];
}

/** One run of a node, kept for the paired items of the runs after it. */
interface RunRecord {
  sources: readonly (SourceData | null)[];
  outputs: Item[][];
}

type Step = RunOutcome | undefined;

export class V1Execution {
  private readonly stack: StackEntry[] = [];
  /** Nodes with several inputs waiting for the rest of their data (n8n's waitingExecution), in arrival order. */
  private readonly waiting = new Map<string, StackEntry[]>();
  private readonly runs = new Map<string, RunRecord[]>();
  private readonly states = new Map<string, Record<string, unknown>>();
  /** The last run's items of each node, all outputs (ExpressionData.nodes). */
  private readonly seen = new Map<string, Item[]>();
  private readonly stored: ReadonlyMap<string, readonly (StoredRun | undefined)[]>;
  private readonly maxRuns: number;
  private ancestorCache?: Map<string, Set<string>>;
  private lastNode: string | null = null;
  private executed = 0;
  private replied = false;

  constructor(
    private readonly executor: NodeRunner,
    private readonly req: RunRequest,
  ) {
    this.stored = req.stored ?? new Map([...(req.done ?? [])].map(([name, output]) => [name, [{ output }]]));
    this.maxRuns = req.budgets?.maxLoopTurns ?? Number.POSITIVE_INFINITY;
  }

  async run(): Promise<RunOutcome> {
    this.seed();
    const yielder = new Yielder();
    try {
      while (this.stack.length) {
        // A loop of in-process nodes is a chain of resolved promises: let timers and I/O in now and then.
        await yielder.maybe();
        if (this.req.signal.aborted) throw new Aborted(this.req.signal.reason);
        const stop = await this.step(this.stack.shift()!);
        if (stop) return stop;
        if (!this.stack.length && this.waiting.size) this.releaseWaiting();
      }
    } catch (err) {
      if (err instanceof Aborted) return { status: 'aborted', reason: err.reason, nodesExecuted: this.executed };
      if (err instanceof BudgetExceeded && !this.req.nested) {
        this.req.hooks?.log?.({ at: new Date(), level: 'error', node: err.node?.name, message: err.message });
        return { status: 'error', error: err.info(), nodesExecuted: this.executed };
      }
      throw err;
    }
    const last = this.lastNode;
    const items = last ? (this.seen.get(last) ?? []).map((i) => i.json) : [];
    return { status: 'success', result: { lastNode: last, items, nodesExecuted: this.executed } };
  }

  /** The start node with the execution's items; without one, every node without inputs, top-left first. */
  private seed(): void {
    const { compiled, startNode, input } = this.req;
    const starts =
      startNode !== null
        ? [startNode]
        : compiled.definition.nodes
            .filter((n) => compiled.incoming.get(n.name)!.length === 0)
            .sort((a, b) => a.position[1] - b.position[1] || a.position[0] - b.position[0])
            .map((n) => n.name);
    for (const node of starts) this.stack.push({ node, inputs: [input], sources: [null] });
  }

  /** One stack entry: a stored run taken as it was, or the node run; then its targets scheduled. */
  private async step(entry: StackEntry): Promise<Step> {
    const node = this.req.compiled.byName.get(entry.node)!;
    const runIndex = this.runs.get(node.name)?.length ?? 0;
    if (runIndex >= this.maxRuns) this.endless(node);
    let inputs = stamped(entry.inputs, inputCount(node));
    if (!this.isStart(entry) && inputs.every((list) => list.length === 0)) return undefined;

    const stored = this.stored.get(node.name)?.[runIndex];
    let outputs: Item[][];
    if (stored) {
      outputs = stored.output;
      if (stored.state) this.states.set(node.name, structuredClone(stored.state));
    } else if (node.disabled) {
      outputs = [inputs[0] ?? []];
    } else {
      if (node.executeOnce) inputs = inputs.map((list) => list.slice(0, 1));
      const ran = await this.execute(node, runIndex, inputs, entry.sources);
      if (!Array.isArray(ran)) return ran;
      outputs = ran;
    }
    this.record(node.name, entry.sources, outputs);
    this.schedule(node.name, runIndex, outputs);
    return undefined;
  }

  /** Runs the node (shared runNode); its outputs, or how the execution stops (failure, wait). */
  private async execute(node: WorkflowNode, runIndex: number, inputs: Item[][], sources: (SourceData | null)[]): Promise<Item[][] | RunOutcome> {
    const { req } = this;
    const log = (level: LogEntry['level'], message: string, name?: string) => req.hooks?.log?.({ at: new Date(), level, node: name, message });
    const state = this.states.get(node.name) ?? {};
    const context: V1RunContext = { state, inputSource: sources, lineage: this.lineage(runIndex, sources) };
    await req.hooks?.beforeNode?.(node, this.progress(node.name));
    const outcome = await this.executor.runNode(node, inputs, this.seen, req, log, context);
    if (outcome.kind === 'failed') {
      await req.hooks?.afterNode?.(outcome.run, this.progress(node.name));
      return { status: 'error', error: outcome.error, nodesExecuted: this.executed + 1 };
    }
    const { result, run } = outcome;
    if (result.wait) {
      log('info', result.wait.webhook ? 'Waiting for the resume webhook' : `Waiting until ${result.wait.until!.toISOString()}`, node.name);
      return {
        status: 'waiting',
        node: node.name,
        runIndex,
        items: inputs[0] ?? [],
        until: result.wait.until,
        webhook: result.wait.webhook,
        ...(result.wait.resume ? { resume: result.wait.resume } : {}),
        nodesExecuted: this.executed,
      };
    }
    if (result.reply && !this.replied) {
      this.replied = true;
      req.hooks?.reply?.(result.reply);
    }
    const outputs = assignPairedItems(run.output!, inputs);
    run.output = outputs;
    // The live context, not a copy (a loop's remaining items would be copied every turn): the
    // runner writes a node's context once per write, with the node's latest run (executions/in-flight.ts).
    if (Object.keys(state).length) {
      this.states.set(node.name, state);
      run.state = state;
    }
    this.executed++;
    await req.hooks?.afterNode?.(run, this.progress(null));
    return outputs;
  }

  private record(name: string, sources: (SourceData | null)[], outputs: Item[][]): void {
    const list = this.runs.get(name);
    if (list) list.push({ sources, outputs });
    else this.runs.set(name, [{ sources, outputs }]);
    this.seen.set(name, outputs.length === 1 ? outputs[0]! : outputs.flat());
    this.lastNode = name;
  }

  /** n8n: only outputs with items run what they connect to; each target goes on the front of the stack. */
  private schedule(name: string, runIndex: number, outputs: Item[][]): void {
    for (const edge of this.req.compiled.scheduling.get(name)!) {
      const items = outputs[edge.output];
      if (items?.length) this.arrive(edge, { previousNode: name, previousNodeOutput: edge.output, previousNodeRun: runIndex }, items);
    }
  }

  /** Items arriving at a target's input: it goes on the stack, or waits for its other inputs. */
  private arrive(edge: Edge, source: SourceData, items: Item[]): void {
    const slots = this.req.compiled.inputSlots.get(edge.node)!;
    if (slots <= 1) {
      this.stack.unshift({ node: edge.node, inputs: [items], sources: [source] });
      return;
    }
    let list = this.waiting.get(edge.node);
    if (!list) this.waiting.set(edge.node, (list = []));
    // The earliest waiting run that still misses this input takes the data; else a new one.
    let entry = list.find((w) => w.inputs[edge.input] === null);
    if (!entry) {
      entry = { node: edge.node, inputs: new Array(slots).fill(null), sources: new Array(slots).fill(null) };
      list.push(entry);
    }
    entry.inputs[edge.input] = items;
    entry.sources[edge.input] = source;
    if (entry.inputs.every((data) => data !== null)) {
      list.splice(list.indexOf(entry), 1);
      if (!list.length) this.waiting.delete(edge.node);
      this.stack.unshift(entry);
    }
  }

  /**
   * Nothing is left on the stack: the first waiting node (in arrival order) that may run with
   * partial data does, with its earliest waiting run. Not one whose type requires every input,
   * nor one whose required inputs are missing, nor one fed (directly or not) by a node still waiting.
   */
  private releaseWaiting(): void {
    let names = [...this.waiting.keys()];
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const node = this.req.compiled.byName.get(name)!;
      const count = inputCount(node);
      const required = nodeType(node.type)?.requiredInputs?.(node.parameters, versionOf(node));
      if (Array.isArray(required) ? required.length === count : required === count) continue;
      const ancestors = this.ancestors(name);
      if ([...this.waiting.keys()].some((other) => other !== name && ancestors.has(other))) continue;
      const list = this.waiting.get(name)!;
      const entry = list[0]!;
      const arrived = entry.inputs.flatMap((data, index) => (data === null ? [] : [index]));
      if (required !== undefined && (Array.isArray(required) ? !required.every((r) => arrived.includes(r)) : arrived.length < required)) continue;
      list.shift();
      if (!list.length) this.waiting.delete(name);
      if (entry.inputs.some((data) => data?.length)) {
        this.stack.push(entry);
        return;
      }
      // Only empty data: dropped; look again from the first.
      names = [...this.waiting.keys()];
      i = -1;
    }
  }

  /** Every node that feeds `name`, directly or not (itself excluded, even in a loop). */
  private ancestors(name: string): Set<string> {
    this.ancestorCache ??= new Map();
    let found = this.ancestorCache.get(name);
    if (found) return found;
    found = new Set<string>();
    const todo = [name];
    while (todo.length) {
      for (const e of this.req.compiled.incoming.get(todo.pop()!) ?? []) {
        if (e.node !== name && !found.has(e.node)) {
          found.add(e.node);
          todo.push(e.node);
        }
      }
    }
    this.ancestorCache.set(name, found);
    return found;
  }

  private isStart(entry: StackEntry): boolean {
    return entry.sources.length === 1 && entry.sources[0] === null;
  }

  private endless(node: WorkflowNode): never {
    throw new BudgetExceeded(
      'maxLoopTurns',
      this.maxRuns,
      this.maxRuns + 1,
      `Node "${node.name}" ran ${this.maxRuns} times in this execution and was to run again: the execution's budget ${BUDGET_VARIABLES.maxLoopTurns} is ${this.maxRuns} runs of one node (the workflow may loop endlessly)`,
      undefined,
      node,
    );
  }

  private progress(current: string | null): Progress {
    return { nodesCompleted: this.runs.size, nodesTotal: this.req.compiled.order.length, currentNode: current };
  }

  /** The lineage a node run's expressions and context see. */
  private lineage(runIndex: number, sources: readonly (SourceData | null)[]): ItemLineage {
    return {
      runIndex,
      pairedItem: (node, itemIndex) => this.pairedItem(node, itemIndex, sources),
      context: (node) => this.states.get(node),
    };
  }

  /**
   * n8n's `$('node').item` for input item `itemIndex` of a run fed by `sources`: from the run
   * that fed it, the item at that index, then its paired item in the run that fed that one, and
   * so on until `node`. A broken chain (no paired item, a missing run) gives the item of `node`'s
   * last run at the same index.
   */
  pairedItem(node: string, itemIndex: number, sources: readonly (SourceData | null)[]): Item | undefined {
    const fallback = this.seen.get(node);
    if (!fallback) return undefined;
    let paired: PairedItemData | undefined = { item: itemIndex };
    let feeding = sources;
    for (let step = 0; paired && step < MAX_LINEAGE_STEPS; step++) {
      const source: SourceData | null | undefined = paired.sourceOverwrite ?? feeding[paired.input ?? 0];
      if (!source) break;
      const run = this.runs.get(source.previousNode)?.[source.previousNodeRun];
      const item = run?.outputs[source.previousNodeOutput]?.[paired.item];
      if (!run || !item) break;
      if (source.previousNode === node) return item;
      paired = pairedOf(item);
      feeding = run.sources;
    }
    return fallback[itemIndex];
  }
}

/** n8n's paired item as an object (n8n also writes a bare index, or a list of which the first counts). */
function pairedOf(item: Item): PairedItemData | undefined {
  const p = item.pairedItem as PairedItemData | PairedItemData[] | number | undefined;
  if (typeof p === 'number') return { item: p };
  if (Array.isArray(p)) return p[0];
  return p;
}

function inputCount(node: WorkflowNode): number {
  return nodeType(node.type)?.inputs?.(node.parameters, versionOf(node)) ?? 1;
}

/**
 * The items a run receives, each a copy marked with its own position (n8n's paired item
 * lineage): a node that passes items on passes their origin on with them. Missing inputs are empty.
 */
function stamped(inputs: (Item[] | null)[], count: number): Item[][] {
  const out: Item[][] = [];
  for (let k = 0; k < Math.max(count, inputs.length); k++) {
    const list = inputs[k] ?? [];
    out.push(list.map((item, i) => ({ ...item, pairedItem: k ? { item: i, input: k } : { item: i } })));
  }
  return out;
}

/**
 * n8n's automatic paired items for output items that have none: all from the one input item,
 * or item i from input item i when the node has one output with as many items as its one
 * input, or the first input item when many became one; otherwise none.
 */
function assignPairedItems(outputs: Item[][], inputs: Item[][]): Item[][] {
  const single = inputs.length === 1;
  const inCount = inputs[0]?.length ?? 0;
  const oneToMany = single && inCount === 1;
  const same = outputs.length === 1 && single && inCount === outputs[0]!.length;
  const manyToOne = outputs.length === 1 && outputs[0]!.length === 1 && single && inCount > 1;
  for (const list of outputs) {
    for (let i = 0; i < list.length; i++) {
      const item = list[i]!;
      if (item.pairedItem !== undefined) continue;
      if (oneToMany || manyToOne) item.pairedItem = { item: 0 };
      else if (same) item.pairedItem = { item: i };
      else return outputs;
    }
  }
  return outputs;
}
