import assert from 'node:assert/strict';
import { NodeFailed, disposeHarness, importRefusal, runNode, type Json } from '../../../../../../test/support/n8n-harness';

/**
 * Date & Time version 1 (moment.js in n8n). Expected values are n8n's (its test workflows'
 * pinData where it has them) and moment's documented output; n8n's tests run the server in UTC,
 * as these do (the server's zone is moment's "local" time).
 */

const serverZone = process.env.TZ;
beforeAll(() => void (process.env.TZ = 'UTC'));
afterAll(() => {
  process.env.TZ = serverZone;
  disposeHarness();
});

const NY = { settings: { timezone: 'America/New_York' } };
const v1 = (parameters: Json, settings: Json = {}) => ({ type: 'n8n-nodes-base.dateTime', typeVersion: 1, parameters, ...settings });

/** The data field of the single output item. */
async function data(parameters: Json, opts: { settings?: Json } = {}, item: Json = {}): Promise<unknown> {
  const out = await runNode(v1(parameters), [item], opts);
  return out[0]![0]!.data;
}

async function inServerZone<T>(zone: string, run: () => Promise<T>): Promise<T> {
  process.env.TZ = zone;
  try {
    return await run();
  } finally {
    process.env.TZ = 'UTC';
  }
}

describe('n8n Date & Time 1: format', () => {
  test('defaults: MM/DD/YYYY into "data", next to the item’s fields', async () => {
    const out = await runNode(v1({ value: '08/01/2022', options: {} }), [{ a: 1 }]);
    assert.deepEqual(out, [[{ a: 1, data: '08/01/2022' }]]);
  });

  test('every preset format', async () => {
    const presets: Record<string, string> = {
      'MM/DD/YYYY': '08/01/2022',
      'YYYY/MM/DD': '2022/08/01',
      'MMMM DD YYYY': 'August 01 2022',
      'MM-DD-YYYY': '08-01-2022',
      'YYYY-MM-DD': '2022-08-01',
      X: '1659366245',
      x: '1659366245123',
    };
    for (const [toFormat, expected] of Object.entries(presets)) {
      assert.equal(await data({ value: '2022-08-01T15:04:05.123', toFormat, options: {} }), expected, toFormat);
    }
  });

  test('custom formats: moment’s tokens, locale formats, [text] and \\ escapes; empty is ISO 8601', async () => {
    const formats: Record<string, string> = {
      'dddd, MMMM Do YYYY, h:mm:ss.SSS a': 'Monday, August 1st 2022, 3:04:05.123 pm',
      LLLL: 'Monday, August 1, 2022 3:04 PM',
      ll: 'Aug 1, 2022',
      '[Week] W, w [of] GGGG, Q, DDDo, E, kk, Hmm': 'Week 31, 32 of 2022, 3, 213th, 1, 15, 1504',
      '\\Y\\Y [at] HH:mm': 'YY at 15:04',
      '': '2022-08-01T15:04:05+00:00',
    };
    for (const [toFormat, expected] of Object.entries(formats)) {
      assert.equal(await data({ value: '2022-08-01T15:04:05.123', custom: true, toFormat, options: {} }), expected, toFormat);
    }
  });

  test('numbers are Unix timestamps: milliseconds, seconds with a fraction, seconds; also as text (n8n’s test)', async () => {
    const out = await runNode(v1({ value: '={{ $json.d }}', options: {} }), [
      { d: 1682918315906 },
      { d: 1682918315.906 },
      { d: 1682918315 },
      { d: '1682918315906' },
      { d: '1682918315.906' },
      { d: '1682918315' },
    ]);
    assert.deepEqual(
      out[0]!.map((j) => j.data),
      Array.from({ length: 6 }, () => '05/01/2023'),
    );
  });

  test('an empty or null value reads as the timestamp 0', async () => {
    assert.equal(await data({ value: '', options: {} }), '01/01/1970');
    assert.equal(await data({ value: '={{ null }}', options: {} }), '01/01/1970');
  });

  test('from and to time zones (n8n’s test workflow, workflow in New York)', async () => {
    assert.equal(await data({ value: '08/01/2022', toFormat: 'YYYY/MM/DD', options: { fromTimezone: 'US/Hawaii' } }, NY), '2022/07/31');
    assert.equal(
      await data({ value: '08/01/2022', toFormat: 'YYYY/MM/DD', options: { fromTimezone: 'US/Hawaii', toTimezone: 'US/Pacific' } }, NY),
      '2022/07/31',
    );
    assert.equal(await data({ value: '08/01/2022', toFormat: 'x', options: { fromTimezone: 'US/Hawaii', toTimezone: 'US/Pacific' } }, NY), '1659312000000');
    const special = { value: '2022-01-12', toFormat: 'MM-DD-YYYY', options: { fromFormat: 'YYYY-DD-MM', fromTimezone: 'US/Hawaii', toTimezone: 'US/Pacific' } };
    assert.equal(await data(special, NY), '12-01-2022');
  });

  test('one time zone given: the other is the workflow’s', async () => {
    const format = 'YYYY-MM-DD HH:mm Z';
    assert.equal(await data({ value: '2022-08-01 10:00', toFormat: format, options: { toTimezone: 'Europe/Berlin' } }, NY), '2022-08-01 16:00 +02:00');
    assert.equal(await data({ value: '2022-08-01 10:00', toFormat: format, options: { fromTimezone: 'Asia/Tokyo' } }, NY), '2022-07-31 21:00 -04:00');
    assert.equal(await data({ value: '2022-08-01T10:00:00Z', toFormat: '', options: { toTimezone: 'UTC' } }), '2022-08-01T10:00:00Z');
  });

  test('a timestamp (n8n’s luxon test: X, then back from a number)', async () => {
    assert.equal(await data({ value: '2023-03-31T06:31:01.000', toFormat: 'X', options: { toTimezone: 'UTC' } }), '1680244261');
    assert.equal(await data({ value: '={{ Number("1680244261") }}', toFormat: 'YYYY-MM-DD', options: { toTimezone: 'UTC' } }), '2023-03-31');
  });

  test('fromFormat: moment’s lenient reading; what it cannot read is "Invalid date"', async () => {
    assert.equal(await data({ value: '01-12-2022', toFormat: 'YYYY-MM-DD', options: { fromFormat: 'DD-MM-YYYY' } }), '2022-12-01');
    assert.equal(await data({ value: '5th of May 2021', toFormat: 'YYYY-MM-DD', options: { fromFormat: 'Do [of] MMMM YYYY' } }), '2021-05-05');
    assert.equal(await data({ value: 'garbage', options: { fromFormat: 'DD-MM-YYYY' } }), 'Invalid date');
    const year = new Date().getUTCFullYear();
    assert.equal(await data({ value: '15/08 13:45', toFormat: 'YYYY-MM-DD HH:mm', options: { fromFormat: 'DD/MM HH:mm' } }), `${year}-08-15 13:45`);
  });

  test('the server’s time zone is moment’s local time (Europe/Berlin here)', async () => {
    const out = await inServerZone('Europe/Berlin', () => data({ value: '2022-08-01T10:00:00Z', toFormat: 'YYYY-MM-DD HH:mm Z', options: {} }));
    assert.equal(out, '2022-08-01 12:00 +02:00');
  });

  test('a wall-clock time that happens twice (summer time ends) is the earlier, as moment reads it', async () => {
    const format = 'YYYY-MM-DD HH:mm Z';
    assert.equal(await inServerZone('Europe/Berlin', () => data({ value: '2022-10-30 02:30', toFormat: format, options: {} })), '2022-10-30 02:30 +02:00');
    assert.equal(
      await data({ value: '2022-10-30 02:30', toFormat: format, options: { fromTimezone: 'Europe/Berlin', toTimezone: 'Europe/Berlin' } }),
      '2022-10-30 02:30 +02:00',
    );
  });

  test('a value moment cannot read fails, asking for the From Format', async () => {
    await assert.rejects(runNode(v1({ value: 'not a date', options: {} }), [{}]), (err: NodeFailed) => {
      assert.match(err.info.message, /The date input format could not be recognized. Please set the "From Format" field/);
      return true;
    });
  });

  test('a property name with dots is one key', async () => {
    const out = await runNode(v1({ value: '08/01/2022', dataPropertyName: 'date.us', options: {} }), [{}]);
    assert.deepEqual(out, [[{ 'date.us': '08/01/2022' }]]);
  });
});

describe('n8n Date & Time 1: calculate', () => {
  const calculate = (parameters: Json) => data({ action: 'calculate', value: '08/01/2022', options: {}, ...parameters });

  test('n8n’s test workflow: days (the default unit), quarters, months; add (default) and subtract', async () => {
    assert.equal(await calculate({ duration: 10 }), '2022-08-11T00:00:00.000Z');
    assert.equal(await calculate({ operation: 'subtract', duration: 2 }), '2022-07-30T00:00:00.000Z');
    assert.equal(await calculate({ duration: 2, timeUnit: 'quarters' }), '2023-02-01T00:00:00.000Z');
    assert.equal(await calculate({ duration: 2, timeUnit: 'months' }), '2022-10-01T00:00:00.000Z');
    assert.equal(await calculate({ operation: 'subtract', duration: 2, timeUnit: 'months' }), '2022-06-01T00:00:00.000Z');
  });

  test('the other units, moment’s rounding of days and months, month ends', async () => {
    assert.equal(await calculate({ duration: 3, timeUnit: 'weeks' }), '2022-08-22T00:00:00.000Z');
    assert.equal(await calculate({ duration: 1.5, timeUnit: 'days' }), '2022-08-03T00:00:00.000Z');
    assert.equal(await calculate({ duration: 1.5, timeUnit: 'hours' }), '2022-08-01T01:30:00.000Z');
    assert.equal(await calculate({ duration: 90, timeUnit: 'minutes' }), '2022-08-01T01:30:00.000Z');
    assert.equal(await calculate({ duration: 30, timeUnit: 'seconds' }), '2022-08-01T00:00:30.000Z');
    assert.equal(await calculate({ duration: 250, timeUnit: 'milliseconds' }), '2022-08-01T00:00:00.250Z');
    assert.equal(await calculate({ value: '2022-01-31', duration: 1, timeUnit: 'months' }), '2022-02-28T00:00:00.000Z');
    assert.equal(await calculate({ value: '2024-02-29', duration: 1, timeUnit: 'years' }), '2025-02-28T00:00:00.000Z');
  });

  test('fromFormat reads strictly', async () => {
    assert.equal(await calculate({ value: '01.08.2022', duration: 1, options: { fromFormat: 'DD.MM.YYYY' } }), '2022-08-02T00:00:00.000Z');
    await assert.rejects(runNode(v1({ action: 'calculate', value: '1.8.2022', options: { fromFormat: 'DD.MM.YYYY' } }), [{}]), (err: NodeFailed) =>
      /Date input cannot be parsed. Please recheck the value and the "From Format" field./.test(err.info.message),
    );
  });

  test('a value the JavaScript Date parser cannot read fails', async () => {
    await assert.rejects(runNode(v1({ action: 'calculate', value: 'garbage', options: {} }), [{}]), (err: NodeFailed) =>
      /Unrecognized date input. Please specify a format in the "From Format" field./.test(err.info.message),
    );
  });

  test('in the server’s time zone (n8n’s test workflow as run in Europe/Berlin)', async () => {
    const out = await inServerZone('Europe/Berlin', async () => [await calculate({ duration: 10 }), await calculate({ duration: 2, timeUnit: 'quarters' })]);
    assert.deepEqual(out, ['2022-08-10T22:00:00.000Z', '2023-01-31T23:00:00.000Z']);
  });

  test('with onError continueRegularOutput a failed item becomes {error}, the others go on', async () => {
    const node = v1({ action: 'calculate', value: '={{ $json.v }}', duration: 1, options: {} }, { onError: 'continueRegularOutput' });
    const out = await runNode(node, [{ v: 'garbage' }, { v: '08/01/2022' }]);
    assert.deepEqual(out, [
      [{ error: 'Unrecognized date input. Please specify a format in the "From Format" field.' }, { v: '08/01/2022', data: '2022-08-02T00:00:00.000Z' }],
    ]);
  });
});

describe('n8n Date & Time 1: refusals', () => {
  test('format tokens it cannot write (zone abbreviations, eras)', () => {
    const refusal = importRefusal(v1({ value: 'x', custom: true, toFormat: 'YYYY zz' }));
    assert.equal(refusal?.reason, 'unsupported_option');
    assert.equal(refusal?.option, 'toFormat');
    assert.match(refusal!.message, /"zz"/);
  });

  test('fromFormat tokens it cannot read (week-based dates)', () => {
    const refusal = importRefusal(v1({ value: 'x', options: { fromFormat: 'GGGG-[W]WW' } }));
    assert.equal(refusal?.option, 'options.fromFormat');
    assert.match(refusal!.message, /"GGGG"/);
  });

  test('a time zone that is not one', () => {
    const refusal = importRefusal(v1({ value: 'x', options: { toTimezone: 'Mars/Olympus' } }));
    assert.equal(refusal?.option, 'options.toTimezone');
    assert.equal(importRefusal(v1({ value: 'x', options: { fromTimezone: 'US/Hawaii', toTimezone: 'UTC' } })), undefined);
  });

  test('a format from an expression is checked when it runs', async () => {
    assert.equal(importRefusal(v1({ value: 'x', toFormat: '={{ "zz" }}' })), undefined);
    await assert.rejects(runNode(v1({ value: '08/01/2022', toFormat: '={{ "zz" }}', options: {} }), [{}]), (err: NodeFailed) =>
      /"zz" is not supported/.test(err.info.message),
    );
  });
});
