import type * as Cfb from 'cfb';
import { NodeError } from '../../nodes';
import { isCompoundFile } from './files.items';

/** cfb, loaded at the first XLS file rather than at every process start. */
let cfbModule: typeof Cfb | undefined;
const cfb = () => (cfbModule ??= require('cfb') as typeof Cfb);

/**
 * Excel 97-2003 workbooks (.xls) for Extract From File, Convert To File and Spreadsheet File,
 * without a spreadsheet library: an .xls is a Compound File (cfb, the container only) whose
 * `Workbook` stream holds BIFF8 records ([MS-XLS]). Read: the sheet `sheetName` (else the first)
 * from its cell records (strings from the shared string table, numbers, booleans, errors, a
 * formula's cached value); a number whose format is a date's is a date (ISO text), as the XLSX
 * reader gives it. Written: one sheet, strings in the shared string table, numbers and booleans
 * typed, with the fonts and formats Excel asks of every workbook.
 */

export type XlsCell = string | number | boolean | null;

export const XLS_MIME_TYPE = 'application/vnd.ms-excel';

/** Cells one read may unfold to (a row's empty cells before its last one count), as for ODS. */
export const MAX_XLS_CELLS = 2_000_000;
/** What one BIFF8 sheet holds at most. */
const MAX_ROWS = 65_536;
const MAX_COLUMNS = 256;
/** The most characters an XLS cell holds (Excel's limit). */
const MAX_CELL_CHARS = 32_767;
/** A record's data at most (CONTINUE records carry the rest). */
const MAX_RECORD_DATA = 8224;

const R = {
  BOF: 0x0809,
  EOF: 0x000a,
  CONTINUE: 0x003c,
  BOUNDSHEET: 0x0085,
  SST: 0x00fc,
  EXTSST: 0x00ff,
  LABELSST: 0x00fd,
  LABEL: 0x0204,
  RSTRING: 0x00d6,
  NUMBER: 0x0203,
  RK: 0x027e,
  MULRK: 0x00bd,
  BOOLERR: 0x0205,
  FORMULA: 0x0006,
  STRING: 0x0207,
  DATEMODE: 0x0022,
  FORMAT: 0x041e,
  XF: 0x00e0,
  FILEPASS: 0x002f,
  CODEPAGE: 0x0042,
  WINDOW1: 0x003d,
  WINDOW2: 0x023e,
  FONT: 0x0031,
  STYLE: 0x0293,
  DIMENSIONS: 0x0200,
} as const;

const ERRORS: Record<number, string> = {
  0x00: '#NULL!',
  0x07: '#DIV/0!',
  0x0f: '#VALUE!',
  0x17: '#REF!',
  0x1d: '#NAME?',
  0x24: '#NUM!',
  0x2a: '#N/A',
};

/** Excel's built-in number formats that show a date or a time. */
const DATE_FORMATS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56, 57, 58]);

function corrupt(detail: string): NodeError {
  return new NodeError(`The file is not a readable XLS workbook: ${detail}`);
}

interface BiffRecord {
  type: number;
  offset: number;
  /** The record's data, then that of the CONTINUE records after it. */
  parts: Buffer[];
}

/** Where a record starts and ends in the stream. */
interface Span {
  type: number;
  data: number;
  end: number;
}

function span(stream: Buffer, at: number): Span | undefined {
  if (at + 4 > stream.length) return undefined;
  const type = stream.readUInt16LE(at);
  const end = at + 4 + stream.readUInt16LE(at + 2);
  if (end > stream.length) {
    // Writers pad the stream after its last EOF with zeros: no record, nothing cut.
    if (type === 0) return undefined;
    throw corrupt('a record runs past the end of the workbook stream');
  }
  return { type, data: at + 4, end };
}

/** The data of the record `rec` and of the CONTINUE records after it, and where the next record starts. */
function withContinues(stream: Buffer, rec: Span): { parts: Buffer[]; next: number } {
  const parts = [stream.subarray(rec.data, rec.end)];
  let next = rec.end;
  for (let more = span(stream, next); more?.type === R.CONTINUE; more = span(stream, next)) {
    parts.push(stream.subarray(more.data, more.end));
    next = more.end;
  }
  return { parts, next };
}

/** The workbook globals' records (up to their EOF), each CONTINUE joined to the record before it. */
function globalRecords(stream: Buffer): BiffRecord[] {
  const out: BiffRecord[] = [];
  for (let at = 0, rec = span(stream, 0); rec; rec = span(stream, at)) {
    const { parts, next } = withContinues(stream, rec);
    out.push({ type: rec.type, offset: at, parts });
    at = next;
    if (rec.type === R.EOF) break;
  }
  return out;
}

/**
 * Reads a record's data across its CONTINUE parts. Fields run on into the next part as they are;
 * a string's characters re-read their compressed/UTF-16 flag at the start of each new part.
 */
class Reader {
  private part = 0;
  private at = 0;
  constructor(private readonly parts: Buffer[]) {}

  get done(): boolean {
    while (this.part < this.parts.length && this.at >= this.parts[this.part]!.length) {
      this.part++;
      this.at = 0;
    }
    return this.part >= this.parts.length;
  }

  private current(): Buffer {
    if (this.done) throw corrupt('a record ends in the middle of a value');
    return this.parts[this.part]!;
  }

  u8(): number {
    const b = this.current()[this.at]!;
    this.at++;
    return b;
  }

  /** The current part when it holds `n` more bytes (the common case: no field is split). */
  private whole(n: number): Buffer | undefined {
    const part = this.parts[this.part];
    return part && this.at + n <= part.length ? part : undefined;
  }

  u16(): number {
    const part = this.whole(2);
    if (!part) return this.u8() | (this.u8() << 8);
    this.at += 2;
    return part.readUInt16LE(this.at - 2);
  }

  u32(): number {
    const part = this.whole(4);
    if (!part) return (this.u16() + this.u16() * 0x10000) >>> 0;
    this.at += 4;
    return part.readUInt32LE(this.at - 4);
  }

  skip(n: number): void {
    for (let left = n; left > 0;) {
      const part = this.current();
      const step = Math.min(left, part.length - this.at);
      this.at += step;
      left -= step;
    }
  }

  /** `count` characters, one byte each (compressed) or UTF-16LE, the flag re-read at each new part. */
  chars(count: number, highByte: boolean): string {
    let text = '';
    let high = highByte;
    let left = count;
    while (left > 0) {
      const part = this.parts[this.part];
      if (!part) throw corrupt('a string runs past the end of its record');
      if (this.at >= part.length) {
        this.part++;
        this.at = 0;
        const next = this.parts[this.part];
        if (!next || !next.length) throw corrupt('a string runs past the end of its record');
        high = (next[0]! & 0x01) === 1;
        this.at = 1;
        continue;
      }
      const width = high ? 2 : 1;
      const n = Math.min(left, Math.floor((part.length - this.at) / width));
      if (n === 0) throw corrupt('a character is split between two records');
      const bytes = part.subarray(this.at, this.at + n * width);
      text += high ? bytes.toString('utf16le') : bytes.toString('latin1');
      this.at += n * width;
      left -= n;
    }
    return text;
  }

  /** An XLUnicodeRichExtendedString (shared strings) or XLUnicodeString (`cch` of `countBytes` bytes). */
  string(countBytes: 1 | 2 = 2): string {
    const cch = countBytes === 1 ? this.u8() : this.u16();
    const flags = this.u8();
    const runs = flags & 0x08 ? this.u16() : 0;
    const ext = flags & 0x04 ? this.u32() : 0;
    const text = this.chars(cch, (flags & 0x01) === 1);
    this.skip(runs * 4);
    this.skip(ext);
    return text;
  }
}

const rkDouble = Buffer.alloc(8);

/** An RK number: a 30-bit integer or a double's top 30 bits, divided by 100 when its low bit says so. */
function rk(value: number): number {
  let n: number;
  if (value & 0x02) n = value >> 2;
  else {
    rkDouble.writeUInt32LE((value & 0xfffffffc) >>> 0, 4);
    n = rkDouble.readDoubleLE(0);
  }
  return value & 0x01 ? n / 100 : n;
}

/** A custom number format that shows a date or a time: y, m, d, h or s outside quotes, escapes and [colours]. */
function isDateFormat(code: string): boolean {
  const bare = code
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '')
    .replace(/_.|\*./g, '')
    .replace(/\[(?![hms]+\])[^\]]*\]/gi, '');
  return /[ymdhs]/i.test(bare);
}

/**
 * A date serial number as the instant it names (the XLSX reader's conversion; 1904 workbooks
 * count from 1904); undefined for a number no date can be (it stays a number).
 */
function serialDate(serial: number, date1904: boolean): string | undefined {
  const days = serial + (date1904 ? 1462 : 0);
  const date = new Date(Math.round((days - 25569) * 86_400_000));
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

interface Workbook {
  sheets: { name: string; offset: number }[];
  strings: string[];
  /** Per XF index: whether its number format shows a date. */
  dateXf: boolean[];
  date1904: boolean;
  stream: Buffer;
}

function workbookStream(bytes: Buffer): Buffer {
  // The BOF of Excel 2, 3 and 4, whose files are a bare record stream.
  if (bytes.length >= 2 && bytes[0] === 0x09 && (bytes[1] === 0x00 || bytes[1] === 0x02 || bytes[1] === 0x04)) {
    throw new NodeError('The file is an Excel 2-4 worksheet without a workbook container; save it as XLS (97-2003) or XLSX');
  }
  if (bytes.length < 512 || !isCompoundFile(bytes)) throw corrupt('it is not a Compound File (no OLE2 header)');
  let container: Cfb.CFB$Container;
  try {
    container = cfb().read(bytes, { type: 'buffer' });
  } catch (err) {
    throw corrupt(`its container cannot be opened (${err instanceof Error ? err.message : String(err)})`);
  }
  const entry = cfb().find(container, '/Workbook') ?? cfb().find(container, '/Book');
  if (!entry || !entry.content) throw corrupt('it has no Workbook stream');
  if (entry.name.toLowerCase() === 'book') {
    throw new NodeError('The file is an Excel 5/95 workbook (BIFF5), older than the Excel 97-2003 format read here; save it as XLS (97-2003) or XLSX');
  }
  // cfb gives a stream's bytes as a Uint8Array, or as a plain array for some containers.
  const content = entry.content as Uint8Array | number[];
  const bytesOf = content instanceof Uint8Array ? Buffer.from(content.buffer, content.byteOffset, content.length) : Buffer.from(content);
  return bytesOf.subarray(0, Math.min(bytesOf.length, entry.size ?? bytesOf.length));
}

function readWorkbook(bytes: Buffer): Workbook {
  const stream = workbookStream(bytes);
  const list = globalRecords(stream);
  const first = list[0];
  if (!first || first.type !== R.BOF) throw corrupt('its workbook stream does not start with a BOF record');
  const bof = new Reader(first.parts);
  const version = bof.u16();
  if (version === 0x0500) {
    throw new NodeError('The file is an Excel 5/95 workbook (BIFF5), older than the Excel 97-2003 format read here; save it as XLS (97-2003) or XLSX');
  }
  if (version !== 0x0600) throw corrupt(`its first record names BIFF version 0x${version.toString(16)}, not Excel 97-2003's (0x600)`);
  const book: Workbook = { sheets: [], strings: [], dateXf: [], date1904: false, stream };
  const formats = new Map<number, string>();
  const xfFormats: number[] = [];
  for (let i = 1; i < list.length; i++) {
    const rec = list[i]!;
    if (rec.type === R.EOF) break;
    const r = new Reader(rec.parts);
    switch (rec.type) {
      case R.FILEPASS:
        throw new NodeError('The XLS file is encrypted (protected with a password) and cannot be read; save it without a password');
      case R.BOUNDSHEET: {
        const offset = r.u32();
        r.skip(2);
        book.sheets.push({ name: r.string(1), offset });
        break;
      }
      case R.SST: {
        r.skip(4);
        const unique = r.u32();
        for (let n = 0; n < unique && !r.done; n++) book.strings.push(r.string());
        break;
      }
      case R.DATEMODE:
        book.date1904 = r.u16() === 1;
        break;
      case R.FORMAT: {
        const index = r.u16();
        formats.set(index, r.string());
        break;
      }
      case R.XF:
        r.skip(2);
        xfFormats.push(r.u16());
        break;
      default:
        break;
    }
  }
  book.dateXf = xfFormats.map((f) => DATE_FORMATS.has(f) || (formats.has(f) && isDateFormat(formats.get(f)!)));
  return book;
}

function tooManyCells(): NodeError {
  return new NodeError(`The sheet unfolds to more than ${MAX_XLS_CELLS} cells, more than one read may hold`);
}

/** The sheet named `sheetName` (else the first) of an .xls file as rows of cells, trailing empty rows left out. */
export function readXls(bytes: Buffer, options: { sheetName?: string; raw?: boolean } = {}): XlsCell[][] {
  try {
    return readSheet(bytes, options);
  } catch (err) {
    // Whatever a damaged file trips over is said as what it is: a file that cannot be read.
    if (err instanceof NodeError) throw err;
    throw corrupt(err instanceof Error ? err.message : String(err));
  }
}

function readSheet(bytes: Buffer, options: { sheetName?: string; raw?: boolean }): XlsCell[][] {
  const book = readWorkbook(bytes);
  const sheet = options.sheetName ? book.sheets.find((s) => s.name === options.sheetName) : book.sheets[0];
  if (!sheet) throw new NodeError(options.sheetName ? `The workbook has no sheet named "${options.sheetName}"` : 'The workbook has no sheet');
  const stream = book.stream;
  if (sheet.offset + 4 > stream.length || stream.readUInt16LE(sheet.offset) !== R.BOF)
    throw corrupt(`the sheet "${sheet.name}" is not where the workbook says`);

  const raw = options.raw === true;
  const rows: XlsCell[][] = [];
  let cells = 0;
  const put = (row: number, col: number, value: XlsCell) => {
    if (row >= MAX_ROWS || col >= MAX_COLUMNS) throw corrupt(`a cell lies outside the sheet (row ${row + 1}, column ${col + 1})`);
    const cellsOfRow = (rows[row] ??= []);
    if (col >= cellsOfRow.length) {
      cells += col + 1 - cellsOfRow.length;
      if (cells > MAX_XLS_CELLS) throw tooManyCells();
      while (cellsOfRow.length < col) cellsOfRow.push(null);
      cellsOfRow.push(value);
    } else cellsOfRow[col] = value;
  };
  const number = (row: number, col: number, xf: number, n: number) => {
    const date = book.dateXf[xf] ? serialDate(n, book.date1904) : undefined;
    if (date !== undefined) put(row, col, date);
    else put(row, col, raw ? n : String(n));
  };
  const bool = (v: boolean): XlsCell => (raw ? v : v ? 'TRUE' : 'FALSE');
  /** A cell record's fixed part: too short a record is a damaged file, not a read past its end. */
  const fixed = (rec: Span, size: number) => {
    if (rec.end - rec.data < size) throw corrupt('a cell record is shorter than its kind');
    return rec.data;
  };

  // Cell records are read straight from the stream; only text that may go on in CONTINUE
  // records (LABEL, RSTRING, STRING) goes through a Reader.
  let depth = 0;
  let pendingString: [number, number] | undefined;
  let at = sheet.offset;
  for (let rec = span(stream, at); rec; rec = span(stream, at)) {
    at = rec.end;
    if (rec.type === R.BOF) {
      depth++;
      continue;
    }
    if (rec.type === R.EOF) {
      if (--depth === 0) break;
      continue;
    }
    // Records of an embedded chart are not the sheet's.
    if (depth !== 1) continue;
    switch (rec.type) {
      case R.LABELSST: {
        const d = fixed(rec, 10);
        const index = stream.readUInt32LE(d + 6);
        if (index >= book.strings.length) throw corrupt('a cell names a shared string the workbook does not have');
        put(stream.readUInt16LE(d), stream.readUInt16LE(d + 2), book.strings[index]!);
        break;
      }
      case R.NUMBER: {
        const d = fixed(rec, 14);
        number(stream.readUInt16LE(d), stream.readUInt16LE(d + 2), stream.readUInt16LE(d + 4), stream.readDoubleLE(d + 6));
        break;
      }
      case R.RK: {
        const d = fixed(rec, 10);
        number(stream.readUInt16LE(d), stream.readUInt16LE(d + 2), stream.readUInt16LE(d + 4), rk(stream.readUInt32LE(d + 6)));
        break;
      }
      case R.MULRK: {
        const d = fixed(rec, 6);
        const [row, first] = [stream.readUInt16LE(d), stream.readUInt16LE(d + 2)];
        const count = Math.floor((rec.end - d - 6) / 6);
        for (let k = 0; k < count; k++) number(row, first + k, stream.readUInt16LE(d + 4 + k * 6), rk(stream.readUInt32LE(d + 6 + k * 6)));
        break;
      }
      case R.BOOLERR: {
        const d = fixed(rec, 8);
        const value = stream[d + 6]!;
        put(stream.readUInt16LE(d), stream.readUInt16LE(d + 2), stream[d + 7] === 1 ? (ERRORS[value] ?? '#ERROR!') : bool(value === 1));
        break;
      }
      case R.FORMULA: {
        const d = fixed(rec, 14);
        const [row, col] = [stream.readUInt16LE(d), stream.readUInt16LE(d + 2)];
        const v = d + 6;
        pendingString = undefined;
        if (stream[v + 6] !== 0xff || stream[v + 7] !== 0xff) number(row, col, stream.readUInt16LE(d + 4), stream.readDoubleLE(v));
        else if (stream[v] === 0x00) pendingString = [row, col];
        else if (stream[v] === 0x01) put(row, col, bool(stream[v + 2] === 1));
        else if (stream[v] === 0x02) put(row, col, ERRORS[stream[v + 2]!] ?? '#ERROR!');
        else if (stream[v] === 0x03) put(row, col, '');
        break;
      }
      case R.LABEL:
      case R.RSTRING:
      case R.STRING: {
        const { parts, next } = withContinues(stream, rec);
        at = next;
        const r = new Reader(parts);
        if (rec.type === R.STRING) {
          if (pendingString) put(pendingString[0], pendingString[1], r.string());
          pendingString = undefined;
          break;
        }
        const [row, col] = [r.u16(), r.u16()];
        r.skip(2);
        put(row, col, r.string());
        break;
      }
      default:
        break;
    }
  }
  if (depth !== 0) throw corrupt(`the sheet "${sheet.name}" has no end (EOF record)`);
  const out: XlsCell[][] = [];
  for (let i = 0; i < rows.length; i++) out.push(rows[i] ?? []);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Writing

function record(type: number, data: Buffer): Buffer {
  const out = Buffer.allocUnsafe(4 + data.length);
  out.writeUInt16LE(type, 0);
  out.writeUInt16LE(data.length, 2);
  data.copy(out, 4);
  return out;
}

function u16s(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 2);
  values.forEach((v, i) => b.writeUInt16LE(v, i * 2));
  return b;
}

const isCompressible = (text: string) => !/[^\x00-\xff]/.test(text);

/** An XLUnicodeString with a 1- or 2-byte character count. */
function unicodeString(text: string, countBytes: 1 | 2 = 2): Buffer {
  const compressed = isCompressible(text);
  const count = countBytes === 1 ? Buffer.from([text.length]) : u16s(text.length);
  return Buffer.concat([count, Buffer.from([compressed ? 0 : 1]), Buffer.from(text, compressed ? 'latin1' : 'utf16le')]);
}

function bof(type: number): Buffer {
  // BIFF8, the substream type, build and year of Excel 97 as Excel writes them, file history flags, lowest BIFF version.
  const data = Buffer.alloc(16);
  data.writeUInt16LE(0x0600, 0);
  data.writeUInt16LE(type, 2);
  data.writeUInt16LE(0x0dbb, 4);
  data.writeUInt16LE(0x07cc, 6);
  data.writeUInt32LE(0x000100c1, 8);
  data.writeUInt32LE(0x00000406, 12);
  return record(R.BOF, data);
}

function font(): Buffer {
  // 10 pt (200 twips), no attributes, automatic colour, weight 400, Arial.
  return record(R.FONT, Buffer.concat([u16s(200, 0, 0x7fff, 400, 0), Buffer.from([0, 0, 0, 0]), unicodeString('Arial', 1)]));
}

function xf(style: boolean): Buffer {
  const data = Buffer.alloc(20);
  data.writeUInt16LE(0, 0); // font 0
  data.writeUInt16LE(0, 2); // format 0: General
  // Locked; a style XF has the style flag and parent 0xFFF, a cell XF the parent style 0.
  data.writeUInt16LE(style ? 0xfff5 : 0x0001, 4);
  data.writeUInt16LE(0x0020, 6); // aligned at the bottom
  data.writeUInt16LE(0, 8);
  data.writeUInt8(style ? 0xf4 : 0, 9); // a style ignores its parent's attributes
  data.writeUInt32LE(0, 10);
  data.writeUInt32LE(0, 14);
  data.writeUInt16LE(0x20c0, 18); // automatic pattern colours
  return record(R.XF, data);
}

/**
 * The shared string table as SST and CONTINUE records: a string whose characters do not fit the
 * record goes on in a CONTINUE that starts with its flag byte; an EXTSST indexing every 8th string.
 */
function sstRecords(strings: string[], total: number, streamOffset: number): Buffer {
  const out: Buffer[] = [];
  let type: number = R.SST;
  let chunk: Buffer[] = [Buffer.from(Buffer.alloc(8))];
  chunk[0]!.writeUInt32LE(total, 0);
  chunk[0]!.writeUInt32LE(strings.length, 4);
  let size = 8;
  let written = 0;
  const flush = () => {
    const rec = record(type, Buffer.concat(chunk));
    out.push(rec);
    written += rec.length;
    type = R.CONTINUE;
    chunk = [];
    size = 0;
  };
  const perBucket = Math.max(8, Math.ceil(strings.length / 128));
  const buckets: Buffer[] = [];
  strings.forEach((text, n) => {
    const compressed = isCompressible(text);
    const width = compressed ? 1 : 2;
    // The 3-byte header and a first character stay in one record.
    if (size + 3 + width > MAX_RECORD_DATA) flush();
    if (n % perBucket === 0) {
      const info = Buffer.alloc(8);
      info.writeUInt32LE(streamOffset + written + 4 + size, 0);
      info.writeUInt16LE(4 + size, 4);
      buckets.push(info);
    }
    const head = Buffer.alloc(3);
    head.writeUInt16LE(text.length, 0);
    head[2] = compressed ? 0 : 1;
    chunk.push(head);
    size += 3;
    const body = Buffer.from(text, compressed ? 'latin1' : 'utf16le');
    let at = 0;
    while (at < body.length) {
      const room = Math.floor((MAX_RECORD_DATA - size) / width) * width;
      if (room <= 0) {
        flush();
        chunk.push(Buffer.from([compressed ? 0 : 1]));
        size = 1;
        continue;
      }
      const piece = body.subarray(at, at + room);
      chunk.push(piece);
      size += piece.length;
      at += piece.length;
    }
  });
  flush();
  out.push(record(R.EXTSST, Buffer.concat([u16s(perBucket), ...buckets])));
  return Buffer.concat(out);
}

/** The largest cell record (NUMBER: its 4-byte header, row, column, XF, the double). */
const MAX_CELL_RECORD = 18;

/**
 * The cell records of the table, written one after another into one buffer: NUMBER, BOOLERR, or
 * LABELSST for text (each distinct text once in `list`, its shared string table); empty cells
 * have none.
 */
function cellRecords(table: unknown[][], list: string[]): { bytes: Buffer; labels: number } {
  const strings = new Map<string, number>();
  const out = Buffer.allocUnsafe(table.reduce((n, cells) => n + cells.length, 0) * MAX_CELL_RECORD);
  let at = 0;
  let labels = 0;
  const head = (type: number, size: number, row: number, col: number) => {
    out.writeUInt16LE(type, at);
    out.writeUInt16LE(size, at + 2);
    out.writeUInt16LE(row, at + 4);
    out.writeUInt16LE(col, at + 6);
    // Every cell on the one cell XF (index 15: the 15 style XFs come first).
    out.writeUInt16LE(15, at + 8);
    at += 10;
  };
  for (let row = 0; row < table.length; row++) {
    const cells = table[row]!;
    for (let col = 0; col < cells.length; col++) {
      const value = cells[col];
      if (value === null || value === undefined || value === '') continue;
      if (typeof value === 'number' && Number.isFinite(value)) {
        head(R.NUMBER, 14, row, col);
        at = out.writeDoubleLE(value, at);
        continue;
      }
      if (typeof value === 'boolean') {
        head(R.BOOLERR, 8, row, col);
        out[at++] = value ? 1 : 0;
        out[at++] = 0;
        continue;
      }
      const text = typeof value === 'object' ? JSON.stringify(value) : String(value as string);
      if (text.length > MAX_CELL_CHARS) {
        throw new NodeError(`A cell holds ${text.length} characters, more than the ${MAX_CELL_CHARS} an XLS cell may hold (row ${row + 1}, column ${col + 1})`);
      }
      let index = strings.get(text);
      if (index === undefined) {
        index = list.length;
        strings.set(text, index);
        list.push(text);
      }
      head(R.LABELSST, 10, row, col);
      at = out.writeUInt32LE(index, at);
      labels++;
    }
  }
  return { bytes: out.subarray(0, at), labels };
}

/** Excel's rules for a sheet's name. */
function checkSheetName(name: string): void {
  if (!name) throw new NodeError('The sheet name is empty');
  if (name.length > 31) throw new NodeError(`The sheet name "${name}" is longer than the 31 characters an XLS sheet name may have`);
  if (/[\\/?*[\]:]/.test(name)) throw new NodeError(`The sheet name "${name}" holds one of \\ / ? * [ ] : which an XLS sheet name may not`);
}

/** Rows of cells as an .xls file of one sheet: numbers and booleans typed, anything else text. */
export function writeXls(table: unknown[][], sheetName = 'Sheet'): Buffer {
  checkSheetName(sheetName);
  if (table.length > MAX_ROWS) throw new NodeError(`The sheet has ${table.length} rows, more than the ${MAX_ROWS} an XLS sheet may hold`);
  const width = table.reduce((max, cells) => Math.max(max, cells.length), 0);
  if (width > MAX_COLUMNS) throw new NodeError(`The sheet has ${width} columns, more than the ${MAX_COLUMNS} an XLS sheet may hold`);

  const list: string[] = [];
  const cells = cellRecords(table, list);

  const window1 = record(R.WINDOW1, Buffer.concat([u16s(0, 0, 0x4000, 0x2000, 0x0038, 0, 0, 1, 600)]));
  const head = Buffer.concat([
    bof(0x0005),
    record(R.CODEPAGE, u16s(1200)),
    window1,
    record(R.DATEMODE, u16s(0)),
    // Excel reads fonts 0-3 and 5 (there is no font 4); 15 style XFs and one cell XF.
    ...Array.from({ length: 5 }, font),
    ...Array.from({ length: 15 }, () => xf(true)),
    xf(false),
    // The built-in Normal style on XF 0.
    record(R.STYLE, Buffer.from([0x00, 0x80, 0x00, 0xff])),
  ]);
  const sheetEntry = (offset: number) => {
    const data = Buffer.concat([Buffer.alloc(6), unicodeString(sheetName, 1)]);
    data.writeUInt32LE(offset, 0);
    return record(R.BOUNDSHEET, data);
  };
  const boundsheetSize = sheetEntry(0).length;
  const sst = sstRecords(list, cells.labels, head.length + boundsheetSize);
  const eof = record(R.EOF, Buffer.alloc(0));
  const globals = Buffer.concat([head, sheetEntry(head.length + boundsheetSize + sst.length + eof.length), sst, eof]);

  const dimensions = Buffer.alloc(14);
  dimensions.writeUInt32LE(0, 0);
  dimensions.writeUInt32LE(table.length, 4);
  dimensions.writeUInt16LE(0, 8);
  dimensions.writeUInt16LE(width, 10);
  const sheet = Buffer.concat([
    bof(0x0010),
    record(R.DIMENSIONS, dimensions),
    cells.bytes,
    // Gridlines and headings shown, the sheet selected and active.
    record(R.WINDOW2, u16s(0x06b6, 0, 0, 64, 0, 0, 0, 0, 0)),
    eof,
  ]);
  let stream = Buffer.concat([globals, sheet]);
  // Excel wants the Workbook stream in the container's regular sectors: 4 KB at least.
  if (stream.length % 4096) stream = Buffer.concat([stream, Buffer.alloc(4096 - (stream.length % 4096))]);
  const container = cfb().utils.cfb_new();
  cfb().utils.cfb_add(container, 'Workbook', stream);
  return Buffer.from(cfb().write(container, { type: 'buffer' }) as Uint8Array);
}
