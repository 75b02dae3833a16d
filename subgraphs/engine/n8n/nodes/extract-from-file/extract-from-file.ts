import type * as Xml2js from 'xml2js';
import { binaryBuffer, DEFAULT_BINARY_KEY, NodeError, isPlainObject, type Item, type NodeContext, type NodeDefinition } from '../../../nodes';
import { binaryCopy, decodeText, perItem, unsupportedEncoding } from '../files.items';
import { deepCopy, setPath } from '../item-lists/paths';
import { collection, fixedOption, operationIn, type Params } from '../item-lists/params';
import { readIcs } from './ics';
import { readPdf } from './pdf';
import { readSheet, type SheetReadFormat, type SheetReadOptions } from './spreadsheet';

/** xml2js, loaded at the first XML file rather than at every process start. */
let xml2jsModule: typeof Xml2js | undefined;

/**
 * n8n's Extract From File (1 and 1.1): the file in each item's binary field `binaryPropertyName`
 * (default `data`) read back into JSON.
 *
 * - csv, xlsx, xls, ods, html, rtf (a table): one item per row (spreadsheet.ts), with the options
 *   headerRow, includeEmptyCells, delimiter, encoding, fromLine, maxRowCount,
 *   skipRecordsWithErrors (CSV), sheetName, rawData (XLSX, XLS, ODS). A CSV record n8n's parser refuses (a quote out of place,
 *   another number of fields than the header) ends the rows without a word in version 1 (n8n 1
 *   ignored the parser's error for a file held in memory) and fails the item in 1.1, as n8n's do;
 *   skipRecordsWithErrors drops such records in both.
 * - fromJson, text, xml, fromIcs, binaryToPropery (n8n's spelling): the file as parsed JSON,
 *   text, XML parsed as the XML node parses it, an iCalendar file as one object (ics.ts), or a
 *   base64 string, into `destinationKey` (default `data`);
 *   options encoding, stripBOM (default on) and keepSource: `json` (the input item's fields are
 *   kept beside it), `binary` (the file read is kept) or `both`; unset, neither is, as in n8n
 *   (the item's other files always stay). An item without the file is left out.
 * - pdf: the PDF's text and description (pdf.ts) as the item's fields; options password,
 *   joinPages (default on), maxPages, keepSource (`json`: the input item's fields under the PDF's,
 *   `binary`: the file kept, `both`).
 *
 * Refused at import: the `range` option.
 */

const SHEETS: readonly string[] = ['csv', 'html', 'xlsx', 'ods', 'xls', 'rtf'];
const MOVE_TO = ['fromJson', 'text', 'xml', 'fromIcs', 'binaryToPropery'];
const OPERATIONS = [...SHEETS, ...MOVE_TO, 'pdf'];

export function unsupportedSheetOptions(options: Params): { option: string; message: string } | undefined {
  if (options.range !== undefined && options.range !== '')
    return { option: 'options.range', message: 'reading a range of cells is not supported; read the sheet' };
  return unsupportedEncoding(options.encoding, 'options.encoding');
}

function unsupported(p: Params): { option: string; message: string } | undefined {
  return unsupportedSheetOptions(collection(p.options));
}

/** The spreadsheet options n8n's editor offers, as the reader takes them. */
export function sheetOptions(options: Params): NonNullable<Parameters<typeof readSheet>[2]> {
  const skip = collection(collection(options.skipRecordsWithErrors).value);
  return {
    ...(skip.enabled === true
      ? { skipRecordsWithErrors: { enabled: true, maxSkippedRecords: typeof skip.maxSkippedRecords === 'number' ? skip.maxSkippedRecords : -1 } }
      : {}),
    headerRow: options.headerRow !== false,
    includeEmptyCells: options.includeEmptyCells === true,
    delimiter: typeof options.delimiter === 'string' ? options.delimiter : undefined,
    encoding: options.encoding,
    fromLine: typeof options.fromLine === 'number' ? options.fromLine : undefined,
    maxRowCount: typeof options.maxRowCount === 'number' ? options.maxRowCount : undefined,
    sheetName: typeof options.sheetName === 'string' && options.sheetName ? options.sheetName : undefined,
    rawData: options.rawData === true,
  };
}

/** Each input item's file read as `format`: its rows as items (`csvErrors`: how a record the CSV parser refuses is met). */
export async function sheetItems(
  ctx: NodeContext,
  format: (p: Params, i: number) => SheetReadFormat,
  key = 'binaryPropertyName',
  csvErrors?: SheetReadOptions['csvErrors'],
): Promise<Item[]> {
  const params = await ctx.parameters();
  return perItem(ctx, async (i) => {
    const p = params[i]!;
    const bytes = binaryBuffer(ctx.items[i]!, String(p[key] || DEFAULT_BINARY_KEY), i);
    const rows = await readSheet(bytes, format(p, i), { ...sheetOptions(collection(p.options)), ...(csvErrors ? { csvErrors } : {}) });
    ctx.checkOutput(rows.length);
    return rows.map((json) => ({ json, pairedItem: { item: i } }));
  });
}

async function converted(operation: string, bytes: Buffer, options: Params): Promise<unknown> {
  if (operation === 'binaryToPropery') return bytes.toString('base64');
  const text = decodeText(bytes, options.encoding, options.stripBOM !== false);
  if (operation === 'text') return text;
  if (operation === 'fromIcs') return readIcs(text);
  if (operation === 'fromJson') {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new NodeError(`The file is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const parsed: unknown = await new (xml2jsModule ??= require('xml2js') as typeof Xml2js).Parser({ mergeAttrs: true, explicitArray: false }).parseStringPromise(
    text,
  );
  // A JSON copy: an element named __proto__ becomes a plain key.
  return JSON.parse(JSON.stringify(parsed ?? {})) as unknown;
}

async function moveTo(ctx: NodeContext, operation: string): Promise<Item[]> {
  const params = await ctx.parameters();
  return perItem(ctx, async (i) => {
    const p = params[i]!;
    const options = collection(p.options);
    const item = ctx.items[i]!;
    const key = String(p.binaryPropertyName || DEFAULT_BINARY_KEY);
    // As in n8n, an item without the file is left out.
    if (!item.binary?.[key]) return undefined;
    const value = await converted(operation, binaryBuffer(item, key, i), options);
    const keep = options.keepSource;
    const json: Record<string, unknown> = keep === 'json' || keep === 'both' ? deepCopy(item.json) : {};
    const destination = String(p.destinationKey ?? 'data');
    if (destination) setPath(json, destination, value);
    else if (isPlainObject(value)) Object.assign(json, value);
    else throw new NodeError('The file does not hold a JSON object: give a destination key (destinationKey)');
    // The file read goes unless kept; the item's other files stay.
    const binary = keep === 'binary' || keep === 'both' ? item.binary : binaryCopy(item.binary, key);
    return binary ? { json, binary, pairedItem: { item: i } } : { json, pairedItem: { item: i } };
  });
}

/** The PDF options n8n's editor offers, as the reader takes them. */
export function pdfOptions(options: Params): Parameters<typeof readPdf>[1] {
  return {
    password: typeof options.password === 'string' ? options.password : undefined,
    joinPages: options.joinPages !== false,
    maxPages: typeof options.maxPages === 'number' ? options.maxPages : undefined,
  };
}

async function pdfItems(ctx: NodeContext): Promise<Item[]> {
  const params = await ctx.parameters();
  return perItem(ctx, async (i) => {
    const p = params[i]!;
    const options = collection(p.options);
    const item = ctx.items[i]!;
    const key = String(p.binaryPropertyName || DEFAULT_BINARY_KEY);
    const read = await readPdf(binaryBuffer(item, key, i), pdfOptions(options));
    const keep = options.keepSource;
    // The PDF's fields win over the input item's of the same name.
    const json = keep === 'json' || keep === 'both' ? { ...deepCopy(item.json), ...read } : read;
    const binary = keep === 'binary' || keep === 'both' ? item.binary : binaryCopy(item.binary, key);
    return binary ? { json, binary, pairedItem: { item: i } } : { json, pairedItem: { item: i } };
  });
}

export const extractFromFile: NodeDefinition = {
  name: 'extractFromFile',
  description:
    "n8n's Extract From File: a CSV, XLSX, XLS, ODS, HTML or RTF table's rows as items, a PDF's text, or a JSON, text, XML or iCalendar file or its base64 into a field.",
  n8n: { versions: [1, 1.1], unsupported },
  inProcess: true,
  invalid: operationIn(OPERATIONS),
  async execute(ctx) {
    const operation = fixedOption(ctx.node.parameters?.operation, 'csv');
    // 1 read a CSV file held in memory as n8n 1 did, ignoring its parser's error (the records
    // before it are the rows); 1.1 fails the item naming the record.
    const csvErrors = (ctx.node.typeVersion ?? 1) >= 1.1 ? 'fail' : 'stop';
    if (SHEETS.includes(operation)) return { outputs: [await sheetItems(ctx, () => operation as SheetReadFormat, 'binaryPropertyName', csvErrors)] };
    if (MOVE_TO.includes(operation)) return { outputs: [await moveTo(ctx, operation)] };
    if (operation === 'pdf') return { outputs: [await pdfItems(ctx)] };
    throw new NodeError(`The operation "${operation}" is not supported`);
  },
};
