import type * as Cheerio from 'cheerio';
import type ExcelJS from 'exceljs';
import Papa from 'papaparse';
import { NodeError } from '../../../nodes';
import { decodeText, isZip } from '../files.items';
import { readOds } from '../ods';
import { readRtf } from '../rtf';
import { readXls } from '../xls';

/** exceljs takes most of a second to load: loaded at the first spreadsheet, not at every start. */
let excelModule: typeof ExcelJS | undefined;
const excel = () => (excelModule ??= require('exceljs') as typeof ExcelJS);
/** cheerio, for HTML tables, likewise (it holds ~7 MB once loaded). */
let cheerioModule: typeof Cheerio | undefined;
const cheerio = () => (cheerioModule ??= require('cheerio') as typeof Cheerio);

/**
 * A spreadsheet file read into rows, as n8n's Extract From File and Spreadsheet File read them:
 * with a header row (the default) each row an object keyed by the header's cells, else
 * `{ row: [cells] }`; empty cells left out unless `includeEmptyCells` (then ""); blank rows
 * skipped. CSV on papaparse (every cell text); XLSX on exceljs, the first sheet unless
 * `sheetName`, cells as text unless `rawData` (then numbers and booleans as they are); HTML: the
 * first table's cells as text; ODS (ods.ts) and XLS (xls.ts, an XLSX file given as XLS read as
 * XLSX, as n8n's reader does) as XLSX; RTF (rtf.ts): the rows of its tables, every cell text.
 */

export type SheetReadFormat = 'csv' | 'html' | 'xlsx' | 'ods' | 'xls' | 'rtf';

export interface SheetReadOptions {
  headerRow?: boolean;
  includeEmptyCells?: boolean;
  delimiter?: string;
  encoding?: unknown;
  /** Rows to skip before the first one read (CSV). */
  fromLine?: number;
  /** Rows read at most, -1 for all (CSV). */
  maxRowCount?: number;
  sheetName?: string;
  rawData?: boolean;
  /**
   * How a CSV record n8n's parser (csv-parse) refuses is met: a quote out of place or a record
   * with another number of fields than the first. `fail`: the item fails naming the record (n8n's
   * Extract From File 1.1); `stop`: the records before it are the rows, without a word (1, which
   * ignored the parser's error); unset: only a quote out of place fails (Spreadsheet File).
   * `skipRecordsWithErrors` drops such records instead, failing past `maxSkippedRecords` (> 0).
   */
  csvErrors?: 'fail' | 'stop';
  skipRecordsWithErrors?: { enabled: boolean; maxSkippedRecords: number };
}

type Cell = string | number | boolean | null;

function csvTable(bytes: Buffer, options: SheetReadOptions): Cell[][] {
  const text = decodeText(bytes, options.encoding);
  const parsed = Papa.parse<string[]>(text, { delimiter: options.delimiter || '', skipEmptyLines: true });
  const quoteErrors = new Map<number, string>();
  for (const e of parsed.errors) if (e.type === 'Quotes' && !quoteErrors.has(e.row ?? 0)) quoteErrors.set(e.row ?? 0, e.message);
  if (!options.csvErrors && !options.skipRecordsWithErrors?.enabled) {
    const [first] = quoteErrors;
    if (first) throw new NodeError(`The CSV file could not be read: ${first[1]} (row ${first[0]})`);
    return parsed.data;
  }
  return csvRecords(parsed.data, quoteErrors, options);
}

/**
 * The records n8n's parser gives: each is checked as it checks them (a quote out of place, or
 * another number of fields than the first record, the header when there is one), the first
 * `fromLine` skipped and at most `maxRowCount` read (the parser stops there: later records are
 * not checked).
 */
function csvRecords(data: string[][], quoteErrors: Map<number, string>, options: SheetReadOptions): Cell[][] {
  const header = options.headerRow !== false;
  const from = options.fromLine ?? 0;
  const expected = data[from]?.length ?? 0;
  const skip = options.skipRecordsWithErrors?.enabled === true;
  const max = typeof options.maxRowCount === 'number' && options.maxRowCount >= 0 ? options.maxRowCount : Infinity;
  const out: Cell[][] = data.slice(0, from);
  let skipped = 0;
  let read = 0;
  for (let r = from; r < data.length && read < max + (header ? 1 : 0); r++) {
    const cells = data[r]!;
    const problem = quoteErrors.has(r)
      ? `The CSV file could not be read: ${quoteErrors.get(r)} (row ${r})`
      : cells.length !== expected
        ? header
          ? `Invalid Record Length: columns length is ${expected}, got ${cells.length} on line ${r + 1}`
          : `Invalid Record Length: expect ${expected}, got ${cells.length} on line ${r + 1}`
        : undefined;
    if (problem) {
      if (skip) {
        skipped++;
        continue;
      }
      if (options.csvErrors === 'fail') throw new NodeError(problem);
      break;
    }
    out.push(cells);
    read++;
  }
  const limit = options.skipRecordsWithErrors?.maxSkippedRecords ?? -1;
  if (skip && limit > 0 && skipped > limit) throw new NodeError('Max number of skipped records exceeded');
  return out;
}

function xlsxCell(value: ExcelJS.CellValue, raw: boolean): Cell {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number' || typeof value === 'boolean') return raw ? value : value === true ? 'TRUE' : value === false ? 'FALSE' : String(value);
  if (typeof value === 'string') return value;
  if ('richText' in value) return value.richText.map((t) => t.text).join('');
  if ('formula' in value || 'sharedFormula' in value) return xlsxCell((value as ExcelJS.CellFormulaValue).result as ExcelJS.CellValue, raw);
  if ('hyperlink' in value) return String(value.text);
  if ('error' in value) return String(value.error);
  return String(value as unknown);
}

async function xlsxTable(bytes: Buffer, options: SheetReadOptions): Promise<Cell[][]> {
  const workbook = new (excel().Workbook)();
  try {
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  } catch (err) {
    throw new NodeError(`The file is not an XLSX workbook: ${err instanceof Error ? err.message : String(err)}`);
  }
  const sheet = options.sheetName ? workbook.getWorksheet(options.sheetName) : workbook.worksheets[0];
  if (!sheet) throw new NodeError(options.sheetName ? `The workbook has no sheet named "${options.sheetName}"` : 'The workbook has no sheet');
  const table: Cell[][] = [];
  sheet.eachRow({ includeEmpty: false }, (row) => {
    const cells: Cell[] = [];
    for (let c = 1; c <= row.cellCount; c++) cells.push(xlsxCell(row.getCell(c).value, options.rawData === true));
    table.push(cells);
  });
  return table;
}

/** An .xls file; a zip (an .xlsx saved under the old name) is read as the XLSX it is. */
async function xlsTable(bytes: Buffer, options: SheetReadOptions): Promise<Cell[][]> {
  if (isZip(bytes)) return xlsxTable(bytes, options);
  return readXls(bytes, { sheetName: options.sheetName, raw: options.rawData === true });
}

function htmlTable(bytes: Buffer, options: SheetReadOptions): Cell[][] {
  const $ = cheerio().load(decodeText(bytes, options.encoding));
  const table = $('table').first();
  if (!table.length) throw new NodeError('The HTML file has no table');
  return table
    .find('tr')
    .toArray()
    .map((tr) =>
      $(tr)
        .children('td, th')
        .toArray()
        .map((cell) => $(cell).text()),
    );
}

function isEmpty(v: Cell): boolean {
  return v === null || v === '';
}

/** The rows of a spreadsheet file, one object per row. */
export async function readSheet(bytes: Buffer, format: SheetReadFormat, options: SheetReadOptions = {}): Promise<Record<string, unknown>[]> {
  let table =
    format === 'csv'
      ? csvTable(bytes, options)
      : format === 'xlsx'
        ? await xlsxTable(bytes, options)
        : format === 'ods'
          ? readOds(bytes, { sheetName: options.sheetName, raw: options.rawData === true })
          : format === 'xls'
            ? await xlsTable(bytes, options)
            : format === 'rtf'
              ? readRtf(bytes)
              : htmlTable(bytes, options);
  table = table.filter((cells) => cells.some((v) => !isEmpty(v)));
  if (format === 'csv' && options.fromLine) table = table.slice(options.fromLine);
  const keepEmpty = options.includeEmptyCells === true;
  const cell = (v: Cell | undefined) => (v === null || v === undefined ? '' : v);
  let rows: Record<string, unknown>[];
  if (options.headerRow === false) {
    rows = table.map((cells) => ({ row: keepEmpty ? cells.map(cell) : cells.filter((v) => !isEmpty(v)) }));
  } else {
    const [header = [], ...body] = table;
    const names = header.map((h) => String(cell(h)));
    rows = body.map((cells) => {
      const row: Record<string, unknown> = {};
      names.forEach((name, c) => {
        const v = cells[c];
        if (keepEmpty || !isEmpty(v ?? null)) Object.defineProperty(row, name, { value: cell(v), enumerable: true, writable: true, configurable: true });
      });
      return row;
    });
  }
  const max = options.maxRowCount;
  return typeof max === 'number' && max >= 0 ? rows.slice(0, max) : rows;
}
