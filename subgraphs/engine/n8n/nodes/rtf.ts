import { TextDecoder } from 'node:util';
import { NodeError } from '../../nodes';

/**
 * Tables in Rich Text Format (.rtf) for Extract From File, Convert To File and Spreadsheet File,
 * as SheetJS writes and reads a sheet there: each row a `\trowd … \row` whose cells end with
 * `\cell`. Reading gives the text of every table row in the document, in order (text outside
 * tables is left out): `\'hh` in the document's code page (`\ansicpgN`, else Windows-1252),
 * `\uN` (its fallback characters skipped), `\\ \{ \}`, `\par`/`\line` as a line break, `\tab`.
 * Destinations that hold no text (font and colour tables, pictures, `{\* …}`) are skipped.
 * Every cell is text: RTF has no numbers.
 */

export type RtfCell = string | null;

export const RTF_MIME_TYPE = 'application/rtf';

/** Destinations whose text is not the document's. */
const SKIPPED = new Set([
  'fonttbl',
  'colortbl',
  'stylesheet',
  'info',
  'pict',
  'object',
  'header',
  'footer',
  'headerl',
  'headerr',
  'headerf',
  'footerl',
  'footerr',
  'footerf',
  'footnote',
  'listtable',
  'listoverridetable',
  'revtbl',
  'rsidtbl',
  'generator',
  'xmlnstbl',
  'themedata',
  'colorschememapping',
  'latentstyles',
  'datastore',
  'filetbl',
  'fldinst',
]);

interface Group {
  skip: boolean;
  /** Characters after \uN to skip (\ucN). */
  uc: number;
}

/** Code pages \ansicpgN names that are not windows-N to the decoder. */
const CODE_PAGES: Record<number, string> = { 932: 'shift_jis', 936: 'gbk', 949: 'euc-kr', 950: 'big5', 10000: 'macintosh', 65001: 'utf-8' };

function decoderFor(codePage: number): TextDecoder {
  try {
    return new TextDecoder(CODE_PAGES[codePage] ?? `windows-${codePage}`);
  } catch {
    return new TextDecoder('windows-1252');
  }
}

/** The rows of the tables in an RTF document, each row's cells as text. */
export function readRtf(bytes: Buffer): RtfCell[][] {
  const source = bytes.toString('latin1');
  if (!source.trimStart().startsWith('{\\rtf')) throw new NodeError('The file is not an RTF document: it does not start with {\\rtf');
  let decoder = decoderFor(1252);
  const rows: RtfCell[][] = [];
  let row: RtfCell[] = [];
  let cell = '';
  let inTable = false;
  const stack: Group[] = [];
  let group: Group = { skip: false, uc: 1 };
  let pendingBytes: number[] = [];
  let skipChars = 0;

  const flushBytes = () => {
    if (!pendingBytes.length) return;
    if (!group.skip) cell += decoder.decode(Uint8Array.from(pendingBytes));
    pendingBytes = [];
  };
  const text = (t: string) => {
    flushBytes();
    if (!group.skip) cell += t;
  };

  let i = 0;
  const n = source.length;
  while (i < n) {
    const ch = source[i]!;
    if (ch === '{') {
      flushBytes();
      stack.push(group);
      group = { ...group };
      i++;
      continue;
    }
    if (ch === '}') {
      flushBytes();
      group = stack.pop() ?? group;
      i++;
      continue;
    }
    if (ch === '\r' || ch === '\n') {
      i++;
      continue;
    }
    if (ch !== '\\') {
      if (skipChars > 0) skipChars--;
      // A byte past ASCII written as it is belongs to the code page, as a \'hh does.
      else if (ch.charCodeAt(0) >= 0x80) pendingBytes.push(ch.charCodeAt(0));
      else text(ch);
      i++;
      continue;
    }
    // A control symbol or word.
    const next = source[i + 1];
    if (next === undefined) break;
    if (next === "'") {
      const hex = source.slice(i + 2, i + 4);
      i += 4;
      if (skipChars > 0) {
        skipChars--;
        continue;
      }
      if (/^[0-9a-fA-F]{2}$/.test(hex)) pendingBytes.push(parseInt(hex, 16));
      continue;
    }
    if (!/[a-zA-Z]/.test(next)) {
      i += 2;
      if (next === '*') {
        group.skip = true;
        continue;
      }
      if (skipChars > 0) {
        skipChars--;
        continue;
      }
      if (next === '\\' || next === '{' || next === '}') text(next);
      else if (next === '~') text('\u00a0');
      else if (next === '_') text('\u2011');
      else if (next === '\r' || next === '\n') text('\n');
      continue;
    }
    const m = /^([a-zA-Z]{1,32})(-?\d{1,10})? ?/.exec(source.slice(i + 1, i + 48))!;
    i += 1 + m[0].length;
    const word = m[1]!;
    const param = m[2] === undefined ? undefined : Number(m[2]);
    if (word === 'u' && param !== undefined) {
      text(String.fromCharCode(param < 0 ? param + 65536 : param));
      skipChars = group.uc;
      continue;
    }
    skipChars = 0;
    if (SKIPPED.has(word)) {
      group.skip = true;
      continue;
    }
    switch (word) {
      case 'ansicpg':
        if (param) decoder = decoderFor(param);
        break;
      case 'uc':
        group.uc = param ?? 1;
        break;
      case 'par':
      case 'line':
        // Text outside a table's cells is not a cell's.
        if (inTable) text('\n');
        else cell = '';
        break;
      case 'bin':
        // Binary data (of a picture): its bytes are no text, whatever they hold.
        i += Math.max(0, param ?? 0);
        break;
      case 'tab':
        text('\t');
        break;
      case 'trowd':
        // A row starts: whatever text came before it is not its first cell's.
        if (!row.length) cell = '';
        inTable = true;
        break;
      case 'intbl':
        inTable = true;
        break;
      case 'pard':
        break;
      case 'cell':
        flushBytes();
        // A paragraph mark before \cell ends the cell's last paragraph, not a line of its text.
        row.push(cell.replace(/\n$/, ''));
        cell = '';
        break;
      case 'row':
        flushBytes();
        rows.push(row);
        row = [];
        cell = '';
        inTable = false;
        break;
      default:
        break;
    }
  }
  return rows.map((cells) => cells.map((c) => (c === '' ? null : c)));
}

/** Text as RTF: \ { } escaped, a line break as \line, anything past ASCII as \uN?. */
function escapeRtf(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\' || ch === '{' || ch === '}') out += `\\${ch}`;
    else if (ch === '\n') out += '\\line ';
    else if (ch === '\r') continue;
    else if (ch === '\t') out += '\\tab ';
    else if (code < 0x80) out += ch;
    else {
      // Each UTF-16 unit as a signed 16-bit number, with ? for readers that do not know \u.
      for (let k = 0; k < ch.length; k++) {
        const unit = ch.charCodeAt(k);
        out += `\\u${unit > 32767 ? unit - 65536 : unit}?`;
      }
    }
  }
  return out;
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value as string);
}

/** Rows of cells as an RTF document of one table (SheetJS's layout, every cell written, empty ones too). */
export function writeRtf(table: unknown[][]): Buffer {
  const width = table.reduce((max, cells) => Math.max(max, cells.length), 0);
  const out = ['{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Arial;}}\n'];
  for (const cells of table) {
    let row = '\\trowd\\trautofit1';
    for (let c = 0; c < width; c++) row += `\\cellx${(c + 1) * 1440}`;
    row += '\\pard\\intbl';
    for (let c = 0; c < width; c++) row += ` ${escapeRtf(cellText(cells[c]))}\\cell`;
    out.push(`${row}\\pard\\intbl\\row\n`);
  }
  out.push('}');
  return Buffer.from(out.join(''), 'latin1');
}
