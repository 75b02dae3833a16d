import { countRuns, cronProblem } from './cron';
import type { WorkflowNode } from './definition';
import { isPlainObject } from './types';

/**
 * When a workflow's schedule trigger nodes fire, as the schedules (schedules/) store it: the
 * engine's own `engine.scheduleTrigger` (its `cron`), n8n's Schedule Trigger (its rules) and
 * n8n's Interval. Here, not in the n8n nodes' folders, because the scheduler reaches nodes/ only.
 * The spec is one line per rule (cron.ts reads it).
 */

export const N8N_SCHEDULE_TRIGGER = 'n8n-nodes-base.scheduleTrigger';
export const N8N_INTERVAL = 'n8n-nodes-base.interval';
export const SCHEDULE_TRIGGER_TYPES: readonly string[] = ['engine.scheduleTrigger', N8N_SCHEDULE_TRIGGER, N8N_INTERVAL];

/** A rule the engine cannot schedule: its message names the parameter. */
export class ScheduleRuleError extends Error {}

type Params = Record<string, unknown>;

/** A whole number parameter within [min, max] (n8n's editor bounds), its default when absent. */
function whole(rule: Params, name: string, fallback: number, min: number, max: number): number {
  const raw = rule[name];
  if (raw === undefined || raw === null || raw === '') return fallback;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ScheduleRuleError(`${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(raw)}`);
  }
  return n;
}

/** One rule of n8n's Schedule Trigger (`rule.interval[i]`) as a spec line (the second is always 0: n8n picks one at random). */
function ruleLine(rule: Params): string {
  const field = rule.field ?? 'days';
  const minute = () => whole(rule, 'triggerAtMinute', 0, 0, 59);
  const hour = () => whole(rule, 'triggerAtHour', 0, 0, 23);
  switch (field) {
    case 'seconds':
      return `*/${whole(rule, 'secondsInterval', 30, 1, 59)} * * * * *`;
    case 'minutes':
      return `0 */${whole(rule, 'minutesInterval', 5, 1, 59)} * * * *`;
    case 'hours':
      return `0 ${minute()} */${whole(rule, 'hoursInterval', 1, 1, 23)} * * *`;
    case 'days': {
      const n = whole(rule, 'daysInterval', 1, 1, 31);
      return `0 ${minute()} ${hour()} * * *${n > 1 ? ` !every ${n} days` : ''}`;
    }
    case 'weeks': {
      const n = whole(rule, 'weeksInterval', 1, 1, 52);
      const raw = rule.triggerAtDay ?? [0];
      const days = Array.isArray(raw) ? raw : [raw];
      if (!days.every((d) => Number.isInteger(Number(d)) && Number(d) >= 0 && Number(d) <= 6)) {
        throw new ScheduleRuleError(`triggerAtDay must list weekdays from 0 (Sunday) to 6, not ${JSON.stringify(raw)}`);
      }
      return `0 ${minute()} ${hour()} * * ${days.length ? days.map(Number).join(',') : '*'}${n > 1 ? ` !every ${n} weeks` : ''}`;
    }
    case 'months': {
      // Any number of months (n8n's 1.3 checks only that it is at least 1); `*/n` spaces evenly only when n divides 12.
      const n = whole(rule, 'monthsInterval', 1, 1, 1200);
      const day = whole(rule, 'triggerAtDayOfMonth', 1, 1, 31);
      return 12 % n === 0 ? `0 ${minute()} ${hour()} ${day} */${n} *` : `0 ${minute()} ${hour()} ${day} * * !every ${n} months`;
    }
    case 'cronExpression': {
      let expr = rule.expression;
      if (typeof expr === 'string' && expr.startsWith('=')) expr = expr.slice(1);
      if (typeof expr !== 'string' || expr.includes('{{'))
        throw new ScheduleRuleError('expression must be a cron expression written out (not an n8n expression)');
      const problem = cronProblem(expr.trim());
      if (problem) throw new ScheduleRuleError(`expression: invalid cron expression: ${problem}`);
      return expr.trim();
    }
    default:
      throw new ScheduleRuleError(`rule field "${String(field)}" is not one of seconds, minutes, hours, days, weeks, months, cronExpression`);
  }
}

/** n8n's Schedule Trigger rules (`rule.interval`, default one daily rule at midnight), one spec line each. */
export function n8nScheduleSpec(params: Params): string {
  const rule = isPlainObject(params.rule) ? params.rule : { interval: [{ field: 'days' }] };
  const list: unknown[] = Array.isArray(rule.interval) ? rule.interval : [];
  if (!list.length) throw new ScheduleRuleError('rule.interval must hold at least one rule');
  return list
    .map((r, i) => {
      if (!isPlainObject(r)) throw new ScheduleRuleError(`rule.interval[${i}] must be an object`);
      try {
        return ruleLine(r);
      } catch (err) {
        if (err instanceof ScheduleRuleError) throw new ScheduleRuleError(`rule.interval[${i}].${err.message}`);
        throw err;
      }
    })
    .join('\n');
}

const UNIT_MS: Record<string, number> = { seconds: 1000, minutes: 60_000, hours: 3_600_000 };
/** n8n's Interval runs on a timer, whose delay Node.js caps at 2^31-1 ms. */
const MAX_INTERVAL_MS = 2_147_483_647;

/** n8n's Interval (`interval`, default 1, in `unit`, default seconds). */
export function n8nIntervalSpec(params: Params): string {
  const unit = params.unit ?? 'seconds';
  const ms = typeof unit === 'string' ? UNIT_MS[unit] : undefined;
  if (!ms || !Object.prototype.hasOwnProperty.call(UNIT_MS, unit as string))
    throw new ScheduleRuleError(`unit must be seconds, minutes or hours, not ${JSON.stringify(unit)}`);
  const raw = params.interval ?? 1;
  const interval = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  // n8n's own messages for these two.
  if (!Number.isFinite(interval) || interval < 1) throw new ScheduleRuleError('The interval has to be set to at least 1 or higher!');
  const total = Math.round(interval * ms);
  if (total > MAX_INTERVAL_MS) throw new ScheduleRuleError('The interval value is too large.');
  return `@every ${total}ms`;
}

/** The schedule of an enabled trigger node (spec and zone), or null when it is not one; throws ScheduleRuleError when its rules are wrong. */
export function triggerSchedule(node: WorkflowNode, workflowTimezone: string | undefined): { cron: string; timezone: string } | null {
  if (node.disabled) return null;
  const tz = workflowTimezone || 'UTC';
  const p = node.parameters ?? {};
  switch (node.type) {
    case 'engine.scheduleTrigger':
      return { cron: String(p.cron ?? ''), timezone: String(p.timezone ?? tz) };
    case N8N_SCHEDULE_TRIGGER:
      return { cron: n8nScheduleSpec(p), timezone: tz };
    case N8N_INTERVAL:
      return { cron: n8nIntervalSpec(p), timezone: tz };
    default:
      return null;
  }
}

/** n8n's misfire policies (Schedule Trigger 1.4's "If Execution Is Missed"); `skip` is its default. */
export const MISFIRE_POLICIES = ['skip', 'coalesce', 'coalesce_owner'] as const;
/** How late a run may start before it counts as missed when the node says 0 (n8n's N8N_SCHEDULER_MISFIRE_GRACE default). */
export const DEFAULT_MISFIRE_GRACE_SECONDS = 60;

/** Schedule Trigger 1.4's misfire settings refused when the workflow is saved, undefined when right. */
export function misfireProblem(params: Params): string | undefined {
  const policy = params.misfirePolicy;
  if (policy !== undefined && !(MISFIRE_POLICIES as readonly unknown[]).includes(policy))
    return `misfirePolicy must be one of ${MISFIRE_POLICIES.join(', ')}, not ${JSON.stringify(policy)}`;
  const grace = params.misfireGraceSeconds;
  if (grace !== undefined && !(typeof grace === 'number' && Number.isInteger(grace) && grace >= 0))
    return `misfireGraceSeconds must be a whole number of seconds, 0 or more (0: ${DEFAULT_MISFIRE_GRACE_SECONDS}), not ${JSON.stringify(grace)}`;
  return undefined;
}

/**
 * How many runs a schedule node's firing at `now`, for the time `due`, starts. On time (within
 * the grace), one. Late past it (the platform was down), one as well, except for n8n's Schedule
 * Trigger 1.4, whose `misfirePolicy` decides: `skip` (its default) none, `coalesce_owner` one for
 * the node, `coalesce` one for each rule that missed a time since `due`. Its grace is
 * `misfireGraceSeconds`, 0 or unset meaning n8n's instance default.
 */
export function misfireRuns(node: WorkflowNode, spec: string, tz: string, due: Date, now: Date): { runs: number; late: boolean; policy?: string } {
  if (node.type !== N8N_SCHEDULE_TRIGGER || (node.typeVersion ?? 1) < 1.4) return { runs: 1, late: false };
  const p = node.parameters ?? {};
  const given = p.misfireGraceSeconds;
  const grace = typeof given === 'number' && given > 0 ? given : DEFAULT_MISFIRE_GRACE_SECONDS;
  if (now.getTime() - due.getTime() <= grace * 1000) return { runs: 1, late: false };
  const policy = typeof p.misfirePolicy === 'string' && (MISFIRE_POLICIES as readonly string[]).includes(p.misfirePolicy) ? p.misfirePolicy : 'skip';
  if (policy === 'skip') return { runs: 0, late: true, policy };
  if (policy === 'coalesce_owner') return { runs: 1, late: true, policy };
  const before = new Date(due.getTime() - 1);
  const missed = spec.split('\n').filter((line) => line.trim() && countRuns(line, tz, before, now) > 0).length;
  return { runs: Math.max(1, missed), late: true, policy };
}
