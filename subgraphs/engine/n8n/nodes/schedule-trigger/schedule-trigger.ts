import { misfireProblem, n8nIntervalSpec, n8nScheduleSpec, ScheduleRuleError, validTimezone, type NodeContext, type NodeDefinition } from '../../../nodes';

/**
 * n8n's Schedule Trigger (1 to 1.4) and Interval (1). The scheduler (schedules/) fires them on
 * their rules while the workflow is active (nodes/schedule-rules.ts turns the rules into its
 * schedule); a run started otherwise (executeWorkflow) fires them once, now, as n8n's editor does.
 * Schedule Trigger emits n8n's item for the firing time in the workflow's time zone; Interval
 * emits one empty item, as n8n's. Version 1.3 refuses a rule out of its editor's bounds when the
 * workflow is activated (seconds and minutes 1-59, hours 1-23, days 1-31, months at least 1):
 * the engine refuses those for every version when the workflow is saved (SCHEDULE_INVALID), and
 * runs any number of months. 1.4 adds two node settings for a run the platform missed (it was
 * down past the run's time): `misfirePolicy` (`skip`, the default: not run; `coalesce_owner`: run
 * once; `coalesce`: run once per rule that missed a time) and `misfireGraceSeconds` (how late a
 * run may start and still be on time; 0 or unset: 60 s, n8n's instance default). The scheduler
 * applies them (nodes/schedule-rules.ts); earlier versions catch a missed run up once.
 */

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** 1st, 2nd, 3rd, 4th … 11th, 12th, 13th, 21st (moment's `Do`). */
function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The wall-clock fields of `at` in `tz`, and its offset from UTC in minutes. */
function wallClock(
  at: Date,
  tz: string,
): { year: number; month: number; day: number; hour: number; minute: number; second: number; weekday: number; offset: number } {
  const parts: Record<string, string> = {};
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  for (const p of f.formatToParts(at)) parts[p.type] = p.value;
  const [year, month, day, hour, minute, second] = ['year', 'month', 'day', 'hour', 'minute', 'second'].map((k) => Number(parts[k]));
  const asUtc = Date.UTC(year!, month! - 1, day!, hour!, minute!, second!);
  const offset = Math.round((asUtc - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
  return { year: year!, month: month!, day: day!, hour: hour!, minute: minute!, second: second!, weekday: new Date(asUtc).getUTCDay(), offset };
}

/** n8n's Schedule Trigger item for the time `at` in the zone `tz`. */
export function scheduleItem(at: Date, tz: string): Record<string, string> {
  const w = wallClock(at, tz);
  const sign = w.offset < 0 ? '-' : '+';
  const offset = `${sign}${pad(Math.floor(Math.abs(w.offset) / 60))}:${pad(Math.abs(w.offset) % 60)}`;
  const hour12 = w.hour % 12 === 0 ? 12 : w.hour % 12;
  const meridiem = w.hour < 12 ? 'am' : 'pm';
  const time = `${hour12}:${pad(w.minute)}:${pad(w.second)} ${meridiem}`;
  return {
    timestamp: `${w.year}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}.${pad(at.getUTCMilliseconds(), 3)}${offset}`,
    'Readable date': `${MONTHS[w.month - 1]} ${ordinal(w.day)} ${w.year}, ${time}`,
    'Readable time': time,
    'Day of week': WEEKDAYS[w.weekday]!,
    Year: String(w.year),
    Month: MONTHS[w.month - 1]!,
    'Day of month': pad(w.day),
    Hour: pad(w.hour),
    Minute: pad(w.minute),
    Second: pad(w.second),
    Timezone: `${tz} (UTC${offset})`,
  };
}

/** When the trigger fired: the scheduler's `timestamp`, else now (a run started by hand). */
function firedAt(ctx: NodeContext): Date {
  const given = ctx.items[0]?.json.timestamp;
  const at = typeof given === 'string' && ctx.items[0]?.json.scheduleId !== undefined ? new Date(given) : undefined;
  return at && !Number.isNaN(at.getTime()) ? at : (ctx.services.now?.() ?? new Date());
}

function ruleProblem(check: () => unknown, parameter: string): { parameter: string; message: string; code: 'SCHEDULE_INVALID' } | undefined {
  try {
    check();
    return undefined;
  } catch (err) {
    if (err instanceof ScheduleRuleError) return { parameter, message: err.message, code: 'SCHEDULE_INVALID' };
    throw err;
  }
}

export const scheduleTrigger: NodeDefinition = {
  name: 'scheduleTrigger',
  description: "n8n's Schedule Trigger: starts the workflow on its rules (seconds to months, or cron), in the workflow's time zone.",
  n8n: { versions: [1, 1.1, 1.2, 1.3, 1.4] },
  inProcess: true,
  trigger: true,
  inputs: () => 0,
  invalid: (p) => {
    const misfire = misfireProblem(p);
    if (misfire) return { parameter: misfire.split(' ')[0]!, message: misfire, code: 'SCHEDULE_INVALID' };
    return ruleProblem(() => n8nScheduleSpec(p), 'rule');
  },
  async execute(ctx) {
    const tz = ctx.expressionData.workflow.timezone;
    return { outputs: [[{ json: scheduleItem(firedAt(ctx), tz && validTimezone(tz) ? tz : 'UTC') }]] };
  },
};

export const interval: NodeDefinition = {
  name: 'interval',
  description: "n8n's Interval: starts the workflow every `interval` `unit` (seconds, minutes, hours; at least 1 second).",
  n8n: { versions: [1] },
  inProcess: true,
  trigger: true,
  inputs: () => 0,
  invalid: (p) => ruleProblem(() => n8nIntervalSpec(p), 'interval'),
  execute: async () => ({ outputs: [[{ json: {} }]] }),
};
