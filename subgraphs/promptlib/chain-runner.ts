import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Logger } from '../../kernel/logger';
import { ownEntry, setOwn } from '../../kernel/names';
import { JobAbortedError, type Queue } from '../../kernel/queue';
import type { CompletedStep, ExecutionFailure, StoredStep } from './chain.types';
import * as executions from './chain-execution.store';
import type { RunRow } from './chain-execution.store';
import type { PromptService } from './prompt.service';
import type { PromptTestService } from './prompt-test.service';
import { describeFailure, seconds } from './shared';
import { JOB } from '../../kernel/topics';

/**
 * The `promptlib.chain` job: runs one execution's steps order by order. Steps sharing an order
 * run at once; each finished step is appended to `completed_steps` as it finishes. The first
 * failing step ends the execution `failed` with `error {step, promptId, code, message}` (its
 * siblings are aborted). A worker that stops mid-run hands the job back and a later run resumes
 * after the steps already completed; a job that fails outright (timeout, lost worker) marks the
 * execution failed at its current step.
 */

class StepFailure extends Error {
  constructor(
    readonly step: StoredStep,
    readonly reason: unknown,
  ) {
    super('step failed');
  }
}

export class ChainRunner {
  constructor(
    private readonly db: DataSource,
    private readonly prompts: PromptService,
    private readonly tests: PromptTestService,
    private readonly logger: Logger,
  ) {}

  register(queue: Queue): void {
    queue.register(JOB.chain, (job) => this.run(job.data.executionId, job.signal), {
      onFinalFailure: (job, error) => this.failAtCurrentStep((job.data as { executionId: string }).executionId, error),
    });
  }

  async run(executionId: string, signal: AbortSignal): Promise<void> {
    const exec = await executions.runRow(this.db, executionId);
    if (!exec || exec.status !== 'running') return; // deleted with its chain, or already settled
    const outputs: Record<string, Record<string, string>> = {};
    const done = new Set<string>();
    for (const c of exec.completed_steps) {
      setOwn((outputs[`step_${c.step}`] ??= {}), c.outputKey, c.output);
      done.add(`${c.step}:${c.outputKey}`);
    }
    const orders = [...new Set(exec.steps.map((s) => s.order))].sort((a, b) => a - b);
    for (const order of orders) {
      const group = exec.steps.filter((s) => s.order === order && !done.has(`${s.order}:${s.outputKey}`));
      if (!group.length) continue;
      await executions.setCurrentStep(this.db, executionId, order);
      // Siblings of a failed step are aborted; the job's own abort (timeout, shutdown) reaches all.
      const siblings = new AbortController();
      const onAbort = () => siblings.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      let failure: StepFailure | null = null;
      try {
        await Promise.allSettled(
          group.map((step) =>
            this.runStep(exec, step, outputs, siblings.signal).catch((err) => {
              if (!failure) failure = new StepFailure(step, err);
              siblings.abort(new Error(`a sibling step of order ${order} failed`));
            }),
          ),
        );
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
      if (failure) {
        const { step, reason: cause } = failure as StepFailure;
        // A stopping worker hands the job back: the execution resumes elsewhere, it has not failed.
        if (cause instanceof JobAbortedError && (cause.code === 'shutdown' || cause.code === 'worker_lost')) throw cause;
        const { code, message, details } = describeFailure(cause);
        await this.markFailed(executionId, {
          step: order,
          promptId: step.promptId,
          code,
          message,
          ...(details && Object.keys(details).length ? { details } : {}),
        });
        return;
      }
    }
    await executions.complete(this.db, executionId, outputs);
  }

  private async runStep(exec: RunRow, step: StoredStep, outputs: Record<string, Record<string, string>>, signal: AbortSignal): Promise<void> {
    const version = await this.prompts.loadVersion(step.promptId, step.version);
    const variables: Record<string, unknown> = { ...exec.initial_variables };
    for (const [name, ref] of Object.entries(step.inputMapping)) {
      const [source, key] = [ref.slice(0, ref.indexOf('.')), ref.slice(ref.indexOf('.') + 1)];
      const from = ownEntry(outputs, source);
      setOwn(variables, name, from && ownEntry(from, key));
    }
    const rendering = await this.prompts.renderVersion(version, variables);
    const params = { model: exec.model, temperature: exec.temperature, maxTokens: exec.max_tokens };
    const run = await this.tests.runModel(rendering.rendered, params, signal);
    await this.tests.record(this.db.manager, {
      testId: randomUUID(),
      version,
      source: 'chain',
      executionId: exec.execution_id,
      variables,
      params,
      run,
      keyId: exec.key_id,
    });
    if (!run.ok) throw run.raw;
    const completed: CompletedStep = {
      step: step.order,
      promptId: step.promptId,
      version: version.version,
      outputKey: step.outputKey,
      output: run.output!,
      tokensUsed: run.tokens,
      latency: seconds(run.latencyMs),
      completedAt: new Date().toISOString(),
    };
    setOwn((outputs[`step_${step.order}`] ??= {}), step.outputKey, completed.output);
    await executions.appendStep(this.db, exec.execution_id, completed, run.latencyMs);
  }

  private async markFailed(executionId: string, error: ExecutionFailure): Promise<void> {
    await executions.fail(this.db, executionId, error);
  }

  private async failAtCurrentStep(executionId: string, error: { code: string; message: string }): Promise<void> {
    this.logger.warn('chain execution failed outside a step', { executionId, error });
    await executions.failAtCurrentStep(this.db, executionId, error);
  }
}
