import { ownEntry } from '../../../../../../kernel/names';
import { DateTime, type DateTimeUnit, type DurationUnit } from 'luxon';
import { NodeError, isPlainObject, type Item, type NodeContext } from '../../../../nodes';
import { eachItem, withField } from '../../date-crypto.items';
import { isoParts, readMomentText, wallOf } from '../moment-parse';
import { SERVER_ZONE, workflowTimezone } from '../zone';

/**
 * The Date & Time node's version 2 (luxon, as in n8n). Dates are read by n8n's current rules
 * (parseDate): a luxon DateTime as it is; a number, or a text that reads as one, is a Unix
 * timestamp (seconds below 12 digits, else milliseconds; a fraction is seconds); with a "From
 * Date Format" (formatDate) the luxon format reads the wall-clock time in the zone; an ISO 8601
 * text with an offset is that instant; any other text is read as moment reads it and its
 * wall-clock time is taken in the zone. The zone is the workflow's (formatDate: only with "Use
 * Workflow Timezone", else Etc/UTC). Results are luxon's ISO strings with the zone's offset.
 */

type Params = Record<string, unknown>;

const DEFAULTS: Params = {
  operation: 'getCurrentDate',
  includeTime: true,
  magnitude: '',
  timeUnit: 'days',
  duration: 0,
  date: '',
  format: 'MM/dd/yyyy',
  customFormat: '',
  mode: 'roundDown',
  toNearest: 'month',
  to: 'month',
  startDate: '',
  endDate: '',
  units: ['day'],
  part: 'month',
};

/** Each operation's default output field. */
const OUTPUT_FIELDS: Record<string, string> = {
  getCurrentDate: 'currentDate',
  addToDate: 'newDate',
  subtractFromDate: 'newDate',
  formatDate: 'formattedDate',
  roundDate: 'roundedDate',
  getTimeBetweenDates: 'timeDifference',
  extractDate: 'datePart',
};

function param(p: Params, name: string): unknown {
  return name in p ? p[name] : DEFAULTS[name];
}

function optionsOf(p: Params): Params {
  return isPlainObject(p.options) ? p.options : {};
}

/** A Unix timestamp: a fraction is seconds; otherwise fewer than 12 digits are seconds, more milliseconds. */
function fromTimestamp(n: number, zone: string): DateTime {
  const ms = Number.isInteger(n) ? n : n * 1000;
  if (Number.isInteger(ms) && String(ms).length < 12) return DateTime.fromSeconds(ms, { zone });
  return DateTime.fromMillis(ms, { zone });
}

/** A text: an ISO 8601 instant shown in the zone, or (as moment reads it) a wall-clock time taken in the zone. */
function fromText(text: string, zone: string): DateTime {
  const iso = isoParts(text);
  if (iso?.offset) return DateTime.fromISO(iso.iso, { zone });
  const reading = readMomentText(text, false);
  if (!reading) return DateTime.invalid('unparsable');
  const wall = 'wall' in reading ? reading.wall : wallOf(DateTime.fromMillis(reading.instant, { zone: SERVER_ZONE }));
  return DateTime.fromObject(wall, { zone });
}

export function parseDate(value: unknown, timezone: string | undefined, fromFormat?: string): DateTime {
  const zone = timezone || 'Etc/UTC';
  let date: DateTime;
  if (DateTime.isDateTime(value)) date = value.setZone(zone);
  else if (value instanceof Date) date = DateTime.fromJSDate(value, { zone });
  else if (typeof value === 'number' || (!fromFormat && !Number.isNaN(Number(value)))) date = fromTimestamp(Number(value), zone);
  else if (typeof value !== 'string') throw new NodeError('Invalid date type');
  else if (fromFormat) date = DateTime.fromFormat(value, fromFormat, { zone, locale: 'en-US' });
  else date = fromText(value, zone);
  if (!date.isValid) throw new NodeError('Invalid date format');
  return date.setLocale('en-US');
}

/** What an operation writes: the value, or nothing (the field is not set). */
type Result = { value: unknown } | undefined;
type Operation = (p: Params, zone: string) => Result;

function shifted(sign: 1 | -1): Operation {
  return (p, zone) => {
    const date = parseDate(param(p, 'magnitude'), zone);
    const change = { [param(p, 'timeUnit') as string]: param(p, 'duration') };
    return { value: (sign > 0 ? date.plus(change) : date.minus(change)).toString() };
  };
}

const OPERATIONS: Record<string, Operation> = {
  getCurrentDate(p, zone) {
    const tz = String(optionsOf(p).timezone || zone);
    const now = DateTime.now().setZone(tz);
    if (now.invalidReason === 'unsupported zone') throw new NodeError(`The timezone ${tz} is not valid. Please check the timezone.`);
    return { value: (param(p, 'includeTime') ? now : now.startOf('day')).toString() };
  },
  addToDate: shifted(1),
  subtractFromDate: shifted(-1),
  formatDate(p, zone) {
    const value = param(p, 'date');
    if (value === null || value === undefined) return { value };
    const { timezone, fromFormat } = optionsOf(p);
    const date = parseDate(value, timezone ? zone : undefined, fromFormat ? String(fromFormat) : undefined);
    const format = param(p, 'format') as string;
    return { value: date.toFormat(format === 'custom' ? (param(p, 'customFormat') as string) : format) };
  },
  roundDate(p, zone) {
    const date = parseDate(param(p, 'date'), zone);
    const mode = param(p, 'mode');
    if (mode === 'roundDown') return { value: date.startOf(param(p, 'toNearest') as DateTimeUnit).toString() };
    if (mode !== 'roundUp') return undefined;
    const to = param(p, 'to') as DateTimeUnit;
    return {
      value: date
        .plus({ [to]: 1 })
        .startOf(to)
        .toString(),
    };
  },
  getTimeBetweenDates(p, zone) {
    const start = parseDate(param(p, 'startDate'), zone);
    const end = parseDate(param(p, 'endDate'), zone);
    const duration = end.diff(start, param(p, 'units') as DurationUnit[]);
    return { value: optionsOf(p).isoString ? duration.toString() : duration.toObject() };
  },
  extractDate(p, zone) {
    const date = parseDate(param(p, 'date'), zone);
    const part = param(p, 'part');
    return { value: part === 'week' ? date.weekNumber : date.get(part as keyof DateTime) };
  },
};

export function runV2(ctx: NodeContext, params: Params[]): Item[] {
  const first = params[0]!;
  const name = param(first, 'operation');
  const operation = ownEntry(OPERATIONS, name);
  // n8n reads the operation and includeInputFields once, from the first item; an unknown operation outputs nothing.
  if (!operation) return [];
  const includeInput = Boolean(optionsOf(first).includeInputFields);
  const zone = workflowTimezone(ctx);
  return eachItem(ctx, (i) => {
    const p = params[i]!;
    const base = includeInput ? ctx.items[i]!.json : {};
    const result = operation(p, zone);
    const json = result ? withField(base, p.outputFieldName ?? ownEntry(OUTPUT_FIELDS, name), result.value) : { ...base };
    return { json, pairedItem: { item: i } };
  });
}
