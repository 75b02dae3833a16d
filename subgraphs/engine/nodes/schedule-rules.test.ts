import assert from 'node:assert/strict';
import { n8nIntervalSpec, n8nScheduleSpec, triggerSchedule } from './schedule-rules';

test('n8n Schedule Trigger rules as schedule lines, with n8n’s defaults', () => {
  assert.equal(n8nScheduleSpec({}), '0 0 0 * * *');
  const rules = (...interval: Record<string, unknown>[]) => n8nScheduleSpec({ rule: { interval } });
  assert.equal(rules({ field: 'seconds' }), '*/30 * * * * *');
  assert.equal(rules({ field: 'seconds', secondsInterval: 10 }), '*/10 * * * * *');
  assert.equal(rules({ field: 'minutes' }), '0 */5 * * * *');
  assert.equal(rules({ field: 'hours', hoursInterval: 2, triggerAtMinute: 15 }), '0 15 */2 * * *');
  assert.equal(rules({ field: 'days', triggerAtHour: 9 }), '0 0 9 * * *');
  assert.equal(rules({ field: 'days', daysInterval: 3, triggerAtHour: 9, triggerAtMinute: 30 }), '0 30 9 * * * !every 3 days');
  assert.equal(rules({ field: 'weeks', triggerAtDay: [1, 5], triggerAtHour: 8 }), '0 0 8 * * 1,5');
  assert.equal(rules({ field: 'weeks' }), '0 0 0 * * 0');
  assert.equal(rules({ field: 'weeks', weeksInterval: 2, triggerAtDay: [] }), '0 0 0 * * * !every 2 weeks');
  assert.equal(rules({ field: 'months', monthsInterval: 3, triggerAtDayOfMonth: 15, triggerAtHour: 6 }), '0 0 6 15 */3 *');
  assert.equal(rules({ field: 'cronExpression', expression: '=0 9 * * 1-5' }), '0 9 * * 1-5');
  assert.equal(rules({ field: 'days', triggerAtHour: 9 }, { field: 'hours', triggerAtMinute: 5 }), '0 0 9 * * *\n0 5 */1 * * *');
});

test('a rule the scheduler cannot run is refused naming it', () => {
  const refused = (interval: unknown[], pattern: RegExp) => assert.throws(() => n8nScheduleSpec({ rule: { interval } }), pattern);
  refused([], /at least one rule/);
  refused([{ field: 'seconds', secondsInterval: 0 }], /rule\.interval\[0\]\.secondsInterval must be a whole number from 1 to 59/);
  refused([{ field: 'days' }, { field: 'days', triggerAtHour: 24 }], /rule\.interval\[1\]\.triggerAtHour/);
  refused([{ field: 'weeks', triggerAtDay: [7] }], /triggerAtDay/);
  refused([{ field: 'cronExpression', expression: '61 * * * *' }], /invalid cron expression/);
  refused([{ field: 'cronExpression', expression: '={{ $json.cron }}' }], /written out/);
  refused([{ field: 'fortnights' }], /not one of seconds/);
});

test('n8n Interval: n8n’s defaults, minimum and maximum', () => {
  assert.equal(n8nIntervalSpec({}), '@every 1000ms');
  assert.equal(n8nIntervalSpec({ interval: 90, unit: 'minutes' }), '@every 5400000ms');
  assert.throws(() => n8nIntervalSpec({ interval: 0 }), /The interval has to be set to at least 1 or higher!/);
  assert.throws(() => n8nIntervalSpec({ interval: 600, unit: 'hours' }), /The interval value is too large\./);
  assert.throws(() => n8nIntervalSpec({ unit: 'days' }), /unit must be seconds, minutes or hours/);
});

test('a trigger node’s schedule: in the workflow’s time zone; none for other or disabled nodes', () => {
  const node = (type: string, parameters: Record<string, unknown>, disabled = false) => ({
    name: 'T',
    type,
    position: [0, 0] as [number, number],
    parameters,
    disabled,
  });
  assert.deepEqual(triggerSchedule(node('n8n-nodes-base.scheduleTrigger', {}), 'Asia/Tokyo'), { cron: '0 0 0 * * *', timezone: 'Asia/Tokyo' });
  assert.deepEqual(triggerSchedule(node('n8n-nodes-base.interval', { interval: 5 }), undefined), { cron: '@every 5000ms', timezone: 'UTC' });
  assert.deepEqual(triggerSchedule(node('engine.scheduleTrigger', { cron: '*/5 * * * *', timezone: 'Europe/Paris' }), 'UTC'), {
    cron: '*/5 * * * *',
    timezone: 'Europe/Paris',
  });
  assert.equal(triggerSchedule(node('n8n-nodes-base.scheduleTrigger', {}, true), 'UTC'), null);
  assert.equal(triggerSchedule(node('engine.webhook', {}), 'UTC'), null);
});
