import { NodeError } from '../../../nodes';

type IcalJs = (typeof import('ical.js', { with: { 'resolution-mode': 'import' } }))['default'];
type Component = InstanceType<IcalJs['Component']>;
type Property = InstanceType<IcalJs['Property']>;
type Time = InstanceType<IcalJs['Time']>;
type Timezone = InstanceType<IcalJs['Timezone']>;

/** ical.js, loaded at the first calendar read rather than at every start. */
let icalModule: Promise<IcalJs> | undefined;
const ical = () => (icalModule ??= import('ical.js').then((m) => m.default));

/**
 * An iCalendar file read into one object, in the shape n8n's Extract From File gives (ts-ics's
 * calendar object, dates as ISO strings once the item is JSON): `version`, `prodId`, `method`,
 * `name` (X-WR-CALNAME) and `events`, each with `uid`, `summary`, `start`, `end`, `stamp`,
 * `created`, `lastModified`, `description`, `location`, `url`, `status`, `class`, `priority`,
 * `sequence`, `categories`, `geo`, `organizer`, `attendees`, `duration`, `recurrenceRule`,
 * `timeTransparent` when the event has them. A date is `{date, type: "DATE" | "DATE-TIME"}`, with
 * `local: {date, timezone, tzoffset}` when it was given in a named time zone; a time zone the
 * file defines (VTIMEZONE) gives the instant, a time without one is read as UTC.
 *
 * Time zones are resolved from the file alone: nothing is registered process-wide, so one
 * workflow's calendar cannot change how another's times read.
 */
export async function readIcs(text: string): Promise<Record<string, unknown>> {
  const ICAL = await ical();
  let root: Component;
  try {
    root = new ICAL.Component(ICAL.parse(text) as unknown[]);
  } catch (err) {
    throw new NodeError(`The file is not a readable iCalendar file: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (root.name !== 'vcalendar') throw new NodeError(`The file is not an iCalendar file: it holds a ${root.name.toUpperCase()}, not a VCALENDAR`);
  const zones = new Map<string, Timezone>();
  for (const vtimezone of root.getAllSubcomponents('vtimezone')) {
    const zone = new ICAL.Timezone(vtimezone);
    if (zone.tzid) zones.set(zone.tzid, zone);
  }

  const date = (prop: Property | null): Record<string, unknown> | undefined => {
    const value = prop?.getFirstValue();
    if (!value || !(value instanceof ICAL.Time)) return undefined;
    return dateObject(value, prop!.getParameter('tzid') as string | undefined, zones);
  };
  const text1 = (c: Component, name: string): string | undefined => {
    const v = c.getFirstPropertyValue(name);
    return v === null || v === undefined || v === '' ? undefined : String(v as string);
  };

  const calendar: Record<string, unknown> = {};
  const put = (target: Record<string, unknown>, key: string, value: unknown) => {
    if (value !== undefined && !(Array.isArray(value) && !value.length)) target[key] = value;
  };
  put(calendar, 'version', text1(root, 'version'));
  put(calendar, 'prodId', text1(root, 'prodid'));
  put(calendar, 'method', text1(root, 'method'));
  put(calendar, 'name', text1(root, 'x-wr-calname'));

  const events = root.getAllSubcomponents('vevent').map((vevent) => {
    const event: Record<string, unknown> = {};
    put(event, 'uid', text1(vevent, 'uid'));
    put(event, 'summary', text1(vevent, 'summary'));
    put(event, 'start', date(vevent.getFirstProperty('dtstart')));
    put(event, 'end', date(vevent.getFirstProperty('dtend')));
    put(event, 'stamp', date(vevent.getFirstProperty('dtstamp')));
    put(event, 'created', date(vevent.getFirstProperty('created')));
    put(event, 'lastModified', date(vevent.getFirstProperty('last-modified')));
    put(event, 'description', text1(vevent, 'description'));
    put(event, 'location', text1(vevent, 'location'));
    put(event, 'url', text1(vevent, 'url'));
    put(event, 'status', text1(vevent, 'status'));
    put(event, 'class', text1(vevent, 'class'));
    put(event, 'timeTransparent', text1(vevent, 'transp'));
    const priority = vevent.getFirstPropertyValue('priority');
    if (typeof priority === 'number') event.priority = priority;
    const sequence = vevent.getFirstPropertyValue('sequence');
    if (typeof sequence === 'number') event.sequence = sequence;
    put(
      event,
      'categories',
      vevent.getAllProperties('categories').flatMap((p) => p.getValues().map(String)),
    );
    const geo = vevent.getFirstPropertyValue('geo');
    if (Array.isArray(geo) && geo.length === 2) event.geo = { lat: Number(geo[0]), lon: Number(geo[1]) };
    const organizer = vevent.getFirstProperty('organizer');
    if (organizer) event.organizer = person(organizer);
    put(
      event,
      'attendees',
      vevent.getAllProperties('attendee').map((p) => {
        const attendee = person(p);
        for (const [param, key] of [
          ['role', 'role'],
          ['partstat', 'partstat'],
          ['cutype', 'cutype'],
        ] as const) {
          const v = p.getParameter(param);
          if (typeof v === 'string' && v) attendee[key] = v;
        }
        const rsvp = p.getParameter('rsvp');
        if (typeof rsvp === 'string') attendee.rsvp = rsvp.toUpperCase() === 'TRUE';
        return attendee;
      }),
    );
    const duration = vevent.getFirstPropertyValue('duration');
    if (duration instanceof ICAL.Duration) event.duration = durationObject(duration);
    const rrule = vevent.getFirstPropertyValue('rrule');
    if (rrule instanceof ICAL.Recur) event.recurrenceRule = recurrence(rrule, zones);
    return event;
  });
  put(calendar, 'events', events);
  return calendar;
}

function person(prop: Property): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const cn = prop.getParameter('cn');
  if (typeof cn === 'string' && cn) out.name = cn;
  out.email = String(prop.getFirstValue() as string).replace(/^mailto:/i, '');
  return out;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function offsetText(seconds: number): string {
  const sign = seconds < 0 ? '-' : '+';
  const abs = Math.abs(seconds);
  return `${sign}${pad(Math.floor(abs / 3600))}${pad(Math.floor((abs % 3600) / 60))}`;
}

/** The instant of `time`: UTC, or its named zone's offset when the file defines the zone, else read as UTC. */
function dateObject(time: Time, tzid: string | undefined, zones: Map<string, Timezone>): Record<string, unknown> {
  const wall = Date.UTC(time.year, time.month - 1, time.day, time.isDate ? 0 : time.hour, time.isDate ? 0 : time.minute, time.isDate ? 0 : time.second);
  const type = time.isDate ? 'DATE' : 'DATE-TIME';
  const zone = tzid && !time.isDate ? zones.get(tzid) : undefined;
  if (!tzid || time.isDate) return { date: new Date(wall).toISOString(), type };
  const offset = zone ? zone.utcOffset(time) : 0;
  return {
    date: new Date(wall - offset * 1000).toISOString(),
    type,
    local: { date: new Date(wall).toISOString(), timezone: tzid, tzoffset: offsetText(offset) },
  };
}

function durationObject(d: InstanceType<IcalJs['Duration']>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (d.isNegative) out.before = true;
  for (const key of ['weeks', 'days', 'hours', 'minutes', 'seconds'] as const) if (d[key]) out[key] = d[key];
  return out;
}

const FREQUENCIES: Record<string, string> = {
  SECONDLY: 'SECONDLY',
  MINUTELY: 'MINUTELY',
  HOURLY: 'HOURLY',
  DAILY: 'DAILY',
  WEEKLY: 'WEEKLY',
  MONTHLY: 'MONTHLY',
  YEARLY: 'YEARLY',
};

function recurrence(rule: InstanceType<IcalJs['Recur']>, zones: Map<string, Timezone>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (rule.freq) out.frequency = FREQUENCIES[rule.freq] ?? rule.freq;
  if (rule.interval && rule.interval !== 1) out.interval = rule.interval;
  if (rule.count) out.count = rule.count;
  if (rule.until) out.until = dateObject(rule.until, undefined, zones);
  const parts = rule.parts as Record<string, (string | number)[] | undefined>;
  const byDay = parts.BYDAY;
  if (byDay?.length) {
    out.byDay = byDay.map((v) => {
      const m = /^([+-]?\d+)?([A-Z]{2})$/.exec(String(v));
      return m?.[1] ? { day: m[2], occurence: Number(m[1]) } : { day: m?.[2] ?? String(v) };
    });
  }
  for (const [part, key] of [
    ['BYMONTH', 'byMonth'],
    ['BYMONTHDAY', 'byMonthday'],
    ['BYYEARDAY', 'byYearday'],
    ['BYWEEKNO', 'byWeekNo'],
    ['BYHOUR', 'byHour'],
    ['BYMINUTE', 'byMinute'],
    ['BYSECOND', 'bySecond'],
    ['BYSETPOS', 'bySetPos'],
  ] as const) {
    const values = parts[part];
    if (values?.length) out[key] = values.map(Number);
  }
  if (rule.wkst && rule.wkst !== 2) out.workweekStart = ['', 'SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'][rule.wkst];
  return out;
}
