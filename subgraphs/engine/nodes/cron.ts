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

/** The first time strictly after `after`, or null when there is none (or the expression is invalid). */
export function nextRun(cron: string, tz: string, after: Date): Date | null {
  try {
    const it = CronExpressionParser.parse(cron.trim(), { tz: tz || 'UTC', currentDate: after });
    return it.hasNext() ? it.next().toDate() : null;
  } catch {
    return null;
  }
}

/** How many times the cron would have fired in (from, to], counted up to MISSED_COUNT_LIMIT. */
export function countRuns(cron: string, tz: string, from: Date, to: Date): number {
  try {
    const it = CronExpressionParser.parse(cron.trim(), { tz: tz || 'UTC', currentDate: from, endDate: to });
    let n = 0;
    while (n < MISSED_COUNT_LIMIT && it.hasNext()) {
      if (it.next().toDate().getTime() > to.getTime()) break;
      n++;
    }
    return n;
  } catch {
    return 0;
  }
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
