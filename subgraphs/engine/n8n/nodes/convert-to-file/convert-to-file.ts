import type * as Ics from 'ics';
import type { DateArray, EventAttributes } from 'ics';
import { DEFAULT_BINARY_KEY, NodeError, prepareBinary, type Item, type NodeContext, type NodeDefinition } from '../../../nodes';
import { encodeText, perItem, unsupportedEncoding } from '../files.items';
import { getPath } from '../item-lists/paths';
import { collection, fixedOption, operationIn, type Params } from '../item-lists/params';
import { SHEET_MIME_TYPES, writeSheet, type SheetFormat } from './spreadsheet';

/** ics, loaded at the first calendar file rather than at every start. */
let icsModule: typeof Ics | undefined;
const ics = () => (icsModule ??= require('ics') as typeof Ics);

/**
 * n8n's Convert To File (1, 1.1): items to a file in the item's binary field `binaryPropertyName`
 * (default `data`), the output item's json empty.
 *
 * - csv, html, xlsx, xls, ods, rtf: all items as one spreadsheet (spreadsheet.ts); options fileName
 *   (default File.<ext>), headerRow, sheetName, delimiter (CSV).
 * - toJson: all items as one JSON array (mode `once`, the default) or each item's json as its own
 *   file (`each`); options format (indented), encoding, addBOM, fileName (default file.json).
 * - toText: the text in `sourceProperty` (a dotted path; an object is written as JSON); options
 *   encoding, addBOM, fileName (default file.txt).
 * - toBinary: the base64 string in `sourceProperty` as the file (with `dataIsBase64` off, the
 *   text itself in `encoding`); options fileName (default file.<ext>), mimeType.
 * - iCal: one event per item (`ics`): title, start, end, allDay and the additional fields
 *   description, location, url, uid, sequence, status, busyStatus, calName, recurrenceRule,
 *   fileName (default event.ics).
 *
 * The iCal fields attendees, organizer, geolocation and useWorkflowTimezone are refused at import.
 */

const SHEETS: readonly string[] = ['csv', 'html', 'xlsx', 'ods', 'xls', 'rtf'];
const OPERATIONS = [...SHEETS, 'toJson', 'toText', 'toBinary', 'iCal'];
const ICAL_REFUSED = ['attendeesUi', 'organizerUi', 'geolocationUi', 'useWorkflowTimezone'];

function unsupported(p: Params): { option: string; message: string } | undefined {
  const operation = fixedOption(p.operation, 'csv');
  const options = collection(p.options);
  const encoding = unsupportedEncoding(options.encoding, 'options.encoding');
  if (encoding) return encoding;
  if (operation === 'iCal') {
    const extra = collection(p.additionalFields);
    const refused = ICAL_REFUSED.find((name) => extra[name] !== undefined && extra[name] !== false);
    if (refused) return { option: `additionalFields.${refused}`, message: `the iCal field ${refused} is not supported; leave it out` };
  }
  return undefined;
}

function binaryKey(p: Params): string {
  return String(p.binaryPropertyName || DEFAULT_BINARY_KEY);
}

/** All items as one spreadsheet file of `format` in the binary field `binaryPropertyName`, with the spreadsheet options of `p`. */
export async function spreadsheetItem(items: Item[], format: SheetFormat, p: Params, defaultName = 'File'): Promise<Item> {
  const options = collection(p.options);
  const bytes = await writeSheet(
    items.map((i) => i.json),
    format,
    { headerRow: options.headerRow !== false, delimiter: options.delimiter as string | undefined, sheetName: options.sheetName as string | undefined },
  );
  const fileName = String(options.fileName ?? `${defaultName}.${format}`);
  return { json: {}, binary: { [binaryKey(p)]: prepareBinary(bytes, { fileName, mimeType: SHEET_MIME_TYPES[format] }) }, pairedItem: { item: 0 } };
}

async function spreadsheet(ctx: NodeContext, format: SheetFormat): Promise<Item[]> {
  const [p] = await ctx.parameters([0]);
  return [await spreadsheetItem(ctx.items, format, p!)];
}

function jsonFile(value: unknown, p: Params, index: number): Item {
  const options = collection(p.options);
  const text = options.format === true ? JSON.stringify(value, null, 2) : JSON.stringify(value);
  const bytes = encodeText(text, options.encoding, options.addBOM === true);
  const fileName = String(options.fileName || 'file.json');
  return { json: {}, binary: { [binaryKey(p)]: prepareBinary(bytes, { fileName, mimeType: 'application/json' }) }, pairedItem: { item: index } };
}

async function toJson(ctx: NodeContext): Promise<Item[]> {
  const [first] = await ctx.parameters([0]);
  if (fixedOption(first!.mode, 'once') === 'each') {
    const params = await ctx.parameters();
    return perItem(ctx, async (i) => jsonFile(ctx.items[i]!.json, params[i]!, i));
  }
  return ctx.items.length
    ? [
        jsonFile(
          ctx.items.map((i) => i.json),
          first!,
          0,
        ),
      ]
    : [];
}

function sourceValue(ctx: NodeContext, p: Params, i: number): unknown {
  const property = String(p.sourceProperty ?? '');
  if (!property) throw new NodeError('The parameter "Text Input Field" (sourceProperty) is required');
  const value = getPath(ctx.items[i]!.json, property);
  if (value === undefined) throw new NodeError(`The value in "${property}" is not set`);
  return value;
}

async function toText(ctx: NodeContext): Promise<Item[]> {
  const params = await ctx.parameters();
  return perItem(ctx, async (i) => {
    const p = params[i]!;
    const options = collection(p.options);
    const value = sourceValue(ctx, p, i);
    // An object is written as JSON, and is then a JSON file.
    const isObject = typeof value === 'object' && value !== null;
    const text = isObject ? JSON.stringify(value) : String(value);
    const bytes = encodeText(text, options.encoding, options.addBOM === true);
    const mimeType = isObject ? 'application/json' : 'text/plain';
    const binary = prepareBinary(bytes, { fileName: String(options.fileName || (isObject ? 'file.json' : 'file.txt')), mimeType });
    return { json: {}, binary: { [binaryKey(p)]: binary }, pairedItem: { item: i } };
  });
}

async function toBinary(ctx: NodeContext): Promise<Item[]> {
  const params = await ctx.parameters();
  return perItem(ctx, async (i) => {
    const p = params[i]!;
    const options = collection(p.options);
    const value = sourceValue(ctx, p, i);
    if (typeof value !== 'string') throw new NodeError(`The field "${String(p.sourceProperty)}" must hold a string, not ${typeof value}`);
    let bytes: Buffer;
    if (options.dataIsBase64 === false) bytes = encodeText(value, options.encoding, options.addBOM === true);
    else {
      // A data: URL keeps its payload; anything else must be base64 as a whole.
      const payload = value
        .trim()
        .replace(/^data:[^,]*;base64,/s, '')
        .replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/=_-]*$/.test(payload)) {
        throw new NodeError(
          'The provided string is not valid base64 data. If you are trying to write plain text to a file, use the "Convert to Text File" operation instead.',
        );
      }
      bytes = Buffer.from(payload, 'base64');
    }
    const mimeType = (options.mimeType as string | undefined) || /^data:([^;,]+)/.exec(value.trim())?.[1];
    const binary = prepareBinary(bytes, { fileName: (options.fileName as string | undefined) || undefined, mimeType });
    // Without a name the file is "file", with the extension of its type (n8n's default).
    if (!binary.fileName) binary.fileName = binary.fileExtension ? `file.${binary.fileExtension}` : 'file';
    return { json: {}, binary: { [binaryKey(p)]: binary }, pairedItem: { item: i } };
  });
}

function dateOf(value: unknown, label: string): Date {
  const date = value instanceof Date ? value : new Date(String(value));
  if (value === undefined || value === '' || Number.isNaN(date.getTime())) throw new NodeError(`The event's ${label} "${String(value)}" is not a date`);
  return date;
}

function dayOf(date: Date): DateArray {
  return [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
}

function eventOf(p: Params): EventAttributes {
  const extra = collection(p.additionalFields);
  const start = dateOf(p.start, 'start');
  const end = dateOf(p.end, 'end');
  const times: Pick<EventAttributes, 'start' | 'startInputType' | 'startOutputType'> & { end: DateArray | number } =
    p.allDay === true
      ? {
          start: dayOf(start),
          // An all-day event ends on the day after its last day (RFC 5545).
          end: dayOf(end.getTime() > start.getTime() ? end : new Date(start.getTime() + 86_400_000)),
        }
      : { start: start.getTime(), startInputType: 'utc', startOutputType: 'utc', end: end.getTime() };
  const optional = (name: string) => (extra[name] === undefined || extra[name] === '' ? undefined : String(extra[name]));
  const event: EventAttributes = {
    ...times,
    ...(p.allDay === true ? {} : { endInputType: 'utc', endOutputType: 'utc' }),
    title: String(p.title ?? ''),
    productId: 'automation-platform',
    ...(optional('description') ? { description: optional('description') } : {}),
    ...(optional('location') ? { location: optional('location') } : {}),
    ...(optional('url') ? { url: optional('url') } : {}),
    ...(optional('uid') ? { uid: optional('uid') } : {}),
    ...(optional('calName') ? { calName: optional('calName') } : {}),
    ...(optional('recurrenceRule') ? { recurrenceRule: optional('recurrenceRule') } : {}),
    ...(extra.sequence !== undefined ? { sequence: Number(extra.sequence) } : {}),
    ...(optional('status') ? { status: optional('status') as EventAttributes['status'] } : {}),
    ...(optional('busyStatus') ? { busyStatus: optional('busyStatus') as EventAttributes['busyStatus'] } : {}),
  } as EventAttributes;
  return event;
}

async function toIcs(ctx: NodeContext): Promise<Item[]> {
  const params = await ctx.parameters();
  return perItem(ctx, async (i) => {
    const p = params[i]!;
    const { error, value } = ics().createEvent(eventOf(p));
    if (error || !value) throw new NodeError(`The event could not be written: ${error?.message ?? 'no output'}`);
    const fileName = String(collection(p.additionalFields).fileName || 'event.ics');
    return {
      json: {},
      binary: { [binaryKey(p)]: prepareBinary(Buffer.from(value, 'utf8'), { fileName, mimeType: 'text/calendar' }) },
      pairedItem: { item: i },
    };
  });
}

export const convertToFile: NodeDefinition = {
  name: 'convertToFile',
  description:
    "n8n's Convert To File: items to a CSV, XLSX, XLS, ODS, HTML, RTF, JSON, text or iCal file, or a base64 field to a file, in the item's binary data.",
  n8n: { versions: [1, 1.1], unsupported },
  inProcess: true,
  invalid: operationIn(OPERATIONS),
  async execute(ctx) {
    const operation = fixedOption(ctx.node.parameters?.operation, 'csv');
    if (SHEETS.includes(operation)) return { outputs: [ctx.items.length ? await spreadsheet(ctx, operation as SheetFormat) : []] };
    if (operation === 'toJson') return { outputs: [await toJson(ctx)] };
    if (operation === 'toText') return { outputs: [await toText(ctx)] };
    if (operation === 'toBinary') return { outputs: [await toBinary(ctx)] };
    if (operation === 'iCal') return { outputs: [await toIcs(ctx)] };
    throw new NodeError(`The operation "${operation}" is not supported`);
  },
};
