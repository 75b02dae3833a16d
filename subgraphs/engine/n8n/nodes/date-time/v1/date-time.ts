import { ownEntry } from '../../../../../../kernel/names';
import { DateTime } from 'luxon';
import { NodeError, isPlainObject, type Item, type NodeContext } from '../../../../nodes';
import { eachItem, withField } from '../../date-crypto.items';
import { formatMoment, unwrittenTokens } from '../moment';
import { inZone, readMomentFormat, readMomentText, unreadTokens, type Reading } from '../moment-parse';
import { SERVER_ZONE, isZone, workflowTimezone, zoneNamed } from '../zone';

/**
 * The Date & Time node's version 1, which n8n wrote on moment.js: here on luxon with moment's
 * parsing and format tokens (date-time.moment*.ts), so texts and formats read as they did there.
 * A number is a Unix timestamp (seconds below 12 digits, else milliseconds); without
 * fromTimezone/toTimezone both reading and writing happen in the server's zone, as in n8n; a
 * calculation rounds as moment does (whole days and months).
 */

type Params = Record<string, unknown>;

const DEFAULTS: Params = {
  action: 'format',
  value: '',
  dataPropertyName: 'data',
  toFormat: 'MM/DD/YYYY',
  operation: 'add',
  duration: 0,
  timeUnit: 'days',
};

function param(p: Params, name: string): unknown {
  return name in p ? p[name] : DEFAULTS[name];
}

function optionsOf(p: Params): Params {
  return isPlainObject(p.options) ? p.options : {};
}

/** What moment(value) / moment.utc(value[, format]) reads from a value that is not an integer. */
function read(value: unknown, fromFormat: string | undefined, utc: boolean): Reading | null {
  if (typeof value === 'number') return { instant: value };
  if (typeof value !== 'string') return null;
  return fromFormat ? readMomentFormat(value, fromFormat, false, utc) : readMomentText(value, utc);
}

/** The formatted date; undefined when the value is undefined (n8n then leaves the item out). */
function format(p: Params, workflowZone: string): string | undefined {
  const options = optionsOf(p);
  let value = param(p, 'value');
  if (DateTime.isDateTime(value)) value = value.toISO();
  // Anything that reads as a number is a timestamp; a fraction is seconds with milliseconds.
  if (!Number.isNaN(Number(value))) {
    value = Number(value);
    if (!Number.isInteger(value)) value = (value as number) * 1000;
  }
  if (value === undefined) return undefined;
  if (options.fromFormat === undefined && !Number.isInteger(value) && !read(value, undefined, false)) {
    throw new NodeError('The date input format could not be recognized. Please set the "From Format" field');
  }
  const zoned = Boolean(options.fromTimezone || options.toTimezone);
  let date: DateTime | undefined;
  if (Number.isInteger(value)) {
    date = DateTime.fromMillis(String(value).length < 12 ? (value as number) * 1000 : (value as number), { zone: SERVER_ZONE });
  } else {
    const fromZone = zoned ? zoneNamed(String(options.fromTimezone || workflowZone)) : SERVER_ZONE;
    const reading = read(value, options.fromFormat ? String(options.fromFormat) : undefined, zoned);
    date = reading ? inZone(reading, fromZone) : undefined;
  }
  if (zoned && date) date = date.setZone(zoneNamed(String(options.toTimezone || workflowZone)));
  return formatMoment(date, param(p, 'toFormat') as string, zoned);
}

/** moment's unit names (normalizeUnits): singular, plural or shorthand, any case but M / m. */
const UNIT_ALIASES: Record<string, string> = {};
for (const [unit, short] of Object.entries({
  year: 'y',
  quarter: 'Q',
  month: 'M',
  week: 'w',
  day: 'd',
  hour: 'h',
  minute: 'm',
  second: 's',
  millisecond: 'ms',
})) {
  Object.assign(UNIT_ALIASES, { [unit]: unit, [`${unit}s`]: unit, [short]: unit });
}

function momentUnit(name: unknown): string | undefined {
  // "D" is moment's day-of-month unit, which durations ignore (it is not "d" in another case).
  if (typeof name !== 'string' || name === 'D') return undefined;
  return ownEntry(UNIT_ALIASES, name) ?? ownEntry(UNIT_ALIASES, name.toLowerCase());
}

const MS_PER: Record<string, number> = { millisecond: 1, second: 1e3, minute: 6e4, hour: 36e5 };
const DAYS_PER: Record<string, number> = { day: 1, week: 7 };
const MONTHS_PER: Record<string, number> = { month: 1, quarter: 3, year: 12 };

/** moment's rounding of whole days and months: half away from zero. */
const roundAway = (n: number): number => Math.sign(n) * Math.round(Math.abs(n));

/** moment's add/subtract: time units exactly, days and months in the calendar (an unknown unit changes nothing). */
function shift(date: DateTime, sign: number, amount: number, unitName: unknown): DateTime {
  const unit = momentUnit(unitName);
  if (!unit || !Number.isFinite(amount)) return date;
  if (unit in MS_PER) return DateTime.fromMillis(Math.trunc(date.toMillis() + sign * amount * MS_PER[unit]!), { zone: date.zone });
  if (unit in DAYS_PER) return date.plus({ days: sign * roundAway(amount * DAYS_PER[unit]!) });
  return date.plus({ months: sign * roundAway(amount * MONTHS_PER[unit]!) });
}

function calculate(p: Params): string {
  const value = param(p, 'value');
  const fromFormat = optionsOf(p).fromFormat;
  let date: DateTime;
  if (fromFormat) {
    const reading = value === null || value === undefined ? null : readMomentFormat(String(value), String(fromFormat), true, false);
    if (!reading) throw new NodeError('Date input cannot be parsed. Please recheck the value and the "From Format" field.');
    date = inZone(reading, SERVER_ZONE);
  } else {
    // n8n reads the value with the JavaScript Date parser (new Date(value).toISOString()).
    const ms = new Date(value as string | number).getTime();
    if (Number.isNaN(ms)) throw new NodeError('Unrecognized date input. Please specify a format in the "From Format" field.');
    date = DateTime.fromMillis(ms, { zone: SERVER_ZONE });
  }
  const sign = param(p, 'operation') === 'add' ? 1 : -1;
  return new Date(shift(date, sign, Number(param(p, 'duration')), param(p, 'timeUnit')).toMillis()).toISOString();
}

export function runV1(ctx: NodeContext, params: Params[]): Item[] {
  const action = param(params[0]!, 'action');
  const zone = workflowTimezone(ctx);
  return eachItem(ctx, (i) => {
    const p = params[i]!;
    const value = action === 'format' ? format(p, zone) : action === 'calculate' ? calculate(p) : undefined;
    if (value === undefined) return undefined;
    return { json: withField(ctx.items[i]!.json, param(p, 'dataPropertyName'), value), pairedItem: { item: i } };
  });
}

const literal = (v: unknown): v is string => typeof v === 'string' && !v.startsWith('=');

/** What version 1 cannot do as n8n does, seen in the parameters as stored (expressions are checked when they run). */
export function unsupportedV1(p: Params): { option: string; message: string } | undefined {
  const options = optionsOf(p);
  const action = p.action ?? DEFAULTS.action;
  if (action === 'format' && literal(p.toFormat)) {
    const [token] = unwrittenTokens(p.toFormat);
    if (token)
      return {
        option: 'toFormat',
        message: `the format token "${token}" (era names or years, zone abbreviations) is not supported: write the date without it, e.g. with Z for the offset`,
      };
  }
  if (literal(options.fromFormat) && options.fromFormat) {
    const [token] = unreadTokens(options.fromFormat);
    if (token) {
      return {
        option: 'options.fromFormat',
        message: `the format token "${token}" cannot be read (week-based dates, ordinals other than Do, eras, zone names, or a weekday without the day of the month): read the date with day, month and year tokens`,
      };
    }
  }
  for (const name of ['fromTimezone', 'toTimezone']) {
    const zone = options[name];
    if (literal(zone) && zone && !isZone(zone))
      return { option: `options.${name}`, message: `"${zone}" is not a time zone: use an IANA name such as Europe/Berlin` };
  }
  return undefined;
}
