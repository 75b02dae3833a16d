import type { DateTime as LuxonDateTime, DateTimeUnit, DurationLikeObject, DurationUnit } from 'luxon';
import type { ExtensionTable, Lib } from './types';

/**
 * n8n's date extensions (on luxon DateTimes, JavaScript Dates, and ISO strings such as
 * `2024-01-31T12:00:00.000Z` read as Dates), and the conversions to DateTime that strings and
 * numbers share. Written for the expression prelude: the source text runs in the sandbox, so
 * nothing outside the function bodies may be referenced except `lib`.
 *
 * A Date in gives a Date out (n8n converts through luxon and back); a DateTime gives a DateTime.
 */

/** `lib.stringToDateTime` and `lib.numberToDateTime` (strings' and numbers' `toDateTime()`). */
export function dateConversions(lib: Lib): Pick<Lib, 'stringToDateTime' | 'numberToDateTime' | 'parseDateTime'> {
  // luxon is built in the context on first use (prelude.ts lazyLuxon): read it on use.
  const luxon = () => lib.luxon.DateTime;

  function numberToDateTime(n: number, format = 'ms'): LuxonDateTime {
    switch (format) {
      case 'ms':
        return luxon().fromMillis(n);
      case 's':
        return luxon().fromSeconds(n);
      case 'us':
        return luxon().fromMillis(n / 1000);
      case 'excel':
        // Excel counts days from 1900-01-00, and takes 1900 for a leap year.
        return luxon().fromSeconds((n - 25569) * 86_400);
      default:
        return lib.fail(`Unsupported format '${String(format)}'. toDateTime() supports 'ms', 's', 'us' and 'excel'.`);
    }
  }

  /** A DateTime from a DateTime, a Date, or a string in ISO, HTTP, RFC 2822, SQL or any Date.parse format. */
  function parseDateTime(value: unknown): LuxonDateTime {
    if (luxon().isDateTime(value) && value.isValid) return value;
    if (value instanceof Date) {
      const d = luxon().fromJSDate(value);
      if (d.isValid) return d;
    }
    const text = String(value).trim();
    for (const parse of ['fromISO', 'fromHTTP', 'fromRFC2822', 'fromSQL'] as const) {
      const d = luxon()[parse](text, { setZone: true });
      if (d.isValid) return d;
    }
    const d = luxon().fromMillis(Date.parse(text));
    if (d.isValid) return d;
    throw new Error('Value is not a valid date');
  }

  function stringToDateTime(s: string, format?: string): LuxonDateTime {
    try {
      if (!format) return parseDateTime(s);
      if (['ms', 's', 'us', 'excel'].includes(format)) return numberToDateTime(Number(s), format);
      return luxon().fromFormat(s, format);
    } catch {
      return lib.fail('cannot convert to Luxon DateTime');
    }
  }

  return { numberToDateTime, stringToDateTime, parseDateTime };
}

export function dateExtensions(lib: Lib): ExtensionTable {
  // Read on use: toInt(), isEmpty() and the like work on Dates without building luxon.
  const luxon = () => lib.luxon.DateTime;
  type Moment = LuxonDateTime | Date;
  const DURATION_UNITS = ['milliseconds', 'seconds', 'minutes', 'hours', 'days', 'weeks', 'months', 'quarters', 'years'];
  const DATE_PARTS = ['day', 'week', 'month', 'year', 'hour', 'minute', 'second', 'millisecond', 'weekNumber', 'yearDayNumber', 'weekday'];
  // Units n8n accepts besides luxon's own: singular for durations, plural and short for dates.
  const TO_DURATION_UNIT: Record<string, string> = {
    day: 'days',
    month: 'months',
    year: 'years',
    week: 'weeks',
    hour: 'hours',
    minute: 'minutes',
    second: 'seconds',
    millisecond: 'milliseconds',
    ms: 'milliseconds',
    sec: 'seconds',
    secs: 'seconds',
    hr: 'hours',
    hrs: 'hours',
    min: 'minutes',
    mins: 'minutes',
  };
  const TO_DATE_UNIT: Record<string, string> = {
    days: 'day',
    months: 'month',
    years: 'year',
    hours: 'hour',
    minutes: 'minute',
    seconds: 'second',
    milliseconds: 'millisecond',
    hrs: 'hour',
    hr: 'hour',
    mins: 'minute',
    min: 'minute',
    secs: 'second',
    sec: 'second',
    ms: 'millisecond',
  };

  // luxon's own test (DateTime.isDateTime), which needs no luxon: without it there are no DateTimes.
  const isDateTime = (d: unknown): d is LuxonDateTime => !!d && (d as { isLuxonDateTime?: boolean }).isLuxonDateTime === true;
  const asDateTime = (d: Moment) => (isDateTime(d) ? d : luxon().fromJSDate(d));
  /** Applies `f` on the DateTime of `d`, giving back the kind `d` came as. */
  const keepKind = (d: Moment, f: (dt: LuxonDateTime) => LuxonDateTime): Moment => (isDateTime(d) ? f(d) : f(luxon().fromJSDate(d)).toJSDate());
  // Units are the expression's text: only the tables' own names translate (never `constructor`).
  const unitIn = (table: Record<string, string>, unit: string) => (Object.prototype.hasOwnProperty.call(table, unit) ? table[unit]! : unit);
  const duration = (n: unknown, unit: string) => ({ [unitIn(TO_DURATION_UNIT, unit)]: n }) as DurationLikeObject;

  /** Strings are read by the Date parser here (n8n's isBetween). */
  function comparable(v: unknown): LuxonDateTime | undefined {
    if (typeof v === 'string') {
      const d = luxon().fromJSDate(new Date(v));
      return d.invalidReason === null ? d : undefined;
    }
    if (v instanceof Date) return luxon().fromJSDate(v);
    return isDateTime(v) ? v : undefined;
  }

  function toDateTime(d: unknown): LuxonDateTime {
    if (isDateTime(d)) return d;
    if (typeof d === 'string') return lib.stringToDateTime(d);
    return luxon().fromJSDate(d as Date);
  }

  const shift =
    (direction: 'plus' | 'minus') =>
    (d: Moment, args: unknown[]): Moment => {
      if (args.length === 1) return keepKind(d, (dt) => dt[direction](args[0] as DurationLikeObject));
      const [n = 0, unit = 'minutes'] = args as [number?, string?];
      return keepKind(d, (dt) => dt[direction](duration(n, unit)));
    };

  function diffTo(d: LuxonDateTime, [other, unit = 'days']: [unknown?, (string | string[])?]) {
    let units = Array.isArray(unit) ? unit : [unit];
    if (units.length === 0) units = ['days'];
    const unsupported = units.find((u) => !DATE_PARTS.includes(u) && !DURATION_UNITS.includes(u));
    if (unsupported !== undefined) {
      lib.fail(`Unsupported unit '${String(unsupported)}'. Supported: ${DURATION_UNITS.map((u) => `'${u}'`).join(', ')}.`);
    }
    const diff = d.diff(toDateTime(other), units as DurationUnit[]);
    return units.length > 1 ? diff.toObject() : diff.as(units[0] as DurationUnit);
  }

  const toMillis = (d: Moment) => (isDateTime(d) ? d.toMillis() : d.getTime());
  return {
    beginningOf: (d: Moment, [unit = 'week']: [string?]) => keepKind(d, (dt) => dt.startOf(unitIn(TO_DATE_UNIT, unit) as DateTimeUnit)),
    endOfMonth: (d: Moment) => keepKind(d, (dt) => dt.endOf('month')),
    extract(d: Moment, [part = 'week']: [string?]) {
      if (part === 'yearDayNumber') {
        // The day of the year in the server's local time, as n8n computes it.
        const date = isDateTime(d) ? d.toJSDate() : d;
        const start = new Date(date.getFullYear(), 0, 0);
        const diff = date.getTime() - start.getTime() + (start.getTimezoneOffset() - date.getTimezoneOffset()) * 60_000;
        return Math.floor(diff / 86_400_000);
      }
      const unit = part === 'week' ? 'weekNumber' : unitIn(TO_DATE_UNIT, part);
      return asDateTime(d).get(unit as keyof LuxonDateTime);
    },
    isBetween(d: Moment, args: unknown[]) {
      if (args.length !== 2) lib.fail('isBetween(): expected exactly two args');
      const [a, b] = args.map(comparable);
      if (!a || !b) return undefined;
      return a > b ? b < d && d < a : b > d && d > a;
    },
    isDst: (d: Moment) => asDateTime(d).isInDST,
    isInLast(d: Moment, [n = 0, unit = 'minutes']: [number?, string?]) {
      const now = luxon().now();
      const dt = asDateTime(d);
      return now.minus(duration(n, unit)) <= dt && dt <= luxon().now();
    },
    isWeekend: (d: Moment) => [6, 7].includes(asDateTime(d).weekday),
    minus: shift('minus'),
    plus: shift('plus'),
    format: (d: Moment, [format, options = {}]: [string?, object?]) => asDateTime(d).toFormat(format as string, { ...options }),
    toDateTime,
    diffTo,
    diffToNow: (d: LuxonDateTime, [unit]: [(string | string[])?]) => diffTo(d, [luxon().now(), unit]),
    toInt: toMillis,
    toFloat: toMillis,
    toBoolean: () => undefined,
    isEmpty: () => false,
    isNotEmpty: () => true,
  };
}
