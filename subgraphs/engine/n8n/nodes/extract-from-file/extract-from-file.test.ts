import assert from 'node:assert/strict';
import ExcelJS from 'exceljs';
import { strToU8, zipSync } from 'fflate';
import { biffRecord, biffWorkbook, f64, pdfFile, u16, u32, xlwtWorkbook } from '../../../../../test/support/file-fixtures';
import { disposeHarness, importRefusal, itemsFailure, runItems, runWorkflow } from '../../../../../test/support/n8n-harness';
import { prepareBinary, type Item } from '../../../nodes';

afterAll(disposeHarness);

const extract = (parameters: Record<string, unknown>) => ({ type: 'n8n-nodes-base.extractFromFile', typeVersion: 1, parameters });
const file = (content: string | Buffer, fileName: string, json: Record<string, unknown> = {}, key = 'data'): Item => ({
  json,
  binary: { [key]: prepareBinary(typeof content === 'string' ? Buffer.from(content) : content, { fileName }) },
});
const jsonOf = (out: Item[][]) => out[0]!.map((i) => i.json);

describe("n8n's Convert To File test workflow, through Extract From File", () => {
  const GATSBY = {
    id: '23423532',
    name: 'Jay Gatsby',
    email: 'gatsby@west-egg.com',
    notes: 'Keeps asking about a green light??',
    country: 'US',
    created: '1925-04-10',
    base64: 'VGhpcyBpcyBzb21lIHRleHQgZW5jb2RlZCBhcyBiYXNlNjQ=',
  };
  const n = (name: string, type: string, typeVersion: number, parameters: Record<string, unknown>) => ({
    name,
    type: `n8n-nodes-base.${type}`,
    typeVersion,
    position: [0, 0],
    parameters,
  });
  const to = (node: string) => ({ node, type: 'main', index: 0 });
  /** Each Convert To File of n8n's workflow, the Extract From File after it, and the result it pins. */
  const PAIRS: [string, Record<string, unknown>, number, string, Record<string, unknown>, Record<string, unknown>][] = [
    [
      'Convert to File2',
      { operation: 'toBinary', sourceProperty: 'base64', options: {} },
      1.1,
      'Extract From File',
      { operation: 'text', options: {} },
      { data: 'This is some text encoded as base64' },
    ],
    [
      'Convert to Text File',
      { operation: 'toText', sourceProperty: 'notes', options: {} },
      1,
      'Extract From Text File',
      { operation: 'text', options: {} },
      { data: GATSBY.notes },
    ],
    [
      'Convert to JSON (with Formatting)',
      { operation: 'toJson', options: { format: true } },
      1.1,
      'Extract From JSON (1)',
      { operation: 'text', options: {} },
      { data: JSON.stringify([GATSBY], null, 2) },
    ],
    [
      'Convert to JSON',
      { operation: 'toJson', options: {} },
      1.1,
      'Extract From JSON (2)',
      { operation: 'text', options: {} },
      { data: JSON.stringify([GATSBY]) },
    ],
    ['Convert to CSV', { options: {} }, 1.1, 'Extract From CSV', { options: {} }, GATSBY],
    ['Convert to CSV (custom delimiter)', { options: { delimiter: '|' } }, 1.1, 'Extract From Custom Delimiter', { options: { delimiter: '|' } }, GATSBY],
  ];

  test('every pinned result is reproduced', async () => {
    const run = await runWorkflow(
      {
        nodes: [
          n('Start', 'manualTrigger', 1, {}),
          n('Code', 'noOp', 1, {}),
          ...PAIRS.flatMap(([convert, cp, version, extract, ep]) => [n(convert, 'convertToFile', version, cp), n(extract, 'extractFromFile', 1, ep)]),
        ],
        connections: {
          Start: { main: [[to('Code')]] },
          Code: { main: [PAIRS.map(([convert]) => to(convert))] },
          ...Object.fromEntries(PAIRS.map(([convert, , , extract]) => [convert, { main: [[to(extract)]] }])),
        },
        settings: { executionOrder: 'v1' },
      },
      { pinned: { Code: [[GATSBY]] } },
    );
    assert.equal(run.status, 'success', JSON.stringify(run.error));
    for (const [, , , extract, , expected] of PAIRS) assert.deepEqual(run.nodes.get(extract), [[expected]], extract);
  });
});

describe('n8n Extract From File', () => {
  test('csv (the default): one item per row keyed by the header, every cell text, empty cells left out', async () => {
    const out = await runItems(extract({}), [file('name,age,note\nAnn,31,\n"Bo, B",7,"say ""hi"""\n', 'people.csv')]);
    assert.deepEqual(jsonOf(out), [
      { name: 'Ann', age: '31' },
      { name: 'Bo, B', age: '7', note: 'say "hi"' },
    ]);
    assert.deepEqual(
      out[0]!.map((i) => i.pairedItem),
      [{ item: 0 }, { item: 0 }],
    );
  });

  test('csv options: delimiter, includeEmptyCells, headerRow off ({row}), fromLine, maxRowCount, binaryPropertyName', async () => {
    const csv = 'a;b\n1;\n2;x\n3;y\n';
    assert.deepEqual(jsonOf(await runItems(extract({ options: { delimiter: ';', includeEmptyCells: true, maxRowCount: 2 } }), [file(csv, 'f.csv')])), [
      { a: '1', b: '' },
      { a: '2', b: 'x' },
    ]);
    assert.deepEqual(
      jsonOf(await runItems(extract({ binaryPropertyName: 'f', options: { delimiter: ';', headerRow: false, fromLine: 2 } }), [file(csv, 'f.csv', {}, 'f')])),
      [{ row: ['2', 'x'] }, { row: ['3', 'y'] }],
    );
  });

  test('xlsx: the first sheet (or sheetName) as text cells, rawData keeps numbers and booleans', async () => {
    const workbook = new ExcelJS.Workbook();
    workbook.addWorksheet('First').addRows([['id'], ['x']]);
    workbook.addWorksheet('People').addRows([
      ['name', 'age', 'member'],
      ['Ann', 31, true],
    ]);
    const bytes = Buffer.from(await workbook.xlsx.writeBuffer());
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'xlsx' }), [file(bytes, 'w.xlsx')])), [{ id: 'x' }]);
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'xlsx', options: { sheetName: 'People' } }), [file(bytes, 'w.xlsx')])), [
      { name: 'Ann', age: '31', member: 'TRUE' },
    ]);
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'xlsx', options: { sheetName: 'People', rawData: true } }), [file(bytes, 'w.xlsx')])), [
      { name: 'Ann', age: 31, member: true },
    ]);
    const missing = await itemsFailure(extract({ operation: 'xlsx', options: { sheetName: 'Nope' } }), [file(bytes, 'w.xlsx')]);
    assert.match(missing.message, /no sheet named "Nope"/);
  });

  test('html: the first table', async () => {
    const html = '<p>x</p><table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>';
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'html' }), [file(html, 't.html')])), [{ k: 'a', v: '1' }]);
  });

  test('fromJson, text, xml, binaryToPropery into destinationKey; keepSource json, binary, both or unset; BOM stripped; an item without the file left out', async () => {
    const json = file('\ufeff{"a":[1,2]}', 'a.json', { kept: true });
    const [[parsed]] = (await runItems(extract({ operation: 'fromJson' }), [json])) as [[Item]];
    assert.deepEqual(parsed.json, { data: { a: [1, 2] } });
    assert.equal(parsed.binary, undefined);
    const [[kept]] = (await runItems(extract({ operation: 'fromJson', options: { keepSource: 'json' } }), [json])) as [[Item]];
    assert.deepEqual(kept.json, { kept: true, data: { a: [1, 2] } });
    assert.equal(kept.binary, undefined);
    const [[both]] = (await runItems(extract({ operation: 'text', destinationKey: 'body.text', options: { keepSource: 'both' } }), [json])) as [[Item]];
    assert.deepEqual(both.json, { kept: true, body: { text: '{"a":[1,2]}' } });
    assert.ok(both.binary?.data);
    const [[binaryOnly]] = (await runItems(extract({ operation: 'text', options: { keepSource: 'binary', stripBOM: false } }), [json])) as [[Item]];
    assert.deepEqual(binaryOnly.json, { data: '\ufeff{"a":[1,2]}' });
    const [skipped] = await runItems(extract({ operation: 'text' }), [{ json: { none: true } }, json]);
    assert.deepEqual(
      skipped!.map((i) => i.pairedItem),
      [{ item: 1 }],
    );
    assert.ok(binaryOnly.binary?.data);
    const [[xml]] = (await runItems(extract({ operation: 'xml' }), [file('<r><id>1</id></r>', 'r.xml')])) as [[Item]];
    assert.deepEqual(xml.json, { data: { r: { id: '1' } } });
    const [[b64]] = (await runItems(extract({ operation: 'binaryToPropery', destinationKey: 'b' }), [file('hi', 'h.txt')])) as [[Item]];
    assert.deepEqual(b64.json, { b: 'aGk=' });
    const bad = await itemsFailure(extract({ operation: 'fromJson' }), [file('{nope', 'x.json')]);
    assert.match(bad.message, /not valid JSON/);
  });

  test('an item without the file fails naming the field; with continueRegularOutput it becomes {error}', async () => {
    const failure = await itemsFailure(extract({}), [{ json: {} }]);
    assert.match(failure.message, /no binary field 'data'/);
    const [out] = await runItems({ ...extract({}), onError: 'continueRegularOutput' }, [{ json: {} }, file('a\n1', 'a.csv')]);
    assert.equal(out!.length, 2);
    assert.match(String(out![0]!.json.error), /no binary field/);
    assert.deepEqual(out![1]!.json, { a: '1' });
  });

  test('a CSV record the parser refuses: version 1 keeps the rows before it, 1.1 fails naming it, skipRecordsWithErrors drops it', async () => {
    const longRow = 'a,b\n1,2\n3,4,5\n6,7\n';
    const badQuote = 'a,b\n1,2\n"3"x,4\n6,7\n';
    for (const csv of [longRow, badQuote]) assert.deepEqual(jsonOf(await runItems(extract({}), [file(csv, 'f.csv')])), [{ a: '1', b: '2' }], csv);
    const v11 = (parameters: Record<string, unknown>) => ({ ...extract(parameters), typeVersion: 1.1 });
    assert.match((await itemsFailure(v11({}), [file(longRow, 'f.csv')])).message, /Invalid Record Length: columns length is 2, got 3 on line 3$/);
    assert.match(
      (await itemsFailure(v11({ options: { headerRow: false } }), [file(longRow, 'f.csv')])).message,
      /Invalid Record Length: expect 2, got 3 on line 3$/,
    );
    assert.match((await itemsFailure(v11({}), [file(badQuote, 'f.csv')])).message, /could not be read/);
    assert.deepEqual(jsonOf(await runItems(v11({}), [file('a,b\n1,2\n', 'f.csv')])), [{ a: '1', b: '2' }]);
    // The parser stops at maxRowCount: a record past it is never read.
    assert.deepEqual(jsonOf(await runItems(v11({ options: { maxRowCount: 1 } }), [file(longRow, 'f.csv')])), [{ a: '1', b: '2' }]);
    const skip = (max: number) => ({ skipRecordsWithErrors: { value: { enabled: true, maxSkippedRecords: max } } });
    for (const version of [1, 1.1]) {
      const node = { ...extract({ options: skip(-1) }), typeVersion: version };
      assert.deepEqual(jsonOf(await runItems(node, [file(longRow, 'f.csv')])), [
        { a: '1', b: '2' },
        { a: '6', b: '7' },
      ]);
    }
    const tooMany = await itemsFailure(v11({ options: skip(1) }), [file('a,b\n1\n2\n3,4\n', 'f.csv')]);
    assert.match(tooMany.message, /Max number of skipped records exceeded$/);
  });

  test('versions 1 and 1.1 are imported; a version n8n does not have is refused', () => {
    assert.equal(importRefusal({ ...extract({}), typeVersion: 1.1 }), undefined);
    assert.ok(importRefusal({ ...extract({}), typeVersion: 1.2 }));
  });

  test('the range option is refused at import, naming it; every spreadsheet operation is imported', () => {
    assert.equal(importRefusal(extract({ operation: 'xlsx', options: { range: 'A1:B2' } }))?.option, 'options.range');
    assert.equal(importRefusal(extract({ operation: 'xls', options: { range: 'A1:B2' } }))?.option, 'options.range');
    for (const operation of ['xlsx', 'xls', 'rtf', 'pdf', 'fromIcs', 'ods']) assert.equal(importRefusal(extract({ operation })), undefined, operation);
  });
});

describe('n8n Extract From File: PDF', () => {
  const REPORT = pdfFile({ pages: [['Quarterly report', 'Sales (EU) up'], ['Page two']], info: { Title: 'Q3', Author: 'Ann' } });
  const INFO = {
    PDFFormatVersion: '1.4',
    Language: null,
    EncryptFilterName: null,
    IsLinearized: false,
    IsAcroFormPresent: false,
    IsXFAPresent: false,
    IsCollectionPresent: false,
    IsSignaturesPresent: false,
    Title: 'Q3',
    Author: 'Ann',
  };

  test("the text of every page and the document's description as the item's fields; the file read is not kept", async () => {
    const [[item]] = (await runItems(extract({ operation: 'pdf' }), [file(REPORT, 'report.pdf', { id: 1 })])) as [[Item]];
    assert.deepEqual(item.json, {
      numpages: 2,
      numrender: 2,
      info: INFO,
      text: 'Quarterly report\nSales (EU) up\n\nPage two',
      version: '4.9.155',
    });
    assert.equal(item.binary, undefined);
    assert.deepEqual(item.pairedItem, { item: 0 });
  });

  test('joinPages off gives one text per page; maxPages reads the first pages only; keepSource keeps the fields or the file', async () => {
    const [[pages]] = (await runItems(extract({ operation: 'pdf', options: { joinPages: false } }), [file(REPORT, 'r.pdf')])) as [[Item]];
    assert.deepEqual(pages.json.text, ['Quarterly report\nSales (EU) up', 'Page two']);
    const [[first]] = (await runItems(extract({ operation: 'pdf', binaryPropertyName: 'doc', options: { maxPages: 1, keepSource: 'json' } }), [
      file(REPORT, 'r.pdf', { id: 1, text: 'mine' }, 'doc'),
    ])) as [[Item]];
    assert.equal(first.json.numpages, 2);
    assert.equal(first.json.numrender, 1);
    // The PDF's own fields win over the item's of the same name.
    assert.equal(first.json.text, 'Quarterly report\nSales (EU) up');
    assert.equal(first.json.id, 1);
    assert.equal(first.binary, undefined);
    const [[kept]] = (await runItems(extract({ operation: 'pdf', options: { keepSource: 'binary' } }), [file(REPORT, 'r.pdf', { id: 1 })])) as [[Item]];
    assert.equal(kept.json.id, undefined);
    assert.equal(kept.binary?.data?.fileName, 'r.pdf');
  });

  test('an encrypted PDF opens with its password; without it or with a wrong one the item fails saying so', async () => {
    const locked = pdfFile({ pages: [['Salaries']], info: { Title: 'Locked' }, password: 'open sesame' });
    const [[item]] = (await runItems(extract({ operation: 'pdf', options: { password: 'open sesame' } }), [file(locked, 'l.pdf')])) as [[Item]];
    assert.equal(item.json.text, 'Salaries');
    assert.equal((item.json.info as Record<string, unknown>).Title, 'Locked');
    assert.equal((item.json.info as Record<string, unknown>).EncryptFilterName, 'Standard');
    assert.match(
      (await itemsFailure(extract({ operation: 'pdf' }), [file(locked, 'l.pdf')])).message,
      /password protected: give its password \(options\.password\)/,
    );
    assert.match((await itemsFailure(extract({ operation: 'pdf', options: { password: 'guess' } }), [file(locked, 'l.pdf')])).message, /password is incorrect/);
  });

  test('a file that is no PDF fails the item; with continueRegularOutput it becomes {error}', async () => {
    assert.match((await itemsFailure(extract({ operation: 'pdf' }), [file('hello', 'h.pdf')])).message, /not a readable PDF/);
    const [out] = await runItems({ ...extract({ operation: 'pdf' }), onError: 'continueRegularOutput' }, [file('hello', 'h.pdf'), file(REPORT, 'r.pdf')]);
    assert.match(String(out![0]!.json.error), /not a readable PDF/);
    assert.equal(out![1]!.json.numpages, 2);
  });
});

describe('n8n Extract From File: iCalendar', () => {
  const ICS = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Acme//Planner 1.0//EN',
    'METHOD:PUBLISH',
    'X-WR-CALNAME:Team',
    'BEGIN:VTIMEZONE',
    'TZID:Europe/Oslo',
    'BEGIN:STANDARD',
    'DTSTART:19701025T030000',
    'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU',
    'TZOFFSETFROM:+0200',
    'TZOFFSETTO:+0100',
    'END:STANDARD',
    'BEGIN:DAYLIGHT',
    'DTSTART:19700329T020000',
    'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU',
    'TZOFFSETFROM:+0100',
    'TZOFFSETTO:+0200',
    'END:DAYLIGHT',
    'END:VTIMEZONE',
    'BEGIN:VEVENT',
    'UID:standup-1@acme',
    'DTSTAMP:20260101T080000Z',
    'DTSTART;TZID=Europe/Oslo:20260112T090000',
    'DTEND;TZID=Europe/Oslo:20260112T091500',
    'SUMMARY:Stand-up',
    'DESCRIPTION:Daily\\, short\\nand sweet',
    'LOCATION:Room 4',
    'RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=10',
    'ORGANIZER;CN=Ann:mailto:ann@acme.test',
    'ATTENDEE;CN=Bo;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;RSVP=TRUE:mailto:bo@acme.test',
    'CATEGORIES:work,daily',
    'SEQUENCE:2',
    'STATUS:CONFIRMED',
    'END:VEVENT',
    'BEGIN:VEVENT',
    'UID:holiday@acme',
    'DTSTAMP:20260101T080000Z',
    'DTSTART;VALUE=DATE:20260517',
    'DURATION:P1D',
    'SUMMARY:National day',
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');

  test("the calendar as one object in destinationKey: its events with their dates as instants, a named zone's local time beside", async () => {
    const [[item]] = (await runItems(extract({ operation: 'fromIcs', destinationKey: 'calendar', options: { keepSource: 'json' } }), [
      file(ICS, 'team.ics', { team: 'core' }),
    ])) as [[Item]];
    assert.deepEqual(item.json, {
      team: 'core',
      calendar: {
        version: '2.0',
        prodId: '-//Acme//Planner 1.0//EN',
        method: 'PUBLISH',
        name: 'Team',
        events: [
          {
            uid: 'standup-1@acme',
            summary: 'Stand-up',
            start: {
              date: '2026-01-12T08:00:00.000Z',
              type: 'DATE-TIME',
              local: { date: '2026-01-12T09:00:00.000Z', timezone: 'Europe/Oslo', tzoffset: '+0100' },
            },
            end: {
              date: '2026-01-12T08:15:00.000Z',
              type: 'DATE-TIME',
              local: { date: '2026-01-12T09:15:00.000Z', timezone: 'Europe/Oslo', tzoffset: '+0100' },
            },
            stamp: { date: '2026-01-01T08:00:00.000Z', type: 'DATE-TIME' },
            description: 'Daily, short\nand sweet',
            location: 'Room 4',
            status: 'CONFIRMED',
            sequence: 2,
            categories: ['work', 'daily'],
            organizer: { name: 'Ann', email: 'ann@acme.test' },
            attendees: [{ name: 'Bo', email: 'bo@acme.test', role: 'REQ-PARTICIPANT', partstat: 'ACCEPTED', rsvp: true }],
            recurrenceRule: { frequency: 'WEEKLY', count: 10, byDay: [{ day: 'MO' }, { day: 'WE' }, { day: 'FR' }] },
          },
          {
            uid: 'holiday@acme',
            summary: 'National day',
            start: { date: '2026-05-17T00:00:00.000Z', type: 'DATE' },
            stamp: { date: '2026-01-01T08:00:00.000Z', type: 'DATE-TIME' },
            duration: { days: 1 },
          },
        ],
      },
    });
    assert.equal(item.binary, undefined);
  });

  test('a summer time is read with the zone offset of its date; a file that is no calendar fails the item', async () => {
    const summer = ICS.replace('DTSTART;TZID=Europe/Oslo:20260112T090000', 'DTSTART;TZID=Europe/Oslo:20260715T090000');
    const [[item]] = (await runItems(extract({ operation: 'fromIcs' }), [file(summer, 's.ics')])) as [[Item]];
    const events = (item.json.data as { events: { start: unknown }[] }).events;
    assert.deepEqual(events[0]!.start, {
      date: '2026-07-15T07:00:00.000Z',
      type: 'DATE-TIME',
      local: { date: '2026-07-15T09:00:00.000Z', timezone: 'Europe/Oslo', tzoffset: '+0200' },
    });
    assert.match((await itemsFailure(extract({ operation: 'fromIcs' }), [file('not a calendar', 'x.ics')])).message, /not a readable iCalendar file/);
    const vcard = 'BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Ann\r\nEND:VCARD\r\n';
    assert.match((await itemsFailure(extract({ operation: 'fromIcs' }), [file(vcard, 'x.ics')])).message, /holds a VCARD, not a VCALENDAR/);
  });
});

describe('n8n Extract From File: ODS', () => {
  /** An .ods as LibreOffice writes it: rows padded with repeated empty cells, repeated rows, spaces as text:s, a value in a span. */
  const ods = () => {
    const content = `<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3">
<office:body><office:spreadsheet>
<table:table table:name="Notes"><table:table-row><table:table-cell office:value-type="string"><text:p>skip me</text:p></table:table-cell></table:table-row></table:table>
<table:table table:name="Stock">
<table:table-column table:number-columns-repeated="3"/>
<table:table-row><table:table-cell office:value-type="string"><text:p>sku</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>qty</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>ok</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>note</text:p></table:table-cell><table:table-cell table:number-columns-repeated="1020"/></table:table-row>
<table:table-row><table:table-cell office:value-type="string"><text:p>A&amp;1</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="3.5"><text:p>3.50</text:p></table:table-cell><table:table-cell office:value-type="boolean" office:boolean-value="true"><text:p>TRUE</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>two<text:s text:c="2"/>spaces <text:span>styled</text:span></text:p></table:table-cell><table:table-cell table:number-columns-repeated="1020"/></table:table-row>
<table:table-row table:number-rows-repeated="2"><table:table-cell office:value-type="string"><text:p>B</text:p></table:table-cell><table:table-cell/><table:table-cell office:value-type="boolean" office:boolean-value="false"><text:p>FALSE</text:p></table:table-cell></table:table-row>
<table:table-row table:number-rows-repeated="1048570"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>
</table:table>
</office:spreadsheet></office:body></office:document-content>`;
    return Buffer.from(zipSync({ mimetype: [strToU8('application/vnd.oasis.opendocument.spreadsheet'), { level: 0 }], 'content.xml': strToU8(content) }));
  };

  test("the sheet's rows as items: shown text by default, typed values with rawData; padding cells and rows are not unfolded", async () => {
    const book = file(ods(), 'stock.ods');
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'ods', options: { sheetName: 'Stock' } }), [book])), [
      { sku: 'A&1', qty: '3.50', ok: 'TRUE', note: 'two  spaces styled' },
      { sku: 'B', ok: 'FALSE' },
      { sku: 'B', ok: 'FALSE' },
    ]);
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'ods', options: { sheetName: 'Stock', rawData: true, includeEmptyCells: true } }), [book])), [
      { sku: 'A&1', qty: 3.5, ok: true, note: 'two  spaces styled' },
      { sku: 'B', qty: '', ok: false, note: '' },
      { sku: 'B', qty: '', ok: false, note: '' },
    ]);
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'ods', options: { headerRow: false } }), [book])), [{ row: ['skip me'] }]);
  });

  test('a sheet that unfolds to millions of cells, a missing sheet and a file that is no ODS fail the item', async () => {
    const bomb = Buffer.from(
      zipSync({
        'content.xml': strToU8(
          '<office:document-content xmlns:office="o" xmlns:table="t" xmlns:text="x"><office:body><office:spreadsheet><table:table table:name="S">' +
            '<table:table-row table:number-rows-repeated="1000000"><table:table-cell table:number-columns-repeated="1000" office:value-type="string"><text:p>x</text:p></table:table-cell></table:table-row>' +
            '</table:table></office:spreadsheet></office:body></office:document-content>',
        ),
      }),
    );
    assert.match((await itemsFailure(extract({ operation: 'ods' }), [file(bomb, 'b.ods')])).message, /unfolds to more than 2000000 cells/);
    assert.match((await itemsFailure(extract({ operation: 'ods', options: { sheetName: 'Nope' } }), [file(ods(), 's.ods')])).message, /no sheet named "Nope"/);
    assert.match((await itemsFailure(extract({ operation: 'ods' }), [file('plain text', 's.ods')])).message, /not an ODS spreadsheet/);
  });
});

describe('n8n Extract From File: XLS', () => {
  test('a workbook another program wrote (xlwt): sheetName, shown text or rawData, dates as instants, a 12,000-character string', async () => {
    const book = file(xlwtWorkbook(), 'stock.xls');
    const rows = jsonOf(await runItems(extract({ operation: 'xls', options: { sheetName: 'Stock' } }), [book]));
    assert.equal(rows.length, 3);
    assert.deepEqual(rows[0], {
      sku: 'A-1',
      qty: '3',
      price: '12.5',
      ok: 'TRUE',
      since: '2024-02-29T00:00:00.000Z',
      seen: '2024-03-01T13:45:00.000Z',
      note: 'Zoë – 日本',
    });
    assert.deepEqual(rows[1], { sku: 'B-2', qty: '-40', ok: 'FALSE', note: 'ab'.repeat(6000) });
    assert.deepEqual(rows[2], { sku: 'C-3', qty: '1234567.891' });
    const typed = jsonOf(await runItems(extract({ operation: 'xls', options: { sheetName: 'Stock', rawData: true, includeEmptyCells: true } }), [book]));
    assert.deepEqual(typed[0], {
      sku: 'A-1',
      qty: 3,
      price: 12.5,
      ok: true,
      since: '2024-02-29T00:00:00.000Z',
      seen: '2024-03-01T13:45:00.000Z',
      note: 'Zoë – 日本',
    });
    assert.deepEqual(typed[2], { sku: 'C-3', qty: 1234567.891, price: '', ok: '', since: '', seen: '', note: '' });
    // The first sheet unless sheetName; without a header row each row is {row}.
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'xls', options: { headerRow: false } }), [book])), [{ row: ['skip me'] }]);
    const missing = await itemsFailure(extract({ operation: 'xls', options: { sheetName: 'Nope' } }), [book]);
    assert.match(missing.message, /no sheet named "Nope"/);
  });

  test("Excel's records: shared strings split over CONTINUE (the flag re-read), LABEL, RK, MULRK, BOOLERR, cached formula values, 1904 dates", async () => {
    // "compressed…" starts as one byte a character and goes on in UTF-16 in the CONTINUE record.
    const split = 'compressed then 日本語';
    const head = split.slice(0, 16);
    const rest = split.slice(16);
    const sst = biffRecord(0x00fc, u32(3), u32(3), u16(1), [0], Buffer.from('h'), u16(split.length), [0], Buffer.from(head, 'latin1'));
    const more = biffRecord(0x003c, [1], Buffer.from(rest, 'utf16le'), u16(4), [1], Buffer.from('Zoë!', 'utf16le'));
    const globals = [
      biffRecord(0x0022, u16(1)), // DATEMODE: 1904
      biffRecord(0x041e, u16(164), u16(12), [0], Buffer.from('dd"."mm"."yy')),
      // XF 0: General; XF 1: built-in date 14; XF 2: the custom date format 164.
      ...[0, 14, 164].map((fmt) => biffRecord(0x00e0, u16(0, fmt), Buffer.alloc(16))),
      sst,
      more,
    ];
    const cell = (row: number, col: number, xf = 0) => u16(row, col, xf);
    const formula = (row: number, col: number, value: Buffer) => biffRecord(0x0006, cell(row, col), value, u16(0), u32(0), u16(0));
    const cached = (type: number, v = 0) => Buffer.from([type, 0, v, 0, 0, 0, 0xff, 0xff]);
    const sheet = [
      biffRecord(0x00fd, cell(0, 0), u32(0)), // "h"
      biffRecord(0x0204, cell(0, 1), u16(1), [0], Buffer.from('i')),
      biffRecord(0x0204, cell(0, 2), u16(1), [0], Buffer.from('j')),
      biffRecord(0x0204, cell(0, 3), u16(1), [0], Buffer.from('k')),
      biffRecord(0x00fd, cell(1, 0), u32(1)),
      // RK: 12345 as an integer, 1.23 as 123 / 100.
      biffRecord(0x027e, cell(1, 1), u32((12345 << 2) | 2)),
      biffRecord(0x027e, cell(1, 2), u32((123 << 2) | 3)),
      biffRecord(0x0205, cell(1, 3), [0x07, 1]), // #DIV/0!
      // MULRK: -7, 0.5 (an IEEE double's high bits) on XF 1, 0 on XF 2 (dates), then the last column.
      biffRecord(0x00bd, u16(2, 0), u16(0), u32((-7 << 2) | 2), u16(1), u32(f64(0.5).readUInt32LE(4)), u16(2), u32(2), u16(2)),
      biffRecord(0x0205, cell(2, 3), [1, 0]), // TRUE
      formula(3, 0, f64(42)),
      formula(3, 1, cached(0)),
      biffRecord(0x0207, u16(5), [0], Buffer.from('a sum')),
      formula(3, 2, cached(1, 1)),
      formula(3, 3, cached(2, 0x2a)),
      biffRecord(0x0203, cell(4, 3), f64(0.25)),
      // An embedded chart's substream: its records are not the sheet's.
      biffRecord(0x0809, u16(0x0600, 0x0020), Buffer.alloc(12)),
      biffRecord(0x0203, cell(9, 0), f64(99)),
      biffRecord(0x000a),
    ];
    const bytes = biffWorkbook(globals, [{ name: 'Data', records: sheet }]);
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'xls', options: { headerRow: false, rawData: true } }), [file(bytes, 'r.xls')])), [
      { row: ['h', 'i', 'j', 'k'] },
      { row: [split, 12345, 1.23, '#DIV/0!'] },
      // 1904 workbooks count days from 1904-01-01: 0.5 is its noon, 0 the day itself.
      { row: [-7, '1904-01-01T12:00:00.000Z', '1904-01-01T00:00:00.000Z', true] },
      { row: [42, 'a sum', true, '#N/A'] },
      { row: [0.25] },
    ]);
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'xls' }), [file(bytes, 'r.xls')]))[1], {
      h: '-7',
      i: '1904-01-01T12:00:00.000Z',
      j: '1904-01-01T00:00:00.000Z',
      k: 'TRUE',
    });
  });

  test('Convert To File xls, then Extract From File xls: the rows come back, numbers, booleans, empty cells, unicode and a 20,000-character string', async () => {
    const long = 'é'.repeat(5000) + '日'.repeat(6000) + 'x'.repeat(9000);
    const rows = [
      { name: 'Ann', age: 31, member: true, note: 'Zoë 😀' },
      { name: 'Bo', age: -2.5, member: false, note: long },
      { name: 'Cy', note: 'a\nb' },
    ];
    const [[book]] = (await runItems(
      { type: 'n8n-nodes-base.convertToFile', typeVersion: 1.1, parameters: { operation: 'xls' } },
      rows.map((json) => ({ json })),
    )) as [[Item]];
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'xls', options: { rawData: true } }), [book])), rows);
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'xls', options: { includeEmptyCells: true } }), [book]))[2], {
      name: 'Cy',
      age: '',
      member: '',
      note: 'a\nb',
    });
  });

  test('an XLSX file given as XLS is read as the XLSX it is', async () => {
    const workbook = new ExcelJS.Workbook();
    workbook.addWorksheet('S').addRows([['k'], [7]]);
    const bytes = Buffer.from(await workbook.xlsx.writeBuffer());
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'xls', options: { rawData: true } }), [file(bytes, 'old.xls')])), [{ k: 7 }]);
  });

  test('a truncated, garbage, encrypted or Excel 95 file fails the item saying so; with continueRegularOutput it becomes {error}', async () => {
    const good = xlwtWorkbook();
    const failure = async (bytes: Buffer) => (await itemsFailure(extract({ operation: 'xls' }), [file(bytes, 'bad.xls')])).message;
    assert.match(await failure(Buffer.from('not a workbook at all')), /not a readable XLS workbook: it is not a Compound File/);
    assert.match(await failure(good.subarray(0, 2048)), /not a readable XLS workbook/);
    const scrambled = Buffer.from(good);
    for (let i = 512; i < scrambled.length; i += 7) scrambled[i] = (scrambled[i]! * 31 + i) & 0xff;
    assert.match(await failure(scrambled), /not a readable XLS workbook|no sheet/);
    // Every prefix of a real workbook fails the item saying so, or reads: never a crash.
    for (let cut = 512; cut < good.length; cut += 1021) {
      const [out] = await runItems({ ...extract({ operation: 'xls', options: { headerRow: false } }), onError: 'continueRegularOutput' }, [
        file(good.subarray(0, cut), 'cut.xls'),
      ]);
      for (const item of out!) {
        if ('error' in item.json) assert.match(String(item.json.error), /XLS workbook/, `cut at ${cut}`);
        else assert.ok(Array.isArray(item.json.row), `cut at ${cut}`);
      }
    }
    // One cell at the last column of 7,900 rows unfolds to more than 2 million cells.
    const wide = Array.from({ length: 7900 }, (_, row) => biffRecord(0x027e, u16(row, 255, 0), u32((1 << 2) | 2)));
    assert.match(await failure(biffWorkbook([], [{ name: 'S', records: wide }])), /unfolds to more than 2000000 cells/);
    const encrypted = biffWorkbook([biffRecord(0x002f, u16(1), Buffer.alloc(52))], [{ name: 'S', records: [] }]);
    assert.match(await failure(encrypted), /encrypted \(protected with a password\)/);
    assert.match(await failure(biffWorkbook([], [{ name: 'S', records: [] }], 'Book')), /Excel 5\/95 workbook/);
    const cellOutside = biffWorkbook([], [{ name: 'S', records: [biffRecord(0x00fd, u16(0, 0, 0), u32(5))] }]);
    assert.match(await failure(cellOutside), /names a shared string the workbook does not have/);
    const [out] = await runItems({ ...extract({ operation: 'xls', options: { headerRow: false } }), onError: 'continueRegularOutput' }, [
      file('junk', 'a.xls'),
      file(good, 'b.xls'),
    ]);
    assert.equal(out!.length, 2);
    assert.match(String(out![0]!.json.error), /not a readable XLS workbook/);
    assert.deepEqual(out![1]!.json, { row: ['skip me'] });
  });
});

describe('n8n Extract From File: RTF', () => {
  test("a document's tables as rows: code page bytes, \\u characters, escapes; text outside the tables, font tables and pictures left out", async () => {
    const rtf = [
      '{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fswiss Arial;}}{\\colortbl;\\red0\\green0\\blue0;}',
      '{\\*\\generator Word;}Intro text\\par',
      '\\trowd\\trgaph108\\cellx1440\\cellx2880\\cellx4320\\pard\\intbl name\\cell qty\\cell note\\cell\\row',
      "\\trowd\\cellx1440\\cellx2880\\cellx4320\\pard\\intbl{\\b Caf\\'e9}\\cell 3\\cell a \\{b\\} c:\\\\d\\cell\\row",
      '\\trowd\\cellx1440\\cellx2880\\cellx4320\\pard\\intbl \\u26085?\\u26412?\\uc2\\u-10179??\\u-8704??\\cell\\cell two\\par lines\\cell\\row',
      '\\pard After the table.{\\pict\\pngblip 89504e47}\\par}',
    ].join('\r\n');
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'rtf' }), [file(rtf, 't.rtf')])), [
      { name: 'Café', qty: '3', note: 'a {b} c:\\d' },
      { name: '日本😀', note: 'two\nlines' },
    ]);
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'rtf', options: { headerRow: false, includeEmptyCells: true } }), [file(rtf, 't.rtf')]))[2], {
      row: ['日本😀', '', 'two\nlines'],
    });
  });

  test("\\'hh bytes in the document's code page (\\ansicpg): Cyrillic, and Shift-JIS whose characters are two bytes", async () => {
    const cyrillic = "{\\rtf1\\ansi\\ansicpg1251\\trowd\\cellx100\\pard\\intbl \\'cf\\'f0\\'e8\\'e2\\'e5\\'f2\\cell\\row}";
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'rtf', options: { headerRow: false } }), [file(cyrillic, 'c.rtf')])), [{ row: ['Привет'] }]);
    const japanese = "{\\rtf1\\ansi\\ansicpg932\\trowd\\cellx100\\pard\\intbl \\'93\\'fa\\'96\\'7b\\cell\\row}";
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'rtf', options: { headerRow: false } }), [file(japanese, 'j.rtf')])), [{ row: ['日本'] }]);
    // Bytes past ASCII written as they are, not as \'hh, are in the code page too.
    const raw = Buffer.concat([
      Buffer.from('{\\rtf1\\ansi\\ansicpg1251\\trowd\\cellx100\\pard\\intbl '),
      Buffer.from('cff0e8e2e5f2', 'hex'),
      Buffer.from('\\cell\\row}'),
    ]);
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'rtf', options: { headerRow: false } }), [file(raw, 'r.rtf')])), [{ row: ['Привет'] }]);
  });

  test('Convert To File rtf, then Extract From File rtf: the rows come back as text; a file that is no RTF fails the item', async () => {
    const rows = [
      { name: 'Ann {x}', age: 31, member: true, note: 'back\\slash' },
      { name: 'Zoë 😀', age: -2.5, member: false, note: 'a\nb' },
    ];
    const [[doc]] = (await runItems(
      { type: 'n8n-nodes-base.convertToFile', typeVersion: 1.1, parameters: { operation: 'rtf' } },
      rows.map((json) => ({ json })),
    )) as [[Item]];
    assert.deepEqual(jsonOf(await runItems(extract({ operation: 'rtf' }), [doc])), [
      { name: 'Ann {x}', age: '31', member: 'TRUE', note: 'back\\slash' },
      { name: 'Zoë 😀', age: '-2.5', member: 'FALSE', note: 'a\nb' },
    ]);
    assert.match((await itemsFailure(extract({ operation: 'rtf' }), [file('plain text', 'a.rtf')])).message, /not an RTF document/);
  });
});

test('an operation Extract From File does not have is refused at import, listing the ones it has', () => {
  assert.match(importRefusal(extract({ operation: 'fromDocx' }))?.message ?? '', /operation.*must be one of csv/);
});
