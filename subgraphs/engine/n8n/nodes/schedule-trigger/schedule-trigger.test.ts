import assert from 'node:assert/strict';
import { disposeHarness, importRefusal, runWorkflow } from '../../../../../test/support/n8n-harness';
import { AppError } from '../../../../../kernel/errors';
import { validateDefinition } from '../../../executor';
import { misfireRuns, n8nScheduleSpec, nextRun } from '../../../nodes';
import { importWorkflow } from '../../import';
import { scheduleItem } from './schedule-trigger';

/** n8n's Schedule Trigger and Interval: the item they emit, their checks at import. The scheduler's firing is tested end to end (test/engine-n8n-flow.e2e.test.ts). */

afterAll(() => disposeHarness());

test('n8n’s item for a firing time, in the zone, moment’s formats', () => {
  assert.deepEqual(scheduleItem(new Date('2026-11-23T08:00:00.042Z'), 'Europe/Paris'), {
    timestamp: '2026-11-23T09:00:00.042+01:00',
    'Readable date': 'November 23rd 2026, 9:00:00 am',
    'Readable time': '9:00:00 am',
    'Day of week': 'Monday',
    Year: '2026',
    Month: 'November',
    'Day of month': '23',
    Hour: '09',
    Minute: '00',
    Second: '00',
    Timezone: 'Europe/Paris (UTC+01:00)',
  });
  const evening = scheduleItem(new Date('2026-07-11T23:05:09Z'), 'America/St_Johns');
  assert.equal(evening.timestamp, '2026-07-11T20:35:09.000-02:30');
  assert.equal(evening['Readable date'], 'July 11th 2026, 8:35:09 pm');
  assert.equal(evening.Timezone, 'America/St_Johns (UTC-02:30)');
  assert.equal(scheduleItem(new Date('2026-01-01T00:00:00Z'), 'UTC')['Readable time'], '12:00:00 am');
  assert.equal(scheduleItem(new Date('2026-01-22T12:00:00Z'), 'UTC')['Readable date'], 'January 22nd 2026, 12:00:00 pm');
});

const workflow = (trigger: Record<string, unknown>, timezone?: string) => ({
  nodes: [
    { name: 'Trigger', position: [0, 0], ...trigger },
    { name: 'After', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [200, 0], parameters: {} },
  ],
  connections: { Trigger: { main: [[{ node: 'After', type: 'main', index: 0 }]] } },
  settings: { executionOrder: 'v1', ...(timezone ? { timezone } : {}) },
});

test('fired by the scheduler: the firing time in the workflow’s zone; started by hand: now', async () => {
  const trigger = { type: 'n8n-nodes-base.scheduleTrigger', typeVersion: 1.2, parameters: { rule: { interval: [{ field: 'hours' }] } } };
  const fired = await runWorkflow(workflow(trigger, 'Asia/Tokyo'), {
    mode: 'schedule',
    input: [{ timestamp: '2026-11-23T01:00:00.000Z', scheduleId: 's', cron: '0 0 */1 * * *' }],
  });
  assert.equal(fired.status, 'success');
  assert.equal(fired.result[0]!.timestamp, '2026-11-23T10:00:00.000+09:00');
  assert.equal(fired.result[0]!.Timezone, 'Asia/Tokyo (UTC+09:00)');
  const byHand = await runWorkflow(workflow(trigger));
  const { timestamp, Timezone } = byHand.result[0]!;
  assert.ok(typeof timestamp === 'string' && typeof Timezone === 'string', JSON.stringify(byHand.result));
  assert.ok(Math.abs(Date.parse(timestamp) - Date.now()) < 60_000);
  assert.match(Timezone, /^UTC \(UTC\+00:00\)$/);
});

test('Interval emits one empty item', async () => {
  const run = await runWorkflow(workflow({ type: 'n8n-nodes-base.interval', typeVersion: 1, parameters: { interval: 10, unit: 'minutes' } }));
  assert.equal(run.status, 'success');
  assert.deepEqual(run.result, [{}]);
});

test('rules the scheduler cannot run are SCHEDULE_INVALID at import; versions it does not know WORKFLOW_INVALID', () => {
  const scheduleInvalid = (node: Record<string, unknown>, pattern: RegExp) =>
    assert.throws(
      () => validateDefinition(importWorkflow({ nodes: [{ name: 'Node', position: [0, 0], ...node }], connections: {} })),
      (err: AppError) => err.code === 'SCHEDULE_INVALID' && pattern.test(err.message),
    );
  scheduleInvalid(
    { type: 'n8n-nodes-base.scheduleTrigger', typeVersion: 1.2, parameters: { rule: { interval: [{ field: 'minutes', minutesInterval: 90 }] } } },
    /rule\.interval\[0\]\.minutesInterval must be a whole number from 1 to 59/,
  );
  scheduleInvalid({ type: 'n8n-nodes-base.interval', typeVersion: 1, parameters: { interval: 0 } }, /at least 1 or higher/);
  assert.ok(importRefusal({ type: 'n8n-nodes-base.scheduleTrigger', typeVersion: 9, parameters: {} }));
  assert.equal(
    importRefusal({ type: 'n8n-nodes-base.scheduleTrigger', typeVersion: 1, parameters: { rule: { interval: [{ field: 'weeks', triggerAtDay: [1] }] } } }),
    undefined,
  );
});

test('1.3 and 1.4: the rules n8n writes import (a rule without a field is daily); a rule out of 1.3’s bounds is SCHEDULE_INVALID', () => {
  for (const typeVersion of [1.3, 1.4]) {
    for (const interval of [
      [{}],
      [{ triggerAtHour: 7 }],
      [{ field: 'weeks', weeksInterval: 1, triggerAtDay: [0], triggerAtHour: 7, triggerAtMinute: 0 }],
      [{ field: 'hours', hoursInterval: 1 }],
      [{ field: 'minutes', minutesInterval: 30 }],
    ]) {
      assert.equal(
        importRefusal({ type: 'n8n-nodes-base.scheduleTrigger', typeVersion, parameters: { rule: { interval } } }),
        undefined,
        JSON.stringify(interval),
      );
    }
    for (const [rule, message] of [
      [{ field: 'seconds', secondsInterval: 0 }, /secondsInterval must be a whole number from 1 to 59/],
      [{ field: 'minutes', minutesInterval: 60 }, /minutesInterval must be a whole number from 1 to 59/],
      [{ field: 'hours', hoursInterval: 24 }, /hoursInterval must be a whole number from 1 to 23/],
      [{ field: 'days', daysInterval: 32 }, /daysInterval must be a whole number from 1 to 31/],
      [{ field: 'months', monthsInterval: 0 }, /monthsInterval must be a whole number from 1 to 1200/],
      [{ field: 'weeks', triggerAtDay: [7] }, /triggerAtDay must list weekdays from 0 \(Sunday\) to 6/],
    ] as const) {
      assert.throws(
        () =>
          validateDefinition(
            importWorkflow({
              nodes: [{ name: 'Node', position: [0, 0], type: 'n8n-nodes-base.scheduleTrigger', typeVersion, parameters: { rule: { interval: [rule] } } }],
              connections: {},
            }),
          ),
        (err: AppError) => err.code === 'SCHEDULE_INVALID' && message.test(err.message),
        JSON.stringify(rule),
      );
    }
  }
});

test('every n months: `*/n` where n divides 12, else every n-th month counted from January 1970 (n8n 1.3 takes any number of months)', () => {
  assert.equal(n8nScheduleSpec({ rule: { interval: [{ field: 'months', monthsInterval: 3, triggerAtHour: 9 }] } }), '0 0 9 1 */3 *');
  const spec = n8nScheduleSpec({ rule: { interval: [{ field: 'months', monthsInterval: 18, triggerAtDayOfMonth: 5 }] } });
  assert.equal(spec, '0 0 0 5 * * !every 18 months');
  const first = nextRun(spec, 'UTC', new Date('2026-01-15T00:00:00Z'));
  assert.equal(first?.toISOString(), '2026-07-05T00:00:00.000Z');
  assert.equal(nextRun(spec, 'UTC', first!)?.toISOString(), '2028-01-05T00:00:00.000Z', '18 months later');
  const five = n8nScheduleSpec({ rule: { interval: [{ field: 'months', monthsInterval: 5 }] } });
  const runs = [nextRun(five, 'Europe/Paris', new Date('2026-01-01T00:00:00Z'))!];
  for (let i = 0; i < 3; i++) runs.push(nextRun(five, 'Europe/Paris', runs[i]!)!);
  // Five months apart across the year's end, not January again after November.
  assert.deepEqual(
    runs.map((d) => d.toISOString()),
    ['2026-03-31T22:00:00.000Z', '2026-08-31T22:00:00.000Z', '2027-01-31T23:00:00.000Z', '2027-06-30T22:00:00.000Z'],
  );
});

test('1.4 fired by the scheduler emits the same item as before', async () => {
  const trigger = { type: 'n8n-nodes-base.scheduleTrigger', typeVersion: 1.4, parameters: { rule: { interval: [{ triggerAtHour: 7 }] } } };
  const fired = await runWorkflow(workflow(trigger, 'Europe/Paris'), {
    mode: 'schedule',
    input: [{ timestamp: '2026-11-23T06:00:00.000Z', scheduleId: 's', cron: '0 0 7 * * *' }],
  });
  assert.equal(fired.status, 'success');
  assert.deepEqual(fired.result, [scheduleItem(new Date('2026-11-23T06:00:00.000Z'), 'Europe/Paris')]);
});

test('1.4’s misfire settings: a run later than its grace is skipped by default, run once per missed rule (coalesce) or once (coalesce_owner); earlier versions catch up once', () => {
  const rule = { interval: [{ field: 'hours' }, { field: 'days', triggerAtHour: 9 }] };
  const node = (typeVersion: number, settings: Record<string, unknown> = {}) => ({
    name: 'Trigger',
    type: 'n8n-nodes-base.scheduleTrigger',
    typeVersion,
    position: [0, 0] as [number, number],
    parameters: { rule, ...settings },
  });
  const spec = n8nScheduleSpec({ rule });
  const due = new Date('2026-11-23T06:00:00Z');
  const at = (seconds: number) => new Date(due.getTime() + seconds * 1000);
  const runs = (n: ReturnType<typeof node>, late: number) => misfireRuns(n, spec, 'UTC', due, at(late)).runs;
  // On time: within n8n's default grace of 60 s (misfireGraceSeconds 0 or unset), or the node's own.
  assert.equal(runs(node(1.4), 60), 1);
  assert.equal(runs(node(1.4, { misfireGraceSeconds: 0 }), 60), 1);
  assert.equal(runs(node(1.4, { misfireGraceSeconds: 600 }), 599), 1);
  // Late: the policy decides.
  assert.equal(runs(node(1.4), 61), 0, 'skip is the default');
  assert.equal(runs(node(1.4, { misfirePolicy: 'skip', misfireGraceSeconds: 600 }), 601), 0);
  assert.equal(runs(node(1.4, { misfirePolicy: 'coalesce_owner' }), 4 * 3600), 1);
  // Six hours late from 06:00: the hourly rule missed times, the 09:00 one too; two hours late only the hourly one.
  assert.equal(runs(node(1.4, { misfirePolicy: 'coalesce' }), 6 * 3600), 2);
  assert.equal(runs(node(1.4, { misfirePolicy: 'coalesce' }), 2 * 3600), 1);
  // Before 1.4 a late run is caught up once, whatever it says.
  for (const v of [1, 1.1, 1.2, 1.3]) assert.equal(runs(node(v, { misfirePolicy: 'skip' }), 6 * 3600), 1, String(v));
  assert.equal(importRefusal(node(1.4, { misfirePolicy: 'coalesce', misfireGraceSeconds: 120 })), undefined);
  assert.throws(
    () => validateDefinition(importWorkflow({ nodes: [node(1.4, { misfireGraceSeconds: -5 })], connections: {} })),
    (err: AppError) => err.code === 'SCHEDULE_INVALID' && /misfireGraceSeconds must be a whole number of seconds/.test(err.message),
  );
});
