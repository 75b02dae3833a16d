import assert from 'node:assert/strict';
import { NodeFailed, disposeHarness, importRefusal, runNode, runWorkflow, type Json } from '../../../../../test/support/n8n-harness';

/**
 * Date & Time version 2 (luxon, as in n8n). Expected values are n8n's (its test workflows'
 * pinData and parseDate tests where it has them) and luxon's documented output. Version 1 is
 * tested in v1/date-time.test.ts.
 */

const serverZone = process.env.TZ;
beforeAll(() => void (process.env.TZ = 'UTC'));
afterAll(() => {
  process.env.TZ = serverZone;
  disposeHarness();
});

const zone = (timezone: string) => ({ settings: { timezone } });
const v2 = (parameters: Json, settings: Json = {}) => ({ type: 'n8n-nodes-base.dateTime', typeVersion: 2, parameters, ...settings });

/** The single output item. */
async function one(parameters: Json, opts: { settings?: Json } = {}, item: Json = {}): Promise<Json> {
  const out = await runNode(v2(parameters), [item], opts);
  assert.equal(out[0]!.length, 1);
  return out[0]![0]!;
}

const ISO_WITH_OFFSET = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$/;

describe('n8n Date & Time 2: getCurrentDate', () => {
  test('defaults: now, with the time, in the workflow’s zone (UTC by default), as currentDate', async () => {
    const currentDate = (await one({})).currentDate as string;
    assert.match(currentDate, ISO_WITH_OFFSET);
    assert.ok(currentDate.endsWith('Z'));
    assert.ok(Math.abs(Date.parse(currentDate) - Date.now()) < 10_000);
    assert.match((await one({}, zone('Asia/Kolkata'))).currentDate as string, /\+05:30$/);
  });

  test('the timezone option, and today at midnight without the time', async () => {
    const now = await one({ operation: 'getCurrentDate', options: { timezone: 'Asia/Tokyo' } }, zone('America/New_York'));
    assert.match(now.currentDate as string, /\+09:00$/);
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Tokyo' }).format(new Date());
    const midnight = await one({ operation: 'getCurrentDate', includeTime: false, outputFieldName: 'today', options: { timezone: 'Asia/Tokyo' } });
    assert.deepEqual(midnight, { today: `${today}T00:00:00.000+09:00` });
  });

  test('a timezone that is not one fails with n8n’s message', async () => {
    await assert.rejects(runNode(v2({ options: { timezone: 'Mars/Base' } }), [{}]), (err: NodeFailed) =>
      /The timezone Mars\/Base is not valid. Please check the timezone./.test(err.info.message),
    );
  });
});

describe('n8n Date & Time 2: addToDate and subtractFromDate', () => {
  const GMT = zone('Etc/GMT');

  test('n8n’s test workflow: 2 days (the default unit) added, then subtracted, as newDate', async () => {
    const added = await one({ operation: 'addToDate', magnitude: '={{ $json.currentDate }}', duration: 2 }, GMT, {
      currentDate: '2023-04-11T13:51:59.965+00:00',
    });
    assert.deepEqual(added, { newDate: '2023-04-13T13:51:59.965+00:00' });
    const subtracted = await one({ operation: 'subtractFromDate', magnitude: '={{ $json.newDate }}', duration: 2 }, GMT, added);
    assert.deepEqual(subtracted, { newDate: '2023-04-11T13:51:59.965+00:00' });
  });

  test('units: calendar days keep the wall-clock time over a DST change, hours do not; month ends', async () => {
    const ny = zone('America/New_York');
    assert.equal((await one({ operation: 'addToDate', magnitude: '2023-03-11T12:00:00', duration: 1 }, ny)).newDate, '2023-03-12T12:00:00.000-04:00');
    assert.equal(
      (await one({ operation: 'addToDate', magnitude: '2023-03-11T12:00:00', timeUnit: 'hours', duration: 24 }, ny)).newDate,
      '2023-03-12T13:00:00.000-04:00',
    );
    const units: [string, number, string][] = [
      ['months', 1, '2023-02-28T10:00:00.000Z'],
      ['quarters', 1, '2023-04-30T10:00:00.000Z'],
      ['years', 1, '2024-01-31T10:00:00.000Z'],
      ['weeks', 2, '2023-02-14T10:00:00.000Z'],
      ['minutes', 90, '2023-01-31T11:30:00.000Z'],
      ['seconds', 30, '2023-01-31T10:00:30.000Z'],
      ['milliseconds', 5, '2023-01-31T10:00:00.005Z'],
    ];
    for (const [timeUnit, duration, expected] of units) {
      assert.equal((await one({ operation: 'addToDate', magnitude: '2023-01-31T10:00:00Z', timeUnit, duration })).newDate, expected, timeUnit);
    }
    assert.equal(
      (await one({ operation: 'subtractFromDate', magnitude: '2023-03-31T10:00:00Z', timeUnit: 'months', duration: 1, outputFieldName: 'd' })).d,
      '2023-02-28T10:00:00.000Z',
    );
  });
});

describe('n8n Date & Time 2: formatDate', () => {
  const date = '2023-04-11T13:51:59.965+00:00';

  test('every preset format (MM/dd/yyyy by default), as formattedDate', async () => {
    assert.deepEqual(await one({ operation: 'formatDate', date }), { formattedDate: '04/11/2023' });
    const presets: Record<string, string> = {
      'yyyy/MM/dd': '2023/04/11',
      'MMMM dd yyyy': 'April 11 2023',
      'MM-dd-yyyy': '04-11-2023',
      'yyyy-MM-dd': '2023-04-11',
      X: '1681221119',
      x: '1681221119965',
    };
    for (const [format, expected] of Object.entries(presets))
      assert.equal((await one({ operation: 'formatDate', date, format })).formattedDate, expected, format);
  });

  test('a custom luxon format', async () => {
    const out = await one({ operation: 'formatDate', date, format: 'custom', customFormat: "EEEE, d LLL yyyy 'at' HH:mm" });
    assert.deepEqual(out, { formattedDate: 'Tuesday, 11 Apr 2023 at 13:51' });
  });

  test('timestamps: milliseconds, seconds with a fraction, seconds, also as text (n8n’s test)', async () => {
    const items = [{ d: 1682918315906 }, { d: 1682918315.906 }, { d: 1682918315 }, { d: '1682918315906' }, { d: '1682918315.906' }, { d: '1682918315' }];
    const out = await runNode(v2({ operation: 'formatDate', date: '={{ $json.d }}', format: 'yyyy/MM/dd', outputFieldName: 'data' }), items);
    assert.deepEqual(out, [items.map(() => ({ data: '2023/05/01' }))]);
  });

  test('a null date stays null (n8n’s test)', async () => {
    assert.deepEqual(await one({ operation: 'formatDate', date: '={{ $json.date }}', options: {} }, {}, { date: null }), { formattedDate: null });
  });

  test('Use Workflow Timezone: without it the date is shown in UTC', async () => {
    const ny = zone('America/New_York');
    const at = { operation: 'formatDate', date: '2023-04-11T02:00:00Z' };
    assert.equal((await one(at, ny)).formattedDate, '04/11/2023');
    assert.equal((await one({ ...at, options: { timezone: true } }, ny)).formattedDate, '04/10/2023');
    const offset = await one({ operation: 'formatDate', date: '2023-04-11T23:30:00+05:00', format: 'custom', customFormat: 'yyyy-MM-dd HH:mm ZZ' }, ny);
    assert.equal(offset.formattedDate, '2023-04-11 18:30 +00:00');
  });

  test('From Date Format reads the date with a luxon format (digits are then not a timestamp)', async () => {
    const read = await one({
      operation: 'formatDate',
      date: '11.04.2023 14:30',
      format: 'custom',
      customFormat: 'yyyy-MM-dd HH:mm',
      options: { fromFormat: 'dd.MM.yyyy HH:mm' },
    });
    assert.equal(read.formattedDate, '2023-04-11 14:30');
    assert.equal((await one({ operation: 'formatDate', date: '20230411', options: { fromFormat: 'yyyyMMdd' } })).formattedDate, '04/11/2023');
    await assert.rejects(runNode(v2({ operation: 'formatDate', date: '2023-04-11', options: { fromFormat: 'dd.MM.yyyy' } }), [{}]), (err: NodeFailed) =>
      /Invalid date format/.test(err.info.message),
    );
  });
});

describe('n8n Date & Time 2: roundDate', () => {
  const date = '2023-04-12T15:45:30.500Z';

  test('round down to each unit (month by default), as roundedDate', async () => {
    assert.deepEqual(await one({ operation: 'roundDate', date }), { roundedDate: '2023-04-01T00:00:00.000Z' });
    const units: Record<string, string> = {
      year: '2023-01-01T00:00:00.000Z',
      week: '2023-04-10T00:00:00.000Z',
      day: '2023-04-12T00:00:00.000Z',
      hour: '2023-04-12T15:00:00.000Z',
      minute: '2023-04-12T15:45:00.000Z',
      second: '2023-04-12T15:45:30.000Z',
    };
    for (const [toNearest, expected] of Object.entries(units))
      assert.equal((await one({ operation: 'roundDate', date, toNearest })).roundedDate, expected, toNearest);
  });

  test('round up to the end of the month (the next month’s start, as n8n does)', async () => {
    assert.equal((await one({ operation: 'roundDate', date, mode: 'roundUp', to: 'month' })).roundedDate, '2023-05-01T00:00:00.000Z');
  });

  test('n8n’s test workflow: a yyyy/MM/dd text to the day, in Etc/GMT', async () => {
    assert.deepEqual(await one({ operation: 'roundDate', date: '2023/04/11', toNearest: 'day' }, zone('Etc/GMT')), {
      roundedDate: '2023-04-11T00:00:00.000+00:00',
    });
  });
});

describe('n8n Date & Time 2: getTimeBetweenDates', () => {
  const between = { operation: 'getTimeBetweenDates', startDate: '2023-04-11T00:00:00Z', endDate: '2023-04-12T12:00:00Z' };

  test('in days by default (fractions kept), as timeDifference; n8n’s test workflow', async () => {
    assert.deepEqual(await one(between), { timeDifference: { days: 1.5 } });
    const n8n = { operation: 'getTimeBetweenDates', startDate: '2023-04-11T13:51:59.965+00:00', endDate: '2023-04-13T13:51:59.965+00:00', units: ['day'] };
    assert.deepEqual(await one(n8n, zone('Etc/GMT')), { timeDifference: { days: 2 } });
  });

  test('several units, negative when the end comes first, and as an ISO 8601 duration', async () => {
    assert.deepEqual(await one({ ...between, units: ['day', 'hour'] }), { timeDifference: { days: 1, hours: 12 } });
    assert.deepEqual(await one({ ...between, startDate: between.endDate, endDate: between.startDate }), { timeDifference: { days: -1.5 } });
    assert.deepEqual(await one({ ...between, units: ['day', 'hour'], options: { isoString: true } }), { timeDifference: 'P1DT12H' });
  });
});

describe('n8n Date & Time 2: extractDate', () => {
  test('each part (month by default), as datePart', async () => {
    const date = '2023-04-12T15:45:30Z';
    assert.deepEqual(await one({ operation: 'extractDate', date }), { datePart: 4 });
    const parts: Record<string, number> = { year: 2023, week: 15, day: 12, hour: 15, minute: 45, second: 30 };
    for (const [part, expected] of Object.entries(parts)) assert.equal((await one({ operation: 'extractDate', date, part })).datePart, expected, part);
  });

  test('n8n’s time zone test (New York): naive texts keep their wall-clock time, an offset is converted', async () => {
    const ny = zone('America/New_York');
    const hour = async (date: string) => (await one({ operation: 'extractDate', date, part: 'hour', options: {} }, ny)).datePart;
    assert.equal(await hour('2023-04-11T14:30:00'), 14);
    assert.equal(await hour('April 11, 2023 2:30 PM'), 14);
    assert.equal(await hour('2023-04-11T14:30:00+05:00'), 5);
    assert.equal(await hour('2023-04-11T14:30:00+0500'), 5);
    assert.equal(await hour('2023-04-11T14:30:00Z'), 10);
  });

  test('n8n’s parseDate tests (Athens): date-only, space-separated and AM/PM texts', async () => {
    const athens = zone('Europe/Athens');
    const get = async (date: string, part: string) => (await one({ operation: 'extractDate', date, part }, athens)).datePart;
    assert.deepEqual([await get('2023-04-11', 'day'), await get('2023-04-11', 'hour')], [11, 0]);
    assert.equal(await get('2023-04-11 14:30:00', 'hour'), 14);
    assert.equal(await get('2014-08-06 10:00:00 AM', 'hour'), 10);
  });
});

describe('n8n Date & Time 2: items', () => {
  test('Include Input Fields keeps the item’s fields; without it the item holds the result only', async () => {
    const item = { a: 1, when: '2023-04-11T13:51:59Z' };
    assert.deepEqual(await one({ operation: 'extractDate', date: '={{ $json.when }}', part: 'year', options: { includeInputFields: true } }, {}, item), {
      ...item,
      datePart: 2023,
    });
    assert.deepEqual(await one({ operation: 'extractDate', date: '={{ $json.when }}', part: 'year' }, {}, item), { datePart: 2023 });
  });

  test('a date it cannot read fails with n8n’s message, naming the item', async () => {
    await assert.rejects(runNode(v2({ operation: 'extractDate', date: '={{ $json.d }}' }), [{ d: '2023-04-11' }, { d: 'not-a-date' }]), (err: NodeFailed) => {
      assert.match(err.info.message, /Invalid date format/);
      assert.equal(err.info.details.itemIndex, 1);
      return true;
    });
  });

  test('with onError continueRegularOutput a failed item becomes {error}, the others go on', async () => {
    const out = await runNode(v2({ operation: 'extractDate', date: '={{ $json.d }}' }, { onError: 'continueRegularOutput' }), [
      { d: 'not-a-date' },
      { d: '2023-04-11' },
    ]);
    assert.deepEqual(out, [[{ error: 'Invalid date format' }, { datePart: 4 }]]);
  });

  test('n8n’s test workflow, node after node (add, subtract, format, round, between, extract)', async () => {
    const node = (name: string, parameters: Json, x: number) => ({ name, type: 'n8n-nodes-base.dateTime', typeVersion: 2, position: [x, 0], parameters });
    const chain = ['Start', 'Add to date', 'Subtract date', 'Format Date', 'Round Date', 'Get between date', 'Extract Date'];
    const workflow = {
      nodes: [
        { name: 'Start', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [0, 0], parameters: {} },
        node('Add to date', { operation: 'addToDate', magnitude: '={{ $json.currentDate }}', duration: 2 }, 200),
        node('Subtract date', { operation: 'subtractFromDate', magnitude: '={{ $json.newDate }}', duration: 2 }, 400),
        node('Format Date', { operation: 'formatDate', date: '={{ $json.newDate }}', format: 'yyyy/MM/dd' }, 600),
        node('Round Date', { operation: 'roundDate', date: '={{ $json.formattedDate }}', toNearest: 'day' }, 800),
        node(
          'Get between date',
          {
            operation: 'getTimeBetweenDates',
            startDate: "={{ $node['Subtract date'].json.newDate }}",
            endDate: "={{ $node['Add to date'].json.newDate }}",
            units: ['day'],
          },
          1000,
        ),
        node('Extract Date', { operation: 'extractDate', date: '={{ $node.Start.json.currentDate }}', part: 'hour', outputFieldName: 'date' }, 1200),
      ],
      connections: Object.fromEntries(chain.slice(0, -1).map((from, i) => [from, { main: [[{ node: chain[i + 1], type: 'main', index: 0 }]] }])),
      settings: { timezone: 'Etc/GMT' },
    };
    const run = await runWorkflow(workflow, { pinned: { Start: [[{ currentDate: '2023-04-11T13:51:59.965+00:00' }]] } });
    assert.equal(run.status, 'success');
    assert.deepEqual(
      chain.slice(1).map((name) => run.nodes.get(name)),
      [
        [[{ newDate: '2023-04-13T13:51:59.965+00:00' }]],
        [[{ newDate: '2023-04-11T13:51:59.965+00:00' }]],
        [[{ formattedDate: '2023/04/11' }]],
        [[{ roundedDate: '2023-04-11T00:00:00.000+00:00' }]],
        [[{ timeDifference: { days: 2 } }]],
        [[{ date: 13 }]],
      ],
    );
  });
});

describe('n8n Date & Time: versions', () => {
  test('version 2 imports with any of its options; a version it does not implement is refused', () => {
    assert.equal(
      importRefusal(v2({ operation: 'formatDate', date: 'x', format: 'custom', customFormat: 'yyyy zz', options: { fromFormat: 'kkkk-WW', timezone: true } })),
      undefined,
    );
    const refusal = importRefusal({ type: 'n8n-nodes-base.dateTime', typeVersion: 3, parameters: {} });
    assert.equal(refusal?.reason, 'unsupported_version');
    assert.deepEqual(refusal?.supportedVersions, [1, 2]);
  });
});
