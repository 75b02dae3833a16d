import { AppError } from '../../../kernel/errors';
import { realClock } from '../../../kernel/clock';
import { guardedFetch } from '../../../kernel/outbound';
import type { WorkflowExecutor, ExecutionErrorInfo } from '../executor';
import type { Item } from '../expressions';
import { NodeError, type NodeServices, type PromptTestRequest, type TaskRequest } from '../nodes';
import { MAX_DEPTH, type RunContext, type RunnerDeps, type StartOptions, type Started } from './context';
import { runPromptTest, runTask, type OperationsLike } from './platform';
import { checkRunAs, NODE_PERMISSIONS, type WorkflowVersion } from '../workflows';
import type { CodeRunner } from '../sandbox';

/**
 * What a run's nodes may call beyond themselves (NodeServices) and the executions a run starts:
 * a stored workflow as a sub-execution (inline, in this request, its parent's signal stopping
 * it), a workflow given inline (run in memory as part of the node), and the workflow's error
 * workflow when it fails. Starting goes through the runner's `begin`, given here as a function
 * so that this file need not import the runner that builds it.
 */
export class ExecutionChildren {
  constructor(
    private readonly deps: Pick<
      RunnerDeps,
      'workflows' | 'policy' | 'operations' | 'events' | 'logger' | 'clock' | 'keys' | 'budgets' | 'variables' | 'credentials' | 'filesDir'
    >,
    private readonly executor: WorkflowExecutor,
    private readonly codeSandbox: CodeRunner,
    private readonly begin: (opts: StartOptions) => Promise<Started>,
  ) {}

  /** The services a run's nodes get; an inline workflow's nodes get them one level deeper. */
  services(ctx: RunContext): NodeServices {
    return {
      codeSandbox: this.codeSandbox,
      now: () => (this.deps.clock ?? realClock).now(),
      fetch: (url, init) => guardedFetch(url, init, this.deps.policy),
      credentials: this.deps.credentials,
      filesDir: this.deps.filesDir,
      maxBinaryBytes: this.deps.budgets.maxBinaryBytes,
      runWorkflow: (workflowId, items, signal) => this.runChild(ctx, workflowId, items, signal),
      runInline: async (json, items, signal) => {
        if (ctx.depth + 1 > MAX_DEPTH) throw new NodeError(`Workflows call each other more than ${MAX_DEPTH} levels deep`, { reason: 'depth' });
        const execution = { id: ctx.id, mode: ctx.mode, resumeUrl: '' };
        return this.executor.runInline(json, items, {
          execution,
          signal,
          services: this.services({ ...ctx, depth: ctx.depth + 1 }),
          budgets: this.deps.budgets,
          vars: (await this.deps.variables?.()) ?? {},
        });
      },
      // Checked at every call, at any depth: the key may have been revoked since the run started.
      runTask: async (request: TaskRequest, signal: AbortSignal) => {
        await checkRunAs(ctx.runAs, NODE_PERMISSIONS['engine.agent']!, this.deps.keys);
        return runTask(this.operations(), this.deps.events, request, signal);
      },
      testPrompt: async (request: PromptTestRequest, signal: AbortSignal) => {
        await checkRunAs(ctx.runAs, NODE_PERMISSIONS['engine.prompt']!, this.deps.keys);
        return runPromptTest(this.operations(), request, signal);
      },
    };
  }

  private operations(): OperationsLike {
    if (!this.deps.operations) throw new NodeError('Other services are not reachable from this process', { reason: 'no_operations' });
    return this.deps.operations;
  }

  private async runChild(parent: RunContext, workflowId: string, items: Item[], signal: AbortSignal): Promise<Item[]> {
    if (parent.depth + 1 > MAX_DEPTH) throw new NodeError(`Workflows call each other more than ${MAX_DEPTH} levels deep`, { reason: 'depth' });
    let version: WorkflowVersion;
    try {
      version = await this.deps.workflows.current(workflowId);
    } catch (err) {
      if (err instanceof AppError) throw new NodeError(err.message, { code: err.code, workflowId });
      throw err;
    }
    const started = await this.begin({
      version,
      mode: 'subworkflow',
      input: items.length ? items : [{ json: {} }],
      runAs: parent.runAs,
      inline: true,
      parentExecutionId: parent.id,
      parentSignal: signal,
      depth: parent.depth + 1,
    });
    const view = await started.done!;
    const details = { executionId: view.id, workflowId };
    switch (view.status) {
      case 'success':
        return ((view.result as { items?: Record<string, unknown>[] })?.items ?? []).map((json) => ({ json }));
      case 'error':
        // The sub-workflow's own details first (a refused permission's code and `required` among them), then where it ran.
        throw new NodeError(`Workflow "${version.name}" failed: ${view.error?.message ?? 'unknown error'}`, { ...view.error?.details, ...details });
      case 'waiting':
        throw new NodeError(`Workflow "${version.name}" is waiting (execution ${view.id}); a sub-workflow must finish without waiting`, details);
      default:
        throw new NodeError(`Workflow "${version.name}" was ${view.status}`, details);
    }
  }

  /** Starts the workflow's error workflow (queued) for a failed execution; one that cannot start is only logged. */
  async runErrorWorkflow(ctx: RunContext, error: ExecutionErrorInfo): Promise<void> {
    const target = ctx.version.definition.settings.errorWorkflow;
    if (!target || ctx.mode === 'error') return;
    try {
      const version = await this.deps.workflows.current(target);
      await this.begin({
        version,
        mode: 'error',
        inline: false,
        runAs: ctx.runAs,
        input: [
          {
            json: {
              execution: { id: ctx.id, mode: ctx.mode, error, lastNodeExecuted: error.node ?? null },
              workflow: { id: ctx.version.workflowId, name: ctx.version.name },
            },
          },
        ],
      });
    } catch (err) {
      this.deps.logger.warn('error workflow not started', { err, executionId: ctx.id, errorWorkflow: target });
    }
  }
}
