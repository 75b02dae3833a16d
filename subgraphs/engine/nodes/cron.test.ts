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
