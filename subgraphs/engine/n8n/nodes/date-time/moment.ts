import type { DateTime } from 'luxon';

/**
 * moment.js format strings on luxon, for the Date & Time node's version 1 (which n8n wrote on
 * moment): the tokens and their English output exactly as moment's default locale writes them,
 * `[text]` and `\x` escapes, and the long-date shorthands (LT, LTS, L … LLLL, l … llll). Era
 * tokens (N…, y…) and zone abbreviations (z, zz) are not written (refused at import; moment's
 * abbreviations come from its own zone data, which luxon does not have).
 */

export const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** moment's English long-date formats. */
const LONG_FORMATS: Record<string, string> = {
  LTS: 'h:mm:ss A',
  LT: 'h:mm A',
  L: 'MM/DD/YYYY',
  LL: 'MMMM D, YYYY',
  LLL: 'MMMM D, YYYY h:mm A',
  LLLL: 'dddd, MMMM D, YYYY h:mm A',
  l: 'M/D/YYYY',
  ll: 'MMM D, YYYY',
  lll: 'MMM D, YYYY h:mm A',
  llll: 'ddd, MMM D, YYYY h:mm A',
};

const LONG_TOKENS = /(\[[^[]*\])|(\\)?(LTS|LT|LL?L?L?|l{1,4})/g;

/** A format's tokens, as moment splits them: `[text]`, an escaped or plain token, or one character. */
const TOKENS =
  /(\[[^[]*\])|(\\)?([Hh]mm(ss)?|Mo|MM?M?M?|Do|DDDo|DD?D?D?|ddd?d?|do?|w[o|w]?|W[o|W]?|Qo?|N{1,5}|YYYYYY|YYYYY|YYYY|YY|y{2,4}|yo?|gg(ggg?)?|GG(GGG?)?|e|E|a|A|hh?|HH?|kk?|mm?|ss?|S{1,9}|x|X|zz?|ZZ?|.)/g;

/** The format with its long-date shorthands spelled out (moment expands up to 5 levels). */
export function expandFormat(format: string): string {
  let out = format;
  for (let i = 0; i < 5 && new RegExp(LONG_TOKENS.source).test(out); i++) {
    const next = out.replace(LONG_TOKENS, (m) => (Object.hasOwn(LONG_FORMATS, m) ? LONG_FORMATS[m]! : m));
    if (next === out) break;
    out = next;
  }
  return out;
}

export function splitFormat(format: string): string[] {
  return expandFormat(format).match(TOKENS) ?? [];
}

/** A token's text when it is not a token: `[text]` without brackets, `\x` without the backslash. */
export function literalOf(token: string): string {
  return /^\[[\s\S]/.test(token) ? token.replace(/^\[|\]$/g, '') : token.replace(/\\/g, '');
}

function pad(n: number, length: number, forceSign = false): string {
  const sign = n >= 0 ? (forceSign ? '+' : '') : '-';
  return sign + String(Math.abs(n)).padStart(length, '0');
}

export function ordinal(n: number): string {
  const last = n % 10;
  const suffix = Math.trunc((n % 100) / 10) === 1 ? 'th' : last === 1 ? 'st' : last === 2 ? 'nd' : last === 3 ? 'rd' : 'th';
  return `${n}${suffix}`;
}

function daysInYear(year: number): number {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 366 : 365;
}

/** moment's week numbering: weeks start on `dow` (0 = Sunday) and week 1 holds January's (7 + dow - doy)th day. */
function firstWeekOffset(year: number, dow: number, doy: number): number {
  const anchor = 7 + dow - doy;
  const anchorWeekday = new Date(Date.UTC(year, 0, anchor)).getUTCDay();
  return -((7 + anchorWeekday - dow) % 7) + anchor - 1;
}

function weeksInYear(year: number, dow: number, doy: number): number {
  return (daysInYear(year) - firstWeekOffset(year, dow, doy) + firstWeekOffset(year + 1, dow, doy)) / 7;
}

/** The week and week-year of the English locale (Sunday first, week 1 holds January 1st). */
function localWeek(d: DateTime): { week: number; year: number } {
  const [dow, doy] = [0, 6];
  const week = Math.floor((d.ordinal - firstWeekOffset(d.year, dow, doy) - 1) / 7) + 1;
  if (week < 1) return { year: d.year - 1, week: week + weeksInYear(d.year - 1, dow, doy) };
  const weeks = weeksInYear(d.year, dow, doy);
  return week > weeks ? { year: d.year + 1, week: week - weeks } : { year: d.year, week };
}

function offset(d: DateTime, separator: string): string {
  const minutes = Math.abs(d.offset);
  return (d.offset < 0 ? '-' : '+') + pad(Math.trunc(minutes / 60), 2) + separator + pad(minutes % 60, 2);
}

const weekday = (d: DateTime): number => d.weekday % 7;
const hour12 = (d: DateTime): number => d.hour % 12 || 12;
const quarter = (d: DateTime): number => Math.ceil(d.month / 3);
const fraction = (digits: number) => (d: DateTime) => pad(d.millisecond * 10 ** (digits - 3), digits);

type Writer = (d: DateTime) => string;

const WRITERS: Record<string, Writer> = {
  M: (d) => String(d.month),
  Mo: (d) => ordinal(d.month),
  MM: (d) => pad(d.month, 2),
  MMM: (d) => MONTHS[d.month - 1]!.slice(0, 3),
  MMMM: (d) => MONTHS[d.month - 1]!,
  Q: (d) => String(quarter(d)),
  Qo: (d) => ordinal(quarter(d)),
  D: (d) => String(d.day),
  Do: (d) => ordinal(d.day),
  DD: (d) => pad(d.day, 2),
  DDD: (d) => String(d.ordinal),
  DDDo: (d) => ordinal(d.ordinal),
  DDDD: (d) => pad(d.ordinal, 3),
  d: (d) => String(weekday(d)),
  do: (d) => ordinal(weekday(d)),
  dd: (d) => WEEKDAYS[weekday(d)]!.slice(0, 2),
  ddd: (d) => WEEKDAYS[weekday(d)]!.slice(0, 3),
  dddd: (d) => WEEKDAYS[weekday(d)]!,
  e: (d) => String(weekday(d)),
  E: (d) => String(d.weekday),
  w: (d) => String(localWeek(d).week),
  wo: (d) => ordinal(localWeek(d).week),
  ww: (d) => pad(localWeek(d).week, 2),
  W: (d) => String(d.weekNumber),
  Wo: (d) => ordinal(d.weekNumber),
  WW: (d) => pad(d.weekNumber, 2),
  gg: (d) => pad(localWeek(d).year % 100, 2),
  gggg: (d) => pad(localWeek(d).year, 4),
  ggggg: (d) => pad(localWeek(d).year, 5),
  GG: (d) => pad(d.weekYear % 100, 2),
  GGGG: (d) => pad(d.weekYear, 4),
  GGGGG: (d) => pad(d.weekYear, 5),
  Y: (d) => (d.year <= 9999 ? pad(d.year, 4) : `+${d.year}`),
  YY: (d) => pad(d.year % 100, 2),
  YYYY: (d) => pad(d.year, 4),
  YYYYY: (d) => pad(d.year, 5),
  YYYYYY: (d) => pad(d.year, 6, true),
  a: (d) => (d.hour > 11 ? 'pm' : 'am'),
  A: (d) => (d.hour > 11 ? 'PM' : 'AM'),
  H: (d) => String(d.hour),
  HH: (d) => pad(d.hour, 2),
  h: (d) => String(hour12(d)),
  hh: (d) => pad(hour12(d), 2),
  k: (d) => String(d.hour || 24),
  kk: (d) => pad(d.hour || 24, 2),
  hmm: (d) => `${hour12(d)}${pad(d.minute, 2)}`,
  hmmss: (d) => `${hour12(d)}${pad(d.minute, 2)}${pad(d.second, 2)}`,
  Hmm: (d) => `${d.hour}${pad(d.minute, 2)}`,
  Hmmss: (d) => `${d.hour}${pad(d.minute, 2)}${pad(d.second, 2)}`,
  m: (d) => String(d.minute),
  mm: (d) => pad(d.minute, 2),
  s: (d) => String(d.second),
  ss: (d) => pad(d.second, 2),
  S: (d) => String(Math.floor(d.millisecond / 100)),
  SS: (d) => pad(Math.floor(d.millisecond / 10), 2),
  SSS: (d) => pad(d.millisecond, 3),
  SSSS: fraction(4),
  SSSSS: fraction(5),
  SSSSSS: fraction(6),
  SSSSSSS: fraction(7),
  SSSSSSSS: fraction(8),
  SSSSSSSSS: fraction(9),
  Z: (d) => offset(d, ':'),
  ZZ: (d) => offset(d, ''),
  X: (d) => String(Math.floor(d.toMillis() / 1000)),
  x: (d) => String(d.toMillis()),
};

/** Tokens moment writes that this engine does not (era names and years, zone abbreviations). */
const UNWRITTEN = /^(N{1,5}|y{2,4}|yo?|zz?)$/;

export function isToken(token: string): boolean {
  return token in WRITERS || UNWRITTEN.test(token);
}

/** The tokens of a format this engine cannot write, for the import's refusal. */
export function unwrittenTokens(format: string): string[] {
  return [...new Set(splitFormat(format).filter((t) => UNWRITTEN.test(t)))];
}

const compiled = new Map<string, Array<string | Writer>>();

function compile(format: string): Array<string | Writer> {
  let parts = compiled.get(format);
  if (parts) return parts;
  parts = splitFormat(format).map((token) => {
    if (UNWRITTEN.test(token)) throw new Error(`The format token "${token}" is not supported (era names and zone abbreviations cannot be written)`);
    return (Object.hasOwn(WRITERS, token) ? WRITERS[token] : undefined) ?? literalOf(token);
  });
  if (compiled.size > 1000) compiled.clear();
  compiled.set(format, parts);
  return parts;
}

/**
 * moment's `format()`. An empty format is moment's default, ISO 8601 with the offset, or with
 * "Z" for a moment put in a zone (`zoned`: moment-timezone's UTC mode) at offset 0.
 */
export function formatMoment(d: DateTime | undefined, format: string, zoned: boolean): string {
  if (!d?.isValid) return 'Invalid date';
  const fallback = zoned && d.offset === 0 ? 'YYYY-MM-DDTHH:mm:ss[Z]' : 'YYYY-MM-DDTHH:mm:ssZ';
  return compile(format || fallback)
    .map((part) => (typeof part === 'string' ? part : part(d)))
    .join('');
}
