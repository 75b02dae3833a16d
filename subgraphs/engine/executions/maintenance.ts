import type { DataSource } from 'typeorm';
import type { Clock } from '../../../kernel/clock';
import type { Logger } from '../../../kernel/logger';
import type { Queue } from '../../../kernel/queue';
import type { ExecutionErrorInfo } from '../executor';
import type { BinaryStore } from './binary.store';
import type { ExecutionRunner } from './runner';
import { JOB } from '../../../kernel/topics';
import { crowdedWorkflows, failStale, pruneBeyond, pruneOlderThan, pruneWebhookLogs } from './state.store';

/**
 * Every minute (an `engine.maintenance` job that plans its successor; every process start plans
 * one too, deduplicated per minute): delete finished executions older than
 * ENGINE_EXECUTION_MAX_AGE_DAYS and beyond ENGINE_EXECUTION_MAX_COUNT per workflow (run data
 * and logs go with them), delete old webhook request logs, and fail inline runs whose process
 * stopped heartbeating (queued runs are the queue's to recover).
 */

const EVERY_MS = 60_000;
const STALE_AFTER_S = 60;

export interface Retention {
  executionMaxAgeDays: number;
  executionMaxCount: number;
}

export class ExecutionMaintenance {
  constructor(
    private readonly db: DataSource,
    private readonly queue: Queue,
    private readonly runner: ExecutionRunner,
    private readonly retention: () => Retention,
    private readonly logger: Logger,
    /** When the next run is due (kernel/clock.ts). */
    private readonly clock: Clock,
    /** Also every minute: schedules whose job got lost are planned again. */
    private readonly healSchedules?: () => Promise<number>,
    /** The files of deleted executions kept outside the database are deleted here. */
    private readonly binaries?: BinaryStore,
  ) {}

  register(queue: Queue): void {
    queue.register(JOB.maintenance, () => this.run());
  }

  /** Plans a run `delayMs` from now (one per minute whoever plans it). */
  async plan(delayMs: number): Promise<void> {
    const at = this.clock.now().getTime() + delayMs;
    await this.queue.enqueue(JOB.maintenance, {}, { runAt: new Date(at), key: `${JOB.maintenance}:${Math.floor(at / EVERY_MS)}`, timeoutMs: 5 * 60_000 });
  }

  async run(): Promise<{ pruned: number; stale: number }> {
    // The next run is planned first: a failure below does not end the chain.
    await this.plan(EVERY_MS);
    const { executionMaxAgeDays, executionMaxCount } = this.retention();
    let pruned = await pruneOlderThan(this.db, executionMaxAgeDays);
    for (const workflowId of await crowdedWorkflows(this.db, executionMaxCount)) pruned += await pruneBeyond(this.db, workflowId, executionMaxCount);
    await pruneWebhookLogs(this.db, executionMaxAgeDays);
    await this.binaries?.drain().catch((err) => this.logger.warn('binary data of deleted executions not deleted', { err }));
    const error: ExecutionErrorInfo = { code: 'EXECUTION_FAILED', message: 'The process running the execution stopped', details: { reason: 'process_lost' } };
    const stale = await failStale(this.db, STALE_AFTER_S, error);
    for (const s of stale) {
      await this.runner.publish(s.id, 'error');
      await this.runner.notifyStored(s.id, s.notify);
    }
    const healed = (await this.healSchedules?.().catch((err) => (this.logger.warn('schedules not healed', { err }), 0))) ?? 0;
    if (healed) this.logger.warn('engine maintenance: schedules planned again', { healed });
    if (pruned || stale.length) this.logger.info('engine maintenance', { pruned, stale: stale.length });
    return { pruned, stale: stale.length };
  }
}
