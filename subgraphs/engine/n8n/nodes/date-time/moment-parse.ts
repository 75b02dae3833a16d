import { DateTime } from 'luxon';
import { MONTHS, WEEKDAYS, isToken, literalOf, splitFormat } from './moment';

/**
 * How moment.js reads a date, for the Date & Time node (v1 reads with moment; v2 takes a
 * wall-clock time from moment for texts that are not ISO 8601 with an offset): without a format,
 * moment's ISO 8601 forms, then RFC 2822, then the JavaScript Date parser (a zoneless text in the
 * server's zone); with a format, moment's token parser, lenient (skips what precedes each token)
 * or strict. A reading is a wall-clock time (no zone named) or an instant.
 */

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

export type Reading = { wall: WallTime } | { instant: number };

/**
 * The reading as a luxon DateTime in `zone`: a wall-clock time is that time there. One that
 * happens twice (when summer time ends) is the earlier, as moment and the JavaScript Date take
 * it (luxon takes the later).
 */
export function inZone(reading: Reading, zone: string): DateTime {
  if ('instant' in reading) return DateTime.fromMillis(reading.instant, { zone });
  const later = DateTime.fromObject(reading.wall, { zone });
  if (!later.isValid) return later;
  const offsetBefore = later.zone.offset(later.toMillis() - 6 * 3_600_000);
  if (offsetBefore <= later.offset) return later;
  const earlier = DateTime.fromMillis(later.toMillis() - (offsetBefore - later.offset) * 60_000, { zone });
  return earlier.toFormat('yyyy-MM-dd HH:mm:ss.SSS') === later.toFormat('yyyy-MM-dd HH:mm:ss.SSS') ? earlier : later;
}

// ---------------------------------------------------------------------------------------------
// Without a format

const ISO_EXTENDED =
  /^\s*((?:[+-]\d{6}|\d{4})-(?:\d\d-\d\d|W\d\d-\d|W\d\d|\d\d\d|\d\d))(?:(T| )(\d\d(?::\d\d(?::\d\d(?:[.,]\d+)?)?)?)([+-]\d\d(?::?\d\d)?|\s*Z)?)?$/;
const ISO_BASIC = /^\s*((?:[+-]\d{6}|\d{4})(?:\d\d\d\d|W\d\d\d|W\d\d|\d\d\d|\d\d|))(?:(T| )(\d\d(?:\d\d(?:\d\d(?:[.,]\d+)?)?)?)([+-]\d\d(?::?\d\d)?|\s*Z)?)?$/;
/** Date forms moment accepts without a time only. */
const DATE_ONLY = /^(?:[+-]?\d{4,6}-?W\d\d|\d{4}-\d\d|\d{6}|\d{4})$/;

/** A text in moment's ISO 8601 forms, with whether it names an offset; undefined when it is not one. */
export function isoParts(text: string): { iso: string; offset: boolean } | undefined {
  const m = ISO_EXTENDED.exec(text) ?? ISO_BASIC.exec(text);
  if (!m) return undefined;
  const [, date, , time, zone] = m;
  if (time !== undefined && DATE_ONLY.test(date!)) return undefined;
  return { iso: date! + (time ? `T${time}` : '') + (zone ? zone.trim() : ''), offset: zone !== undefined };
}

export function wallOf(d: DateTime): WallTime {
  return { year: d.year, month: d.month, day: d.day, hour: d.hour, minute: d.minute, second: d.second, millisecond: d.millisecond };
}

function readIso(text: string): Reading | null | undefined {
  const parts = isoParts(text);
  if (!parts) return undefined;
  const d = DateTime.fromISO(parts.iso, { zone: 'utc', setZone: true });
  if (!d.isValid) return null;
  return parts.offset ? { instant: d.toMillis() } : { wall: wallOf(d) };
}

const RFC_2822 =
  /^(?:(Mon|Tue|Wed|Thu|Fri|Sat|Sun),?\s)?(\d{1,2})\s(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s(\d{2,4})\s(\d\d):(\d\d)(?::(\d\d))?\s(?:(UT|GMT|[ECMP][SD]T)|([Zz])|([+-]\d{4}))$/;
/** Hours from UTC of RFC 2822's obsolete North American zones. */
const RFC_ZONES: Record<string, number> = { UT: 0, GMT: 0, EDT: -4, EST: -5, CDT: -5, CST: -6, MDT: -6, MST: -7, PDT: -7, PST: -8 };

function readRfc2822(text: string): Reading | null | undefined {
  const cleaned = text
    .replace(/\([^()]*\)|[\n\t]/g, ' ')
    .replace(/(\s\s+)/g, ' ')
    .trim();
  const m = RFC_2822.exec(cleaned);
  if (!m) return undefined;
  const [, weekday, day, month, yearText, hour, minute, second, named, , numeric] = m;
  const short = Number(yearText);
  // moment's two- and three-digit years: up to 49 is 20xx, up to 999 is 19xx.
  const year = short <= 49 ? 2000 + short : short <= 999 ? 1900 + short : short;
  const offsetMinutes = named
    ? RFC_ZONES[named]! * 60
    : numeric
      ? (numeric[0] === '-' ? -1 : 1) * (Number(numeric.slice(1, 3)) * 60 + Number(numeric.slice(3)))
      : 0;
  const utc = Date.UTC(
    year,
    MONTHS.findIndex((n) => n.startsWith(month!)),
    Number(day),
    Number(hour),
    Number(minute),
    Number(second ?? 0),
  );
  if (weekday && WEEKDAYS[new Date(utc).getUTCDay()]!.slice(0, 3) !== weekday) return null;
  return { instant: utc - offsetMinutes * 60_000 };
}

/**
 * moment(text) (utc false) or moment.utc(text) (utc true) without a format; null when moment
 * finds it invalid.
 */
export function readMomentText(text: string, utc: boolean): Reading | null {
  const iso = readIso(text);
  if (iso !== undefined) return iso;
  const rfc = readRfc2822(text);
  if (rfc !== undefined) return rfc;
  // moment's last resort, the JavaScript Date parser (in UTC mode with " UTC" appended).
  const ms = new Date(utc ? `${text} UTC` : text).getTime();
  return Number.isNaN(ms) ? null : { instant: ms };
}

// ---------------------------------------------------------------------------------------------
// With a format

interface Parse {
  year?: number;
  month?: number;
  day?: number;
  hour?: number;
  minute?: number;
  second?: number;
  millisecond?: number;
  dayOfYear?: number;
  weekday?: number;
  offset?: number;
  instant?: number;
  pm?: boolean;
  bigHour?: boolean;
  invalidMonth?: boolean;
}

type Reader = { lenient: RegExp; strict: RegExp; read: (input: string, into: Parse) => void };

const int = (s: string): number => Math.trunc(Number(s)) || 0;
const twoDigitYear = (s: string): number => int(s) + (int(s) > 68 ? 1900 : 2000);
const namesPattern = (names: string[]) =>
  names
    .slice()
    .sort((a, b) => b.length - a.length)
    .join('|');
const MONTHS_SHORT = MONTHS.map((n) => n.slice(0, 3));
const WEEKDAYS_SHORT = WEEKDAYS.map((n) => n.slice(0, 3));
const WEEKDAYS_MIN = WEEKDAYS.map((n) => n.slice(0, 2));

function nameIndex(names: string[][], input: string): number {
  const lower = input.toLowerCase();
  return names[0]!.findIndex((_, i) => names.some((list) => list[i]!.toLowerCase() === lower));
}

function reader(lenient: RegExp, strict: RegExp, read: Reader['read']): Reader {
  return { lenient, strict, read };
}

const D1to2 = /\d\d?/;
const D2 = /\d\d/;
const NO_LEADING_ZERO = /^[1-9]\d?/;
const HAS_ZERO = /^([1-9]\d|\d)/;
const set =
  (field: 'month' | 'day' | 'hour' | 'minute' | 'second', shift = 0) =>
  (s: string, p: Parse) =>
    void (p[field] = int(s) + shift);
const hour12 = (read: Reader['read']) => (s: string, p: Parse) => {
  read(s, p);
  p.bigHour = true;
};
const monthName = (s: string, p: Parse) => {
  const i = nameIndex([MONTHS, MONTHS_SHORT], s);
  if (i < 0) p.invalidMonth = true;
  else p.month = i + 1;
};
const weekdayName = (s: string, p: Parse) => void (p.weekday = nameIndex([WEEKDAYS, WEEKDAYS_SHORT, WEEKDAYS_MIN], s));
const milliseconds = (s: string, p: Parse) => void (p.millisecond = Math.trunc(Number(`0.${s}`) * 1000));
const hourMinute = (withSeconds: boolean) => (s: string, p: Parse) => {
  const cut = s.length - (withSeconds ? 4 : 2);
  p.hour = int(s.slice(0, cut));
  p.minute = int(s.slice(cut, cut + 2));
  if (withSeconds) p.second = int(s.slice(cut + 2));
};
const OFFSET = /Z|[+-]\d\d(?::?\d\d)?/i;
const zoneOffset = (s: string, p: Parse) => {
  const [sign, hours, minutes] = s.match(/([+-]|\d\d)/g) ?? ['-', '0', '0'];
  const total = Number(hours ?? 0) * 60 + int(minutes ?? '0');
  p.offset = total === 0 ? 0 : sign === '+' ? total : -total;
};

const monthNames = new RegExp(`^(${namesPattern([...MONTHS, ...MONTHS_SHORT])})`, 'i');
const weekdayNames = new RegExp(`^(${namesPattern([...WEEKDAYS, ...WEEKDAYS_SHORT, ...WEEKDAYS_MIN])})`, 'i');
const fraction = reader(/\d{1,3}/, /\d+/, milliseconds);

/** moment's parse tokens (the English locale): lenient and strict patterns, and what each sets. */
const READERS: Record<string, Reader> = {
  M: reader(D1to2, NO_LEADING_ZERO, set('month')),
  MM: reader(D1to2, D2, set('month')),
  MMM: reader(monthNames, new RegExp(`^(${MONTHS_SHORT.join('|')})`, 'i'), monthName),
  MMMM: reader(monthNames, new RegExp(`^(${namesPattern(MONTHS)})`, 'i'), monthName),
  Q: reader(/\d/, /\d/, (s, p) => void (p.month = (int(s) - 1) * 3 + 1)),
  D: reader(D1to2, NO_LEADING_ZERO, set('day')),
  DD: reader(D1to2, D2, set('day')),
  Do: reader(/\d{1,2}(th|st|nd|rd)|\d{1,2}/, /\d{1,2}(th|st|nd|rd)/, (s, p) => void (p.day = int(s.match(D1to2)![0]))),
  DDD: reader(/\d{1,3}/, /\d{1,3}/, (s, p) => void (p.dayOfYear = int(s))),
  DDDD: reader(/\d{1,3}/, /\d{3}/, (s, p) => void (p.dayOfYear = int(s))),
  d: reader(D1to2, D1to2, (s, p) => void (p.weekday = int(s))),
  dd: reader(weekdayNames, new RegExp(`^(${WEEKDAYS_MIN.join('|')})`, 'i'), weekdayName),
  ddd: reader(weekdayNames, new RegExp(`^(${WEEKDAYS_SHORT.join('|')})`, 'i'), weekdayName),
  dddd: reader(weekdayNames, new RegExp(`^(${namesPattern(WEEKDAYS)})`, 'i'), weekdayName),
  Y: reader(/[+-]?\d+/, /[+-]?\d+/, (s, p) => void (p.year = parseInt(s, 10))),
  YY: reader(D1to2, D2, (s, p) => void (p.year = twoDigitYear(s))),
  YYYY: reader(/\d{1,4}/, /\d{4}/, (s, p) => void (p.year = s.length === 2 ? twoDigitYear(s) : int(s))),
  YYYYY: reader(/[+-]?\d{1,6}/, /[+-]?\d{6}/, (s, p) => void (p.year = int(s))),
  YYYYYY: reader(/[+-]?\d{1,6}/, /[+-]?\d{6}/, (s, p) => void (p.year = int(s))),
  a: reader(/[ap]\.?m?\.?/i, /[ap]\.?m?\.?/i, (s, p) => void (p.pm = s.toLowerCase().startsWith('p'))),
  A: reader(/[ap]\.?m?\.?/i, /[ap]\.?m?\.?/i, (s, p) => void (p.pm = s.toLowerCase().startsWith('p'))),
  H: reader(D1to2, HAS_ZERO, set('hour')),
  HH: reader(D1to2, D2, set('hour')),
  h: reader(D1to2, HAS_ZERO, hour12(set('hour'))),
  hh: reader(D1to2, D2, hour12(set('hour'))),
  k: reader(D1to2, HAS_ZERO, (s, p) => void (p.hour = int(s) === 24 ? 0 : int(s))),
  kk: reader(D1to2, D2, (s, p) => void (p.hour = int(s) === 24 ? 0 : int(s))),
  hmm: reader(/\d\d\d\d?/, /\d\d\d\d?/, hour12(hourMinute(false))),
  hmmss: reader(/\d\d\d\d\d\d?/, /\d\d\d\d\d\d?/, hour12(hourMinute(true))),
  Hmm: reader(/\d\d\d\d?/, /\d\d\d\d?/, hourMinute(false)),
  Hmmss: reader(/\d\d\d\d\d\d?/, /\d\d\d\d\d\d?/, hourMinute(true)),
  m: reader(D1to2, HAS_ZERO, set('minute')),
  mm: reader(D1to2, D2, set('minute')),
  s: reader(D1to2, HAS_ZERO, set('second')),
  ss: reader(D1to2, D2, set('second')),
  S: reader(/\d{1,3}/, /\d/, milliseconds),
  SS: reader(/\d{1,3}/, D2, milliseconds),
  SSS: reader(/\d{1,3}/, /\d{3}/, milliseconds),
  ...Object.fromEntries([4, 5, 6, 7, 8, 9].map((n) => ['S'.repeat(n), fraction])),
  Z: reader(OFFSET, OFFSET, zoneOffset),
  ZZ: reader(OFFSET, OFFSET, zoneOffset),
  X: reader(/[+-]?\d+(\.\d{1,3})?/, /[+-]?\d+(\.\d{1,3})?/, (s, p) => void (p.instant = Number.parseFloat(s) * 1000)),
  x: reader(/[+-]?\d+/, /[+-]?\d+/, (s, p) => void (p.instant = int(s))),
};

const DAY_TOKENS = new Set(['D', 'DD', 'Do', 'DDD', 'DDDD']);
const WEEKDAY_TOKENS = new Set(['d', 'dd', 'ddd', 'dddd']);

/**
 * Tokens of a parse format this engine does not read: week-based dates (w, W, gg…, GG…, e, E),
 * ordinals other than Do, eras, zone abbreviations, and a weekday without a day to check it against.
 */
export function unreadTokens(format: string): string[] {
  const tokens = splitFormat(format);
  const unread = tokens.filter((t) => isToken(t) && !(t in READERS));
  if (tokens.some((t) => WEEKDAY_TOKENS.has(t)) && !tokens.some((t) => DAY_TOKENS.has(t))) unread.push(tokens.find((t) => WEEKDAY_TOKENS.has(t))!);
  return [...new Set(unread)];
}

function escapeRegExp(s: string): RegExp {
  return new RegExp(s.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&'));
}

const formats = new Map<string, string[]>();

function tokensOf(format: string): string[] {
  let tokens = formats.get(format);
  if (!tokens) {
    const unread = unreadTokens(format);
    if (unread.length)
      throw new Error(`The format token "${unread[0]}" cannot be read (week-based dates, ordinals other than Do, eras and zone names are not supported)`);
    tokens = splitFormat(format);
    if (formats.size > 1000) formats.clear();
    formats.set(format, tokens);
  }
  return tokens;
}

/** Reads the tokens in order: what each found, and how much of the text was read. */
function scan(text: string, tokens: string[], strict: boolean): { p: Parse; read: number; found: boolean; missing: boolean } {
  const p: Parse = {};
  let rest = text;
  let read = 0;
  let found = false;
  let missing = false;
  for (const token of tokens) {
    const r = Object.hasOwn(READERS, token) ? READERS[token] : undefined;
    const pattern = r ? (strict ? r.strict : r.lenient) : escapeRegExp(literalOf(token));
    const input = rest.match(pattern)?.[0];
    if (input) {
      rest = rest.slice(rest.indexOf(input) + input.length);
      read += input.length;
    }
    if (r && input) {
      found = true;
      r.read(input, p);
    } else if (r || (strict && !input)) missing = true;
  }
  return { p, read, found, missing };
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The parsed fields completed as moment does (leading date fields from today, the rest 0 or 1), or null when out of range. */
function complete(p: Parse, today: DateTime): WallTime | null {
  const fields = [p.year, p.month, p.day];
  if (p.dayOfYear !== undefined) {
    const year = p.year ?? today.year;
    const length = new Date(Date.UTC(year, 1, 29)).getUTCDate() === 29 ? 366 : 365;
    if (p.dayOfYear < 1 || p.dayOfYear > length) return null;
    const date = new Date(Date.UTC(year, 0, p.dayOfYear));
    fields[1] = date.getUTCMonth() + 1;
    fields[2] = date.getUTCDate();
  }
  const now = [today.year, today.month, today.day];
  for (let i = 0; i < 3 && fields[i] === undefined; i++) fields[i] = now[i];
  const [year, month = 1, day = 1] = fields as number[];
  let hour = p.hour ?? 0;
  if (p.pm !== undefined && p.pm && hour < 12) hour += 12;
  if (p.pm !== undefined && !p.pm && hour === 12) hour = 0;
  const wall = { year: year!, month, day, hour, minute: p.minute ?? 0, second: p.second ?? 0, millisecond: p.millisecond ?? 0 };
  const midnight24 = wall.hour === 24 && wall.minute === 0 && wall.second === 0 && wall.millisecond === 0;
  if (p.invalidMonth || month < 1 || month > 12 || day < 1 || day > daysInMonth(year!, month)) return null;
  if (wall.hour < 0 || (wall.hour > 23 && !midnight24) || wall.minute > 59 || wall.second > 59 || wall.millisecond > 999) return null;
  if (!midnight24) return wall;
  // 24:00 is the next day's midnight.
  const next = new Date(Date.UTC(wall.year, month - 1, day + 1));
  return { ...wall, year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate(), hour: 0 };
}

/**
 * moment(text, format[, strict]) in local mode or moment.utc (utc true: missing date fields
 * come from today in UTC); null when moment finds the result invalid.
 */
export function readMomentFormat(text: string, format: string, strict: boolean, utc: boolean): Reading | null {
  const tokens = tokensOf(format);
  const { p, read, found, missing } = scan(text, tokens, strict);
  if (!found) return null;
  if (strict && (missing || read < text.length || (p.bigHour && !(p.hour! > 0 && p.hour! <= 12)))) return null;
  if (p.instant !== undefined) return Number.isNaN(p.instant) ? null : { instant: p.instant };
  const anyField = [p.year, p.month, p.day, p.hour, p.minute, p.second, p.millisecond].some((v) => v !== undefined);
  if (p.pm !== undefined && !anyField) return null;
  const wall = complete(p, DateTime.now().setZone(utc ? 'utc' : 'system'));
  if (!wall) return null;
  if (p.weekday !== undefined && new Date(Date.UTC(wall.year, wall.month - 1, wall.day)).getUTCDay() !== p.weekday) return null;
  if (p.offset !== undefined) {
    const ms = DateTime.fromObject(wall, { zone: 'utc' }).toMillis();
    return { instant: ms - p.offset * 60_000 };
  }
  return { wall };
}
