import type ExcelJS from 'exceljs';
import { isPlainObject } from '../../../nodes';
import { ODS_MIME_TYPE, writeOds } from '../ods';
import { RTF_MIME_TYPE, writeRtf } from '../rtf';
import { XLS_MIME_TYPE, writeXls } from '../xls';

/** exceljs takes most of a second to load: loaded at the first spreadsheet, not at every start. */
let excelModule: typeof ExcelJS | undefined;
const excel = () => (excelModule ??= require('exceljs') as typeof ExcelJS);

/**
 * Items written as a spreadsheet file, as n8n's Convert To File and Spreadsheet File write them:
 * nested fields flattened to dotted column names ("address.city"), the columns every key in the
 * order first met, a header row unless `headerRow` is false. CSV cells as n8n's writer gives
 * them (booleans TRUE/FALSE, a cell quoted when it holds the delimiter, a quote or a line break);
 * XLSX with typed cells on exceljs; ODS and XLS the same way (ods.ts, xls.ts); HTML as one
 * table; RTF as one table of text (rtf.ts).
 */

export type SheetFormat = 'csv' | 'html' | 'xlsx' | 'ods' | 'xls' | 'rtf';

export const SHEET_MIME_TYPES: Record<SheetFormat, string> = {
  csv: 'text/csv',
  html: 'text/html',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ods: ODS_MIME_TYPE,
  xls: XLS_MIME_TYPE,
  rtf: RTF_MIME_TYPE,
};

export interface SheetWriteOptions {
  headerRow?: boolean;
  delimiter?: string;
  sheetName?: string;
}

type Row = Record<string, unknown>;

/** n8n's flattenObject: {a: {b: 1}, c: [2]} -> {"a.b": 1, "c.0": 2}. */
export function flatten(value: Row, prefix = '', out: Row = {}): Row {
  for (const [key, v] of Object.entries(value)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if ((isPlainObject(v) || Array.isArray(v)) && Object.keys(v).length) flatten(v as Row, name, out);
    else out[name] = v;
  }
  return out;
}

function columnsOf(rows: Row[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  return [...seen];
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function csvCell(text: string, delimiter: string): string {
  return text.includes(delimiter) || /["\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function xlsxValue(v: unknown): ExcelJS.CellValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return v;
  return cellText(v);
}

/** The rows (item json, not yet flattened) as a file of `format`. */
export async function writeSheet(items: Row[], format: SheetFormat, options: SheetWriteOptions = {}): Promise<Buffer> {
  const rows = items.map((item) => flatten(item));
  const columns = columnsOf(rows);
  const header = options.headerRow !== false;
  const table: unknown[][] = [...(header ? [columns] : []), ...rows.map((row) => columns.map((c) => row[c]))];
  if (format === 'csv') {
    const delimiter = options.delimiter || ',';
    return Buffer.from(table.map((cells) => cells.map((v) => csvCell(cellText(v), delimiter)).join(delimiter)).join('\n'), 'utf8');
  }
  if (format === 'html') {
    const body = table.map((cells) => `<tr>${cells.map((v) => `<td>${escapeHtml(cellText(v))}</td>`).join('')}</tr>`).join('');
    return Buffer.from(`<html><head><meta charset="utf-8"/></head><body><table>${body}</table></body></html>`, 'utf8');
  }
  if (format === 'ods') return writeOds(table, options.sheetName || 'Sheet');
  if (format === 'xls') return writeXls(table, options.sheetName || 'Sheet');
  if (format === 'rtf') return writeRtf(table);
  const workbook = new (excel().Workbook)();
  const sheet = workbook.addWorksheet(options.sheetName || 'Sheet');
  for (const cells of table) sheet.addRow(cells.map(xlsxValue));
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
