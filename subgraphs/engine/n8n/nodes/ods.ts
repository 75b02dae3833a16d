import type * as Cheerio from 'cheerio';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { NodeError } from '../../nodes';

/** cheerio, loaded at the first ODS file rather than at every process start. */
let cheerioModule: typeof Cheerio | undefined;

/**
 * OpenDocument spreadsheets (.ods) for Extract From File, Convert To File and Spreadsheet File,
 * without a spreadsheet library: an .ods is a zip whose content.xml holds the sheets as
 * table:table > table:table-row > table:table-cell, read here with fflate and cheerio's XML mode
 * and written back the same way. A cell's text is its shown text (text:p, spaces and tabs
 * included); `raw` gives numbers, percentages and currencies as numbers, booleans as booleans and
 * dates as their ISO value instead.
 */

export type OdsCell = string | number | boolean | null;

/** Cells a sheet may unfold to (repeated rows and columns count once per copy). */
export const MAX_ODS_CELLS = 2_000_000;
/** content.xml's size at most, as the zip declares it and as inflated. */
const MAX_CONTENT_BYTES = 64 * 1024 * 1024;

const NUMERIC = new Set(['float', 'percentage', 'currency']);

/** The parts of cheerio's (domhandler's) nodes read here: an element's name, attributes and children, a text's data. */
interface XmlNode {
  type: string;
  name?: string;
  data?: string;
  attribs?: Record<string, string>;
  children?: XmlNode[];
}
type Element = XmlNode & { name: string; attribs: Record<string, string>; children: XmlNode[] };

const isElement = (node: XmlNode): node is Element => node.type === 'tag';

function elements(node: XmlNode | undefined, name: string): Element[] {
  return (node?.children ?? []).filter((c): c is Element => isElement(c) && c.name === name);
}

function descendant(root: XmlNode, path: string[]): Element | undefined {
  let node: XmlNode | undefined = root;
  for (const name of path) node = elements(node, name)[0];
  return node as Element | undefined;
}

/** A text:p's shown text: text:s is that many spaces, text:tab a tab, text:line-break a line break. */
function shownText(node: XmlNode): string {
  if (node.type === 'text') return node.data ?? '';
  if (!isElement(node)) return '';
  const el = node;
  if (el.name === 'text:s') return ' '.repeat(Math.max(1, Number(el.attribs['text:c'] ?? 1) || 1));
  if (el.name === 'text:tab') return '\t';
  if (el.name === 'text:line-break') return '\n';
  // Notes are not the cell's text.
  if (el.name === 'office:annotation') return '';
  return el.children.map(shownText).join('');
}

function cellValue(cell: Element, raw: boolean): OdsCell {
  const type = cell.attribs['office:value-type'];
  const text = elements(cell, 'text:p').map(shownText).join('\n');
  if (raw && type) {
    if (NUMERIC.has(type) && cell.attribs['office:value'] !== undefined) return Number(cell.attribs['office:value']);
    if (type === 'boolean') return cell.attribs['office:boolean-value'] === 'true';
    if (type === 'date' && cell.attribs['office:date-value']) return cell.attribs['office:date-value'];
    if (type === 'time' && cell.attribs['office:time-value']) return cell.attribs['office:time-value'];
  }
  if (!type && !text) return null;
  return text;
}

function tooManyCells(): NodeError {
  return new NodeError(`The sheet unfolds to more than ${MAX_ODS_CELLS} cells, more than one read may hold`);
}

function repeat(el: Element, attribute: string): number {
  const n = Number(el.attribs[attribute] ?? 1);
  return Number.isInteger(n) && n > 0 ? n : 1;
}

/** The sheet named `sheetName` (else the first) of an .ods file as rows of cells, trailing empty cells and rows left out. */
export function readOds(bytes: Buffer, options: { sheetName?: string; raw?: boolean } = {}): OdsCell[][] {
  let content: Uint8Array | undefined;
  try {
    content = unzipSync(new Uint8Array(bytes), {
      filter(file) {
        if (file.name !== 'content.xml') return false;
        if (file.originalSize > MAX_CONTENT_BYTES) throw new NodeError('The ODS file is too large to read: its content.xml unpacks to more than 64 MB');
        return true;
      },
    })['content.xml'];
  } catch (err) {
    if (err instanceof NodeError) throw err;
    throw new NodeError(`The file is not an ODS spreadsheet: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!content) throw new NodeError('The file is not an ODS spreadsheet: it has no content.xml');
  if (content.length > MAX_CONTENT_BYTES) throw new NodeError('The ODS file is too large to read: its content.xml unpacks to more than 64 MB');
  const $ = (cheerioModule ??= require('cheerio') as typeof Cheerio).load(Buffer.from(content).toString('utf8'), { xml: true });
  const spreadsheet = descendant($.root()[0] as unknown as XmlNode, ['office:document-content', 'office:body', 'office:spreadsheet']);
  const tables = elements(spreadsheet, 'table:table');
  const table = options.sheetName ? tables.find((t) => t.attribs['table:name'] === options.sheetName) : tables[0];
  if (!table) throw new NodeError(options.sheetName ? `The workbook has no sheet named "${options.sheetName}"` : 'The workbook has no sheet');

  // Rows may sit in row groups or header-row blocks.
  const rowsOf = (node: Element): Element[] =>
    node.children.flatMap((el) => {
      if (!isElement(el)) return [];
      if (el.name === 'table:table-row') return [el];
      if (['table:table-row-group', 'table:table-header-rows', 'table:table-rows'].includes(el.name)) return rowsOf(el);
      return [];
    });

  const out: OdsCell[][] = [];
  let cells = 0;
  let pendingBlank = 0;
  for (const row of rowsOf(table)) {
    const values: OdsCell[] = [];
    let pendingEmpty = 0;
    for (const el of row.children) {
      if (!isElement(el) || !['table:table-cell', 'table:covered-table-cell'].includes(el.name)) continue;
      const value = cellValue(el, options.raw === true);
      const times = repeat(el, 'table:number-columns-repeated');
      // Editors pad a row with one empty cell repeated to the sheet's last column: never unfolded.
      if (value === null || value === '') {
        pendingEmpty += times;
        continue;
      }
      cells += pendingEmpty + times;
      if (cells > MAX_ODS_CELLS) throw tooManyCells();
      for (; pendingEmpty > 0; pendingEmpty--) values.push(null);
      for (let k = 0; k < times; k++) values.push(value);
    }
    const times = repeat(row, 'table:number-rows-repeated');
    if (!values.length) {
      pendingBlank += times;
      continue;
    }
    // A blank row between two rows stays a (blank) row; blank rows at the end are left out.
    cells += pendingBlank + (times - 1) * values.length;
    if (cells > MAX_ODS_CELLS) throw tooManyCells();
    for (; pendingBlank > 0; pendingBlank--) out.push([]);
    for (let k = 0; k < times; k++) out.push([...values]);
  }
  return out;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A run of text as text:p content: runs of spaces, tabs and line breaks as ODF writes them. */
function paragraphs(text: string): string {
  return text
    .split('\n')
    .map(
      (line) =>
        `<text:p>${escapeXml(line)
          .replace(/\t/g, '<text:tab/>')
          .replace(/ {2,}/g, (spaces) => ` <text:s text:c="${spaces.length - 1}"/>`)}</text:p>`,
    )
    .join('');
}

function cellXml(value: unknown): string {
  if (value === null || value === undefined || value === '') return '<table:table-cell/>';
  if (typeof value === 'number' && Number.isFinite(value)) {
    return `<table:table-cell office:value-type="float" office:value="${value}"><text:p>${value}</text:p></table:table-cell>`;
  }
  if (typeof value === 'boolean') {
    return `<table:table-cell office:value-type="boolean" office:boolean-value="${value}"><text:p>${value ? 'TRUE' : 'FALSE'}</text:p></table:table-cell>`;
  }
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value as string);
  return `<table:table-cell office:value-type="string">${paragraphs(text)}</table:table-cell>`;
}

const NS = [
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"',
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"',
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"',
].join(' ');

export const ODS_MIME_TYPE = 'application/vnd.oasis.opendocument.spreadsheet';

/** Rows of cells as an .ods file of one sheet: numbers and booleans typed, anything else text. */
export function writeOds(table: unknown[][], sheetName = 'Sheet'): Buffer {
  const rows = table.map((cells) => `<table:table-row>${cells.map(cellXml).join('')}</table:table-row>`).join('');
  const content =
    `<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content ${NS} office:version="1.2"><office:body><office:spreadsheet>` +
    `<table:table table:name="${escapeXml(sheetName)}">${rows}</table:table></office:spreadsheet></office:body></office:document-content>`;
  const manifest =
    '<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">' +
    `<manifest:file-entry manifest:full-path="/" manifest:media-type="${ODS_MIME_TYPE}"/>` +
    '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>';
  // The mimetype entry comes first and uncompressed: that is how readers recognise the format.
  return Buffer.from(
    zipSync({
      mimetype: [strToU8(ODS_MIME_TYPE), { level: 0 }],
      'content.xml': strToU8(content),
      'META-INF/manifest.xml': strToU8(manifest),
    }),
  );
}
