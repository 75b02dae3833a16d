import type * as Cheerio from 'cheerio';
import type ExcelJS from 'exceljs';
import Papa from 'papaparse';
import { NodeError } from '../../../nodes';
import { decodeText } from '../files.items';
import { readOds } from '../ods';

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
 * first table's cells as text; ODS (ods.ts) as XLSX.
 */

export type SheetReadFormat = 'csv' | 'html' | 'xlsx' | 'ods';

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
}

type Cell = string | number | boolean | null;

function csvTable(bytes: Buffer, options: SheetReadOptions): Cell[][] {
  const text = decodeText(bytes, options.encoding);
  const parsed = Papa.parse<string[]>(text, { delimiter: options.delimiter || '', skipEmptyLines: true });
  const fatal = parsed.errors.find((e) => e.type === 'Quotes');
  if (fatal) throw new NodeError(`The CSV file could not be read: ${fatal.message} (row ${fatal.row ?? 0})`);
  return parsed.data;
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
