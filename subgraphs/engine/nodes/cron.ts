import { CronExpressionParser } from 'cron-parser';

/**
 * Cron expressions of schedules and scheduleTrigger nodes (cron-parser): 5 fields (minute hour
 * day-of-month month day-of-week), or 6 with seconds first, or one of cron-parser's macros
 * (@yearly, @monthly, @weekly, @daily, @hourly, @minutely, @secondly, @weekdays, @weekends).
 * Times are computed in an IANA time zone (daylight-saving changes included).
 */

const MACROS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@hourly', '@minutely', '@secondly', '@weekdays', '@weekends'];
/** How far the count of missed runs goes (a seconds cron after a day of downtime would count 86,400). */
export const MISSED_COUNT_LIMIT = 1000;

export function validTimezone(tz: unknown): boolean {
  if (typeof tz !== 'string' || !tz) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Why a cron expression is refused, or null when it is fine. */
export function cronProblem(cron: unknown, tz = 'UTC'): string | null {
  if (typeof cron !== 'string' || !cron.trim()) return 'is required';
  const expr = cron.trim();
  if (expr.length > 200) return 'must be at most 200 characters';
  if (expr.startsWith('@')) {
    if (!MACROS.includes(expr.toLowerCase())) return `unknown macro ${expr} (${MACROS.join(', ')})`;
  } else {
    const fields = expr.split(/\s+/).length;
    if (fields !== 5 && fields !== 6) return `must have 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), not ${fields}`;
  }
  try {
    const parsed = CronExpressionParser.parse(expr, { tz, currentDate: new Date() });
    if (!parsed.hasNext()) return 'never fires';
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * A trigger node's schedule as the `cron` of its schedule row: one rule per line, each a cron
 * expression, `<cron> !every <n> days|weeks|months` (only every n-th day, week or month of the
 * zone's calendar, counted from 1970-01-01, weeks from Sunday) or `@every <n>ms` (n after the last
 * due time).
 * A control-plane schedule is one cron expression (cronProblem refuses the rest).
 */
interface Rule {
  cron?: string;
  everyMs?: number;
  /** Keep only every n-th day, week or month. */
  filter?: { n: number; unit: 'days' | 'weeks' | 'months' };
}

function rulesOf(spec: string): Rule[] {
  return spec
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const every = /^@every (\d+)ms$/.exec(line);
      if (every) return { everyMs: Math.max(1000, Number(every[1])) };
      const filtered = /^(.*?)\s+!every (\d+) (days|weeks|months)$/.exec(line);
      if (filtered) return { cron: filtered[1]!, filter: { n: Math.max(1, Number(filtered[2])), unit: filtered[3] as 'days' | 'weeks' | 'months' } };
      return { cron: line };
    });
}

/** Days since 1970-01-01 of the zone's calendar date at `d`. */
function localDay(d: Date, tz: string): number {
  const [y, m, day] = isoWithOffset(d, tz).slice(0, 10).split('-').map(Number);
  return Math.floor(Date.UTC(y!, m! - 1, day!) / 86_400_000);
}

function kept(rule: Rule, d: Date, tz: string): boolean {
  if (!rule.filter) return true;
  if (rule.filter.unit === 'months') {
    const [y, m] = isoWithOffset(d, tz).slice(0, 7).split('-').map(Number);
    return (y! * 12 + m! - 1) % rule.filter.n === 0;
  }
  const day = localDay(d, tz);
  // 1970-01-01 was a Thursday: weeks begin on the Sunday before, day 3.
  const index = rule.filter.unit === 'days' ? day : Math.floor((day + 4) / 7);
  return index % rule.filter.n === 0;
}

/** Cron occurrences a filter may skip before one is kept (every 52nd week of a weekly cron). */
const FILTER_SCAN = 2000;

function nextOfRule(rule: Rule, tz: string, after: Date): Date | null {
  if (rule.everyMs) return new Date(after.getTime() + rule.everyMs);
  try {
    const it = CronExpressionParser.parse(rule.cron!, { tz: tz || 'UTC', currentDate: after });
    for (let i = 0; i < FILTER_SCAN && it.hasNext(); i++) {
      const d = it.next().toDate();
      if (kept(rule, d, tz)) return d;
    }
    return null;
  } catch {
    return null;
  }
}

/** The first time strictly after `after` (of any line of a node's schedule), or null when there is none (or the expression is invalid). */
export function nextRun(cron: string, tz: string, after: Date): Date | null {
  let first: Date | null = null;
  for (const rule of rulesOf(cron)) {
    const d = nextOfRule(rule, tz, after);
    if (d && (!first || d < first)) first = d;
  }
  return first;
}

/** How many times the schedule would have fired in (from, to], counted up to MISSED_COUNT_LIMIT. */
export function countRuns(cron: string, tz: string, from: Date, to: Date): number {
  let n = 0;
  for (const rule of rulesOf(cron)) {
    if (rule.everyMs) {
      n += Math.max(0, Math.floor((to.getTime() - from.getTime()) / rule.everyMs));
      continue;
    }
    try {
      const it = CronExpressionParser.parse(rule.cron!, { tz: tz || 'UTC', currentDate: from, endDate: to });
      while (n < MISSED_COUNT_LIMIT && it.hasNext()) {
        const d = it.next().toDate();
        if (d.getTime() > to.getTime()) break;
        if (kept(rule, d, tz)) n++;
      }
    } catch {
      // An invalid line counts nothing.
    }
  }
  return Math.min(n, MISSED_COUNT_LIMIT);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** ISO 8601 in the time zone with its offset, e.g. `2026-11-23T09:00:00+01:00` (seconds precision; cron times are whole seconds). */
export function isoWithOffset(d: Date, tz: string): string {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    });
    if (formatters.size > 500) formatters.clear();
    formatters.set(tz, f);
  }
  const parts: Record<string, string> = {};
  for (const p of f.formatToParts(d)) parts[p.type] = p.value;
  const offset = (parts.timeZoneName ?? 'GMT').replace(/^GMT/, '') || '+00:00';
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}
