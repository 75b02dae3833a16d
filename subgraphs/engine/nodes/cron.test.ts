import assert from 'node:assert/strict';
import { countRuns, cronProblem, isoWithOffset, nextRun, validTimezone } from './cron';

test('cron: 5 or 6 fields or a macro; the reason otherwise', () => {
  assert.equal(cronProblem('*/5 * * * *'), null);
  assert.equal(cronProblem('*/10 * * * * *'), null);
  assert.equal(cronProblem('@daily'), null);
  assert.match(cronProblem('* * *')!, /5 fields/);
  assert.match(cronProblem('* * * * * * *')!, /5 fields/);
  assert.match(cronProblem('61 * * * *')!, /0-59/);
  assert.match(cronProblem('@fortnightly')!, /unknown macro/);
  assert.equal(cronProblem(''), 'is required');
  assert.equal(cronProblem(undefined), 'is required');
});

test('next runs in a time zone, across daylight saving; offsets rendered', () => {
  // 09:00 in Paris: +01:00 in winter, +02:00 in summer.
  const winter = nextRun('0 9 * * *', 'Europe/Paris', new Date('2026-11-22T12:00:00Z'))!;
  assert.equal(winter.toISOString(), '2026-11-23T08:00:00.000Z');
  assert.equal(isoWithOffset(winter, 'Europe/Paris'), '2026-11-23T09:00:00+01:00');
  const summer = nextRun('0 9 * * *', 'Europe/Paris', new Date('2026-07-01T12:00:00Z'))!;
  assert.equal(isoWithOffset(summer, 'Europe/Paris'), '2026-07-02T09:00:00+02:00');
  assert.equal(isoWithOffset(new Date('2026-01-01T00:00:00Z'), 'UTC'), '2026-01-01T00:00:00+00:00');
  assert.equal(isoWithOffset(new Date('2026-01-01T00:00:00Z'), 'Asia/Kathmandu'), '2026-01-01T05:45:00+05:45');
  assert.equal(isoWithOffset(new Date('2026-01-01T12:00:00Z'), 'America/St_Johns'), '2026-01-01T08:30:00-03:30');
  assert.ok(validTimezone('America/New_York'));
  assert.ok(!validTimezone('Mars/Olympus'));
});

test('missed runs are counted in (from, to], up to the limit', () => {
  const from = new Date('2026-01-01T00:00:00Z');
  assert.equal(countRuns('*/5 * * * *', 'UTC', from, new Date('2026-01-01T01:00:00Z')), 12);
  assert.equal(countRuns('*/5 * * * *', 'UTC', from, new Date('2026-01-01T00:04:59Z')), 0);
  assert.equal(countRuns('* * * * * *', 'UTC', from, new Date('2026-01-02T00:00:00Z')), 1000);
});

test('a node schedule of several lines fires at the first of them; missed runs count them all', () => {
  const spec = '0 0 9 * * *\n0 30 17 * * 1-5';
  const friday = new Date('2026-11-27T10:00:00Z');
  assert.equal(nextRun(spec, 'Europe/Paris', friday)!.toISOString(), '2026-11-27T16:30:00.000Z');
  assert.equal(nextRun(spec, 'Europe/Paris', new Date('2026-11-27T17:00:00Z'))!.toISOString(), '2026-11-28T08:00:00.000Z');
  // Saturday and Sunday at 9, Monday at 9 and 17:30.
  assert.equal(countRuns(spec, 'Europe/Paris', new Date('2026-11-27T17:00:00Z'), new Date('2026-11-30T17:00:00Z')), 4);
  assert.match(cronProblem(spec)!, /5 fields/);
});

test('every n-th day or week of the zone’s calendar, and @every n ms from the last due time', () => {
  // Day 20,000 since 1970-01-01 is 2024-10-04: every 4th day keeps it, and 2024-10-08.
  const days = '0 0 6 * * * !every 4 days';
  assert.equal(nextRun(days, 'UTC', new Date('2024-10-03T07:00:00Z'))!.toISOString(), '2024-10-04T06:00:00.000Z');
  assert.equal(nextRun(days, 'UTC', new Date('2024-10-04T07:00:00Z'))!.toISOString(), '2024-10-08T06:00:00.000Z');
  // Weeks begin on Sunday; 2024-10-06 (a Sunday) starts week 2858, kept by every 2nd week, 2024-10-13 the next one, skipped.
  const weeks = '0 0 6 * * 1 !every 2 weeks';
  assert.equal(nextRun(weeks, 'UTC', new Date('2024-10-05T00:00:00Z'))!.toISOString(), '2024-10-07T06:00:00.000Z');
  assert.equal(nextRun(weeks, 'UTC', new Date('2024-10-08T00:00:00Z'))!.toISOString(), '2024-10-21T06:00:00.000Z');
  // Mondays 7, 14, 21, 28 October and 4 November: the 7th, 21st and 4th.
  assert.equal(countRuns(weeks, 'UTC', new Date('2024-10-05T00:00:00Z'), new Date('2024-11-05T00:00:00Z')), 3);
  const every = '@every 7000ms';
  assert.equal(nextRun(every, 'UTC', new Date('2026-01-01T00:00:00Z'))!.toISOString(), '2026-01-01T00:00:07.000Z');
  assert.equal(countRuns(every, 'UTC', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:01:00Z')), 8);
  assert.match(cronProblem(every)!, /unknown macro/);
});
