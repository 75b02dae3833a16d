import { UUID } from '../../../kernel/ids';
import { withTransaction, type Tx } from '../../../kernel/db/transaction';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Principal } from '../../../kernel/auth/principal';
import type { Clock } from '../../../kernel/clock';
import { AppError, errors, type FieldError } from '../../../kernel/errors';
import type { Logger } from '../../../kernel/logger';
import type { JobContext, Queue } from '../../../kernel/queue';
import { countRuns, cronProblem, misfireRuns, nextRun, validTimezone, isPlainObject, SCHEDULE_TRIGGER_TYPES, triggerSchedule } from '../nodes';
import { type ExecutionRunner, checkPayload } from '../executions';
import { type WorkflowService } from '../workflows';
import { JOB, type Jobs } from '../../../kernel/topics';
import { scheduleStore as store, toView, type ScheduleView } from './store';

export type { ScheduleView } from './store';

/**
 * Schedules of both kinds in engine.schedules: registered through the control plane, or a workflow's
 * scheduleTrigger node (`node_name` set, kept in step by syncNodes). User rules: docs/control-plane.md.
 * Each enabled schedule has one `engine.schedule.fire` job keyed by schedule and due time. Firing
 * locks the row only while `next_run_at` still equals that due time, then starts the execution, moves
 * `next_run_at` and plans the next job in the same transaction: concurrent holders of the job fire
 * exactly once, and a crash before commit leaves the row due for the retry or the healing sweep.
 * Due times are read on the kernel's clock (kernel/clock.ts), in code and in SQL alike.
 */

/** Jobs of the engine's first scheduler (one chain per workflow version); dropped if any remain. */
const OVERDUE_S = 10;
const MAX_PER_WORKFLOW = 100;

export interface ScheduleInput {
  cron?: string | null;
  timezone?: string | null;
  payload?: Record<string, unknown> | null;
  enabled?: boolean | null;
}

type FireJob = Jobs[typeof JOB.scheduleFire];

export function scheduleNotFound(id: string): AppError {
  return errors.notFound('schedule', id);
}

export function scheduleInvalid(cron: unknown, reason: string): AppError {
  return new AppError('SCHEDULE_INVALID', `Invalid cron expression: ${reason}`, { field: 'cron', cron, reason });
}

export class WorkflowSchedules {
  constructor(
    private readonly db: DataSource,
    private readonly queue: Queue,
    private readonly workflows: WorkflowService,
    private readonly runner: ExecutionRunner,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  register(queue: Queue): void {
    queue.register(JOB.scheduleFire, (ctx) => this.fire(ctx));
    queue.register(JOB.legacySchedule, async () => ({ skipped: 'superseded by engine.schedule.fire' }));
  }

  /** At start: node schedules follow the definitions, overdue schedules get their job again. */
  async restore(): Promise<void> {
    for (const id of await store.workflowsWithNodeSchedules(this.db, SCHEDULE_TRIGGER_TYPES)) await this.syncNodes(id);
    await this.heal();
  }

  /** Plans the job of every enabled schedule overdue by more than OVERDUE_S (a job that got lost). */
  async heal(): Promise<number> {
    const rows = await store.overdue(this.db, OVERDUE_S, this.clock);
    for (const r of rows) await this.plan(undefined, r.id, r.next_run_at);
    return rows.length;
  }

  /**
   * Brings a workflow's node schedules in step with its current definition: one per enabled
   * scheduleTrigger node while the workflow is active, none otherwise. An unchanged node keeps
   * its next due time; a changed one (cron, time zone, re-activation) starts from now.
   */
  async syncNodes(workflowId: string): Promise<void> {
    await withTransaction(this.db, async (tx) => {
      const m = tx.manager;
      const w = await store.lockWorkflow(m, workflowId);
      if (!w) return;
      const nodes = (w.active ? w.nodes : []).filter((n) => SCHEDULE_TRIGGER_TYPES.includes(n.type) && !n.disabled);
      await store.deleteNodeSchedulesExcept(
        m,
        workflowId,
        nodes.map((n) => n.name),
      );
      const now = this.clock.now();
      for (const n of nodes) {
        // The node's rules were checked when the workflow was saved.
        const schedule = triggerSchedule(n, typeof w.settings?.timezone === 'string' ? w.settings.timezone : undefined);
        if (!schedule) continue;
        const { cron, timezone: tz } = schedule;
        const next = nextRun(cron, tz, now);
        if (!next) continue;
        const row = await store.upsertNodeSchedule(m, workflowId, n.name, cron, tz, next);
        await this.plan(tx, row.id, row.next_run_at);
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // The control plane's schedules

  async create(principal: Principal, workflowRef: string, input: ScheduleInput): Promise<ScheduleView> {
    const v = check(input, true);
    const workflow = await this.workflows.resolve(workflowRef);
    const next = v.enabled ? nextRun(v.cron!, v.timezone!, this.clock.now()) : null;
    if (v.enabled && !next) throw scheduleInvalid(v.cron, 'never fires');
    return withTransaction(this.db, async (tx) => {
      const m = tx.manager;
      if ((await store.countOfWorkflow(m, workflow.id)) >= MAX_PER_WORKFLOW)
        throw errors.conflict(`A workflow has at most ${MAX_PER_WORKFLOW} schedules`, { workflowId: workflow.id, limit: MAX_PER_WORKFLOW });
      const row = await store.insert(
        m,
        workflow.id,
        { cron: v.cron, timezone: v.timezone, payload: v.payload ?? {}, enabled: v.enabled, nextRunAt: next },
        principal.kind === 'apiKey' ? principal.keyId : null,
      );
      if (row.enabled) await this.plan(tx, row.id, row.next_run_at!);
      return toView(row);
    });
  }

  async get(id: string): Promise<ScheduleView> {
    if (!UUID.test(id)) throw scheduleNotFound(id);
    const row = await store.byId(this.db, id);
    if (!row) throw scheduleNotFound(id);
    return toView(row);
  }

  /** The workflow's schedules (its scheduleTrigger nodes' included), oldest first. */
  async list(workflowRef: string): Promise<ScheduleView[]> {
    const workflow = await this.workflows.resolve(workflowRef);
    return (await store.ofWorkflow(this.db, workflow.id)).map(toView);
  }

  /** Changes cron, timezone, payload or enabled; a new cron, time zone or re-enabling starts from now. */
  async update(id: string, input: ScheduleInput): Promise<ScheduleView> {
    if (!UUID.test(id)) throw scheduleNotFound(id);
    return withTransaction(this.db, async (tx) => {
      const m = tx.manager;
      const current = await store.lockForUpdate(m, id);
      if (!current) throw scheduleNotFound(id);
      refuseNodeSchedule(current);
      const v = check(
        {
          cron: input.cron ?? current.cron,
          timezone: input.timezone ?? current.timezone,
          payload: input.payload ?? current.payload,
          enabled: input.enabled ?? current.enabled,
        },
        false,
      );
      const timingChanged = v.cron !== current.cron || v.timezone !== current.timezone || (v.enabled && !current.enabled);
      let next: Date | null = v.enabled ? (timingChanged ? nextRun(v.cron!, v.timezone!, this.clock.now()) : current.next_run_at) : null;
      if (v.enabled && !next) throw scheduleInvalid(v.cron, 'never fires');
      if (!v.enabled) next = current.next_run_at;
      const row = await store.update(m, id, { cron: v.cron, timezone: v.timezone, payload: v.payload ?? {}, enabled: v.enabled, nextRunAt: next });
      if (row.enabled) await this.plan(tx, row.id, row.next_run_at!);
      return toView(row);
    });
  }

  async delete(id: string): Promise<{ scheduleId: string; deletedAt: Date }> {
    const current = await this.get(id);
    refuseNodeSchedule({ node_name: current.nodeName, workflow_id: current.workflowId });
    const deletedAt = await store.deleteById(this.db, id);
    if (!deletedAt) throw scheduleNotFound(id);
    return { scheduleId: id, deletedAt };
  }

  // -------------------------------------------------------------------------------------------
  // Firing

  /** One job per schedule and due time (the key); several plans of the same due time make one job. */
  private plan(tx: Tx | undefined, scheduleId: string, due: Date): Promise<string> {
    return this.queue.enqueue(
      JOB.scheduleFire,
      { scheduleId, due: due.toISOString() },
      { runAt: due, key: `${JOB.scheduleFire}:${scheduleId}:${due.getTime()}`, timeoutMs: 60_000, maxAttempts: 3, backoffMs: 500, priority: 'high' },
      tx,
    );
  }

  private async fire(job: JobContext<FireJob>): Promise<unknown> {
    const { scheduleId } = job.data;
    const due = new Date(job.data.due);
    if (!UUID.test(scheduleId) || Number.isNaN(due.getTime())) return { skipped: 'malformed' };
    const outcome = await withTransaction(this.db, async (tx) => {
      const m = tx.manager;
      // The claim: only while the row is still due at exactly this time (a concurrent claimer waits, then finds it moved).
      const row = await store.claimDue(m, scheduleId, due);
      if (!row) return { skipped: 'not due (already fired, changed or removed)' } as const;
      const now = this.clock.now();
      const missedRuns = countRuns(row.cron, row.timezone, due, now);
      const next = nextRun(row.cron, row.timezone, now > due ? now : due);
      let executionId: string | null = null;
      let skipped: string | null = null;
      if (!row.workflow_active) skipped = 'workflow inactive';
      else {
        const version = await this.workflows.current(row.workflow_id);
        const node = row.node_name ? version.definition.nodes.find((n) => n.name === row.node_name && SCHEDULE_TRIGGER_TYPES.includes(n.type)) : null;
        // A late firing (the platform was down): n8n's Schedule Trigger 1.4 says what its misfire policy runs.
        const misfire = node ? misfireRuns(node, row.cron, row.timezone, due, now) : { runs: 1, late: false };
        if (row.node_name && !node) skipped = 'node gone';
        else if (misfire.runs === 0) skipped = `missed: ${Math.round((now.getTime() - due.getTime()) / 1000)} s late, misfirePolicy ${misfire.policy}`;
        else {
          const json = {
            ...(row.node_name ? {} : (row.payload ?? {})),
            timestamp: now.toISOString(),
            cron: row.cron,
            timezone: row.timezone,
            scheduleId: row.id,
            scheduledFor: due.toISOString(),
            missedRuns,
          };
          for (let run = 0; run < misfire.runs; run++) {
            const id = randomUUID();
            executionId ??= id;
            await this.runner.begin({
              id,
              version,
              mode: 'schedule',
              inline: false,
              tx,
              priority: 'normal',
              // A scheduleTrigger node's runs act as the key that saved or activated the workflow; another schedule's, as the key that created it.
              runAs: row.node_name ? version.savedBy : row.created_by,
              ...(row.node_name ? { startNode: row.node_name } : {}),
              input: [{ json }],
            });
          }
        }
      }
      await store.fired(m, scheduleId, { nextRunAt: next ?? row.next_run_at, enabled: next !== null, scheduledFor: due, executionId }, this.clock);
      if (next) await this.plan(tx, scheduleId, next);
      return { executionId, skipped, missedRuns, next: next?.toISOString() ?? null };
    });
    // The execution's `running` event is published by runner.begin after this transaction's COMMIT.
    if ('executionId' in outcome && outcome.executionId) {
      if (outcome.missedRuns) this.logger.info('schedule caught up after downtime', { scheduleId, due: due.toISOString(), missedRuns: outcome.missedRuns });
    }
    return outcome;
  }
}

function refuseNodeSchedule(row: { node_name: string | null; workflow_id: string }): void {
  if (row.node_name) {
    throw errors.conflict(`This schedule belongs to the scheduleTrigger node "${row.node_name}"; change the workflow instead`, {
      workflowId: row.workflow_id,
      node: row.node_name,
    });
  }
}

/** Field checks; the cron last (SCHEDULE_INVALID), with the time zone it is read in. */
function check(input: ScheduleInput, creating: boolean): { cron?: string; timezone?: string; payload?: Record<string, unknown>; enabled: boolean } {
  const problems: FieldError[] = [];
  const timezone = input.timezone ?? 'UTC';
  if (!validTimezone(timezone)) problems.push({ field: 'timezone', message: `must be an IANA time zone (e.g. Europe/Paris), not "${String(timezone)}"` });
  if (input.payload !== undefined && input.payload !== null && !isPlainObject(input.payload)) problems.push({ field: 'payload', message: 'must be an object' });
  if (input.enabled !== undefined && input.enabled !== null && typeof input.enabled !== 'boolean')
    problems.push({ field: 'enabled', message: 'must be a boolean' });
  if (creating && (input.cron === undefined || input.cron === null)) problems.push({ field: 'cron', message: 'is required' });
  else if (typeof input.cron !== 'string') problems.push({ field: 'cron', message: 'must be a string' });
  if (problems.length) throw errors.validation(problems);
  if (input.payload) checkPayload(input.payload);
  const problem = cronProblem(input.cron, timezone);
  if (problem) throw scheduleInvalid(input.cron, problem);
  return { cron: input.cron!.trim(), timezone, payload: input.payload ?? {}, enabled: input.enabled ?? true };
}
