import { SpanStatusCode } from '@opentelemetry/api';
import { AppError } from '../../../kernel/errors';
import { inSpan } from '../../../kernel/tracing';
import { compile, isTrigger, validateDefinition, type CompiledWorkflow } from './compile';
import { versionOf, type WorkflowNode, isPlainObject, NodeError, type NodeContext, type NodeDefinition, type NodeResult } from '../nodes';
import { ExpressionError, type ExpressionData, type ExpressionEngine, type Item } from '../expressions';
import { importWorkflow } from '../n8n';
import { nodeType } from './catalog';
import { SandboxError } from '../sandbox';
import { Aborted, V1Execution } from './loop-v1';
import { BudgetExceeded, checkItems, UNLIMITED, Yielder } from '../nodes';
import type { ExecutionErrorInfo, LogEntry, NodeRun, NodeRunner, NodeRunOutcome, Progress, RunOutcome, RunRequest, V1RunContext } from './types';

/**
 * The engine loop, with no database and no GraphQL (the execution service persists what the
 * hooks report). Nodes run one at a time in a topological order of the connections, so a merge
 * has all its inputs when its turn comes; a node none of whose inputs received items is skipped
 * with its branch. `done` carries outputs of nodes that already ran (resume, retry, re-run after
 * a lost worker), which are not run again. Workflows with `settings.executionOrder: 'v1'` run in
 * n8n's v1 order instead (loop-v1.ts).
 */

/** Which trigger starts an execution of this mode. */
export function chooseStart(compiled: CompiledWorkflow, mode: string): string | null {
  const nodes = compiled.definition.nodes.filter((n) => isTrigger(n));
  const of = (type: string) => nodes.find((n) => n.type === `engine.${type}`)?.name;
  const preferred = mode === 'webhook' || mode === 'test' ? of('webhook') : mode === 'schedule' ? of('scheduleTrigger') : of('manualTrigger');
  return preferred ?? of('manualTrigger') ?? nodes[0]?.name ?? null;
}

export class WorkflowExecutor implements NodeRunner {
  constructor(private readonly expressions: ExpressionEngine) {}

  async run(req: RunRequest): Promise<RunOutcome> {
    if (req.compiled.v1) return new V1Execution(this, req).run();
    const { compiled } = req;
    const done = new Map<string, Item[][]>(req.done ?? []);
    const skipped = new Set<string>();
    const seen = new Map<string, Item[]>();
    for (const [name, outputs] of done) seen.set(name, outputs.flat());
    let lastNode: string | null = null;
    let executed = 0;
    let replied = false;
    const total = compiled.order.length;
    const progress = (current: string | null): Progress => ({ nodesCompleted: done.size + skipped.size, nodesTotal: total, currentNode: current });
    const log = (level: LogEntry['level'], message: string, node?: string) => req.hooks?.log?.({ at: new Date(), level, node, message });
    const yielder = new Yielder();

    try {
      for (const name of compiled.order) {
        if (done.has(name)) continue;
        await yielder.maybe();
        if (req.signal.aborted) throw new Aborted(req.signal.reason);
        const node = compiled.byName.get(name)!;
        const incoming = compiled.incoming.get(name)!;
        let inputs: Item[][];
        if (name === req.startNode || (req.startNode === null && incoming.length === 0)) {
          inputs = [req.input];
        } else if (incoming.length === 0) {
          skipped.add(name);
          continue;
        } else {
          const def = nodeType(node.type);
          inputs = Array.from({ length: def?.inputs?.(node.parameters, versionOf(node)) ?? 1 }, () => [] as Item[]);
          for (const edge of incoming) {
            const items = done.get(edge.node)?.[edge.output];
            if (items?.length) inputs[edge.input] = inputs[edge.input]!.concat(items);
          }
          if (inputs.every((list) => list.length === 0)) {
            skipped.add(name);
            continue;
          }
        }
        if (node.disabled) {
          done.set(name, [inputs[0] ?? []]);
          seen.set(name, inputs[0] ?? []);
          continue;
        }
        if (node.executeOnce) inputs = inputs.map((list) => list.slice(0, 1));

        await req.hooks?.beforeNode?.(node, progress(name));
        const outcome = await this.runNode(node, inputs, seen, req, log);
        if (outcome.kind === 'failed') {
          await req.hooks?.afterNode?.(outcome.run, progress(name));
          return { status: 'error', error: outcome.error, nodesExecuted: executed + 1 };
        }
        const { result, run } = outcome;
        if (result.wait) {
          log('info', result.wait.webhook ? 'Waiting for the resume webhook' : `Waiting until ${result.wait.until!.toISOString()}`, name);
          return {
            status: 'waiting',
            node: name,
            runIndex: 0,
            items: inputs[0] ?? [],
            until: result.wait.until,
            webhook: result.wait.webhook,
            ...(result.wait.resume ? { resume: result.wait.resume } : {}),
            nodesExecuted: executed,
          };
        }
        if (result.reply && !replied) {
          replied = true;
          req.hooks?.reply?.(result.reply);
        }
        done.set(name, run.output!);
        seen.set(name, run.output!.flat());
        lastNode = name;
        executed++;
        await req.hooks?.afterNode?.(run, progress(null));
      }
    } catch (err) {
      if (err instanceof Aborted) return { status: 'aborted', reason: err.reason, nodesExecuted: executed };
      if (err instanceof BudgetExceeded && !req.nested) {
        log('error', err.message, err.node?.name);
        return { status: 'error', error: err.info(), nodesExecuted: executed };
      }
      throw err;
    }
    const last = lastNode ?? [...compiled.order].reverse().find((n) => done.has(n)) ?? null;
    const items = last ? (done.get(last) ?? []).flat().map((i) => i.json) : [];
    return { status: 'success', result: { lastNode: last, items, nodesExecuted: executed } };
  }

  /**
   * A workflow given as JSON (n8n's Execute Workflow with `source: parameter`): checked as an
   * import is, run to its end in memory as part of the calling node, the items of its last node.
   */
  async runInline(json: unknown, items: Item[], req: Pick<RunRequest, 'execution' | 'signal' | 'services' | 'budgets' | 'vars'>): Promise<Item[]> {
    const raw = isPlainObject(json) ? json : {};
    let compiled: CompiledWorkflow;
    try {
      compiled = compile(validateDefinition(importWorkflow(raw)));
    } catch (err) {
      if (err instanceof AppError) throw new NodeError(`The inline workflow is not valid: ${err.message}`, { code: err.code, ...err.details });
      throw err;
    }
    const outcome = await this.run({
      compiled,
      execution: { id: req.execution.id, mode: 'subworkflow', resumeUrl: req.execution.resumeUrl },
      workflow: { id: '', name: typeof raw.name === 'string' ? raw.name : 'Inline workflow', active: false, timezone: compiled.definition.settings.timezone },
      vars: req.vars,
      input: items.length ? items : [{ json: {} }],
      startNode: chooseStart(compiled, 'subworkflow'),
      signal: req.signal,
      services: req.services,
      // Part of the calling node's execution: its budgets, and a budget crossed in here fails that execution.
      budgets: req.budgets,
      nested: true,
    });
    switch (outcome.status) {
      case 'success':
        return outcome.result.items.map((j) => ({ json: j }));
      case 'error':
        throw new NodeError(`The inline workflow failed: ${outcome.error.message}`, outcome.error.details);
      case 'waiting':
        throw new NodeError('An inline workflow must finish without waiting');
      default:
        throw new Aborted(outcome.reason);
    }
  }

  /**
   * One node with its settings: attempts (retryOnFail), a time limit per attempt, continueOnFail.
   * Shared by both orders; `v1` (a v1 run's context, lineage and run index) only from loop-v1.ts.
   */
  /** One node run in a span of its own (a child of the execution's job span when tracing is on). */
  runNode(
    node: WorkflowNode,
    inputs: Item[][],
    seen: ReadonlyMap<string, Item[]>,
    req: RunRequest,
    log: (level: LogEntry['level'], message: string, node?: string) => void,
    v1?: V1RunContext,
  ): Promise<NodeRunOutcome> {
    const attributes = { 'workflow.node.name': node.name, 'workflow.node.type': node.type, 'workflow.node.run_index': v1?.lineage.runIndex ?? 0 };
    return inSpan(`workflow node ${node.type}`, { attributes }, async (span) => {
      const outcome = await this.runNodeTries(node, inputs, seen, req, log, v1);
      span?.setAttributes({ 'workflow.node.status': outcome.run.status, 'workflow.node.tries': outcome.run.tries });
      if (outcome.run.error) span?.setStatus({ code: SpanStatusCode.ERROR, message: outcome.run.error.message });
      return outcome;
    });
  }

  private async runNodeTries(
    node: WorkflowNode,
    inputs: Item[][],
    seen: ReadonlyMap<string, Item[]>,
    req: RunRequest,
    log: (level: LogEntry['level'], message: string, node?: string) => void,
    v1?: V1RunContext,
  ): Promise<NodeRunOutcome> {
    const def = nodeType(node.type)!;
    const tries = node.retryOnFail ? (node.maxTries ?? 3) : 1;
    const startedAt = new Date();
    // n8n's pinned data (manual runs only): the node outputs its pinned items instead of running.
    const pinned = req.pinned?.get(node.name);
    if (pinned) {
      const outputs = [pinned.map((item) => ({ json: structuredClone(item.json) }))];
      const runIndex = v1?.lineage.runIndex ?? 0;
      const run: NodeRun = { node: node.name, runIndex, nodeType: node.type, status: 'success', startedAt, durationMs: 0, tries: 1, output: outputs };
      return { kind: 'ok', result: { outputs }, run };
    }
    const started = performance.now();
    let failure: { message: string; details: Record<string, unknown> } | undefined;
    let attempt = 0;
    const data = expressionData(inputs, seen, req, v1);
    const runIndex = v1?.lineage.runIndex ?? 0;
    while (attempt < tries) {
      attempt++;
      try {
        const result = n8nOutputs(node, inputs, await this.attempt({ node, def, inputs, data, req, log, v1 }));
        checkItems(
          node,
          result.outputs.reduce((n, list) => n + list.length, 0),
          req.budgets ?? UNLIMITED,
        );
        const run: NodeRun = {
          node: node.name,
          runIndex,
          nodeType: node.type,
          status: 'success',
          startedAt,
          durationMs: Math.round(performance.now() - started),
          tries: attempt,
          output: result.outputs,
        };
        return { kind: 'ok', result, run };
      } catch (err) {
        if (err instanceof Aborted || err instanceof BudgetExceeded) throw err;
        if (req.signal.aborted) throw new Aborted(req.signal.reason);
        failure = describe(err);
        if (attempt < tries) {
          const waitMs = node.waitBetweenTries ?? 1000;
          log('warn', `Attempt ${attempt} of ${tries} failed: ${failure.message}; retrying in ${waitMs} ms`, node.name);
          await sleep(waitMs, req.signal);
        }
      }
    }
    const durationMs = Math.round(performance.now() - started);
    if (node.onError === 'continueRegularOutput' || node.onError === 'continueErrorOutput') {
      // n8n: a node that fails as a whole passes its first input on, by its first output.
      log('warn', `Failed, continuing (onError ${node.onError}): ${failure!.message}`, node.name);
      const output = [inputs[0] ?? []];
      return {
        kind: 'ok',
        result: { outputs: output },
        run: { node: node.name, runIndex, nodeType: node.type, status: 'error', startedAt, durationMs, tries: attempt, output, error: failure },
      };
    }
    if (node.continueOnFail) {
      log('warn', `Failed, continuing (continueOnFail): ${failure!.message}`, node.name);
      const output = [(inputs[0]?.length ? inputs[0] : [{ json: {} }]).map(() => ({ json: { error: failure!.message } }))];
      return {
        kind: 'ok',
        result: { outputs: output },
        run: { node: node.name, runIndex, nodeType: node.type, status: 'error', startedAt, durationMs, tries: attempt, output, error: failure },
      };
    }
    log('error', `Failed: ${failure!.message}`, node.name);
    return {
      kind: 'failed',
      run: { node: node.name, runIndex, nodeType: node.type, status: 'error', startedAt, durationMs, tries: attempt, output: null, error: failure },
      error: {
        code: 'NODE_EXECUTION_FAILED',
        message: `Node "${node.name}" failed: ${failure!.message}`,
        node: node.name,
        nodeType: node.type,
        details: { ...failure!.details, tries: attempt },
      },
    };
  }

  private async attempt(a: Attempt): Promise<NodeResult> {
    const { node, def, req } = a;
    if (def.inProcess && !node.timeout) return this.attemptInProcess(a);
    const controller = new AbortController();
    const onAbort = () => controller.abort(req.signal.reason);
    req.signal.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const stopped = new Promise<never>((_, reject) => {
      const fail = () =>
        reject(timedOut ? new NodeError(`Ran past its time limit of ${node.timeout} s`, { reason: 'timeout' }) : new Aborted(req.signal.reason));
      if (controller.signal.aborted) fail();
      controller.signal.addEventListener('abort', fail, { once: true });
    });
    stopped.catch(() => undefined);
    if (node.timeout) {
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new NodeError(`Ran past its time limit of ${node.timeout} s`));
      }, node.timeout * 1000);
    }
    try {
      return checked(await Promise.race([def.execute(this.nodeContext(a, controller.signal)), stopped]));
    } catch (err) {
      // A node stopped by the execution's abort reports the abort, not its own symptom.
      if (req.signal.aborted && !(err instanceof Aborted)) throw new Aborted(req.signal.reason);
      if (timedOut && !(err instanceof NodeError && err.details.reason === 'timeout')) {
        throw new NodeError(`Ran past its time limit of ${node.timeout} s`, { reason: 'timeout' });
      }
      throw err;
    } finally {
      clearTimeout(timer);
      req.signal.removeEventListener('abort', onAbort);
    }
  }

  /** What a node's execute() receives; `signal` is the execution's, or the node's own watchdog's. */
  private nodeContext({ node, def, inputs, data, req, log, v1 }: Attempt, signal: AbortSignal): NodeContext {
    const ctx: NodeContext = {
      node,
      inputs,
      items: inputs[0] ?? [],
      parameters: (indexes) =>
        this.expressions.resolve(
          node.parameters,
          data,
          {
            raw: def.raw,
            bareExpressions: def.bareExpressions,
            n8n: def.n8n !== undefined,
            templates: def.n8n?.templates,
            signal,
          },
          indexes,
        ),
      expressionData: data,
      continueOnFail: node.onError === 'continueRegularOutput' || node.onError === 'continueErrorOutput',
      signal,
      services: req.services,
      staticData: req.staticData,
      checkOutput: (count) => checkItems(node, count, req.budgets ?? UNLIMITED),
      log: (message, level = 'info') => log(level, message, node.name),
    };
    if (v1) {
      ctx.state = v1.state;
      ctx.inputSource = v1.inputSource;
      ctx.lineage = v1.lineage;
    }
    return ctx;
  }

  /** An in-process node (set, if, …) without a time limit of its own: no watchdog, the execution's signal as is. */
  private async attemptInProcess(a: Attempt): Promise<NodeResult> {
    const { def, req } = a;
    if (req.signal.aborted) throw new Aborted(req.signal.reason);
    try {
      return checked(await def.execute(this.nodeContext(a, req.signal)));
    } catch (err) {
      if (req.signal.aborted && !(err instanceof Aborted)) throw new Aborted(req.signal.reason);
      throw err;
    }
  }
}

/** One attempt at a node: what its execute() context is built from. */
interface Attempt {
  node: WorkflowNode;
  def: NodeDefinition;
  inputs: Item[][];
  data: ExpressionData;
  req: RunRequest;
  log: (level: LogEntry['level'], message: string, node?: string) => void;
  v1: V1RunContext | undefined;
}

/**
 * What expressions see. In a v1 run the object also carries `lineage` (NodeContext.lineage): an
 * optional field the expression engine may read for `$('Node').item` and `$runIndex`.
 */
function expressionData(inputs: Item[][], seen: ReadonlyMap<string, Item[]>, req: RunRequest, v1: V1RunContext | undefined): ExpressionData {
  // n8n's v1 order does not wait for every input, so a node with several reads its expressions'
  // items ($json, $input) from the first input that has any; the node itself still gets each input.
  const items = (v1 ? inputs.find((list) => list?.length) : undefined) ?? inputs[0] ?? [];
  const data: ExpressionData = { items, nodes: seen, execution: req.execution, workflow: req.workflow, vars: req.vars };
  if (v1) {
    data.lineage = v1.lineage;
    const source = v1.inputSource[0];
    if (source) data.prevNode = { name: source.previousNode, outputIndex: source.previousNodeOutput, runIndex: source.previousNodeRun };
  }
  return data;
}

/**
 * n8n's node settings applied to what a node returned: with `continueErrorOutput`, the items that
 * failed (`{json: {error, message?, details?}}`) leave by an extra last output, merged into the
 * input item they came from; with `alwaysOutputData`, an empty first output carries one empty item.
 */
function n8nOutputs(node: WorkflowNode, inputs: Item[][], result: NodeResult): NodeResult {
  let outputs = result.outputs;
  if (node.onError === 'continueErrorOutput') {
    const errors: Item[] = [];
    const regular = Math.max(outputs.length, nodeType(node.type)?.outputs?.(node.parameters, versionOf(node)) ?? 1);
    outputs = Array.from({ length: regular }, (_, o) =>
      (outputs[o] ?? []).filter((item, index) => {
        if (!isErrorItem(item)) return true;
        const paired = item.pairedItem ?? (outputs[o]!.length === inputs[0]?.length ? { item: index } : undefined);
        const source = paired ? inputs[paired.input ?? 0]?.[paired.item] : undefined;
        errors.push(source ? { ...item, json: { ...source.json, ...item.json } } : item);
        return false;
      }),
    );
    outputs.push(errors);
  }
  if (node.alwaysOutputData && !outputs[0]?.length) outputs = [[{ json: {} }], ...outputs.slice(1)];
  return outputs === result.outputs ? result : { ...result, outputs };
}

function isErrorItem(item: Item): boolean {
  const json = item.json;
  return Boolean(json.error) && Object.keys(json).every((k) => k === 'error' || k === 'message' || k === 'details');
}

/** The outputs a node returned, checked. */
function checked(result: NodeResult): NodeResult {
  if (!Array.isArray(result?.outputs) || !result.outputs.every((o) => Array.isArray(o))) throw new NodeError('The node returned no outputs');
  return result;
}

function describe(err: unknown): { message: string; details: Record<string, unknown> } {
  if (err instanceof NodeError) return { message: err.message, details: err.details };
  if (err instanceof ExpressionError)
    return { message: err.message, details: { reason: err.reason === 'expression' ? 'expression' : err.reason, expression: err.expression } };
  if (err instanceof SandboxError) return { message: err.message, details: { reason: err.reason } };
  if (err instanceof AppError) return { message: err.message, details: { code: err.code, ...err.details } };
  return { message: err instanceof Error ? err.message : String(err), details: {} };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Aborted(signal.reason));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Aborted(signal.reason));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export { compile };
