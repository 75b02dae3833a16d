import { createHash } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import CFB from 'cfb';

/**
 * Small real files for the file-node tests, written byte by byte: a PDF (text pages, an Info
 * dictionary, optionally encrypted with a user password) that any PDF reader opens; XLS workbooks
 * of BIFF8 records as Excel writes them, and one written by another program (xlwt).
 */

function rc4(key: Buffer, data: Buffer): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = Buffer.alloc(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255;
    j = (j + s[i]!) & 255;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 255]!;
  }
  return out;
}

const md5 = (...parts: Buffer[]) => createHash('md5').update(Buffer.concat(parts)).digest();

/** The PDF standard security handler's padding (PDF 1.7, 7.6.3.3). */
const PAD = Buffer.from('28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A', 'hex');
const padded = (password: string) => Buffer.concat([Buffer.from(password, 'latin1'), PAD]).subarray(0, 32);

interface Encryption {
  key: Buffer;
  dictionary: string;
  id: Buffer;
}

/** RC4 40-bit, revision 2: what every reader opens, and enough to test a password. */
function encryption(userPassword: string): Encryption {
  const id = Buffer.from('0123456789abcdef0123456789abcdef', 'hex');
  const owner = rc4(md5(padded(`${userPassword}-owner`)).subarray(0, 5), padded(userPassword));
  const permissions = Buffer.alloc(4);
  permissions.writeInt32LE(-4);
  const key = md5(padded(userPassword), owner, permissions, id).subarray(0, 5);
  const user = rc4(key, PAD);
  return {
    key,
    id,
    dictionary: `<< /Filter /Standard /V 1 /R 2 /O <${owner.toString('hex')}> /U <${user.toString('hex')}> /P -4 >>`,
  };
}

function objectKey(enc: Encryption, num: number): Buffer {
  const suffix = Buffer.from([num & 255, (num >> 8) & 255, (num >> 16) & 255, 0, 0]);
  return md5(enc.key, suffix).subarray(0, 10);
}

export interface PdfFixture {
  /** Each page's lines of text. */
  pages: string[][];
  /** The Info dictionary's entries (Title, Author, …). */
  info?: Record<string, string>;
  /** Encrypts the file with this user password. */
  password?: string;
}

/** A PDF 1.4 file with Helvetica text, one line per entry of each page. */
export function pdfFile({ pages, info = {}, password }: PdfFixture): Buffer {
  const enc = password === undefined ? undefined : encryption(password);
  const text = (num: number, value: string) => {
    if (!enc) return `(${value.replace(/[\\()]/g, (c) => `\\${c}`)})`;
    return `<${rc4(objectKey(enc, num), Buffer.from(value, 'latin1')).toString('hex')}>`;
  };
  const objects: Buffer[] = [];
  const add = (num: number, body: string | Buffer) => {
    objects[num] = Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1');
  };
  add(1, '<< /Type /Catalog /Pages 2 0 R >>');
  add(2, `<< /Type /Pages /Kids [${pages.map((_, i) => `${5 + 2 * i} 0 R`).join(' ')}] /Count ${pages.length} >>`);
  add(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  add(
    4,
    `<< ${Object.entries(info)
      .map(([k, v]) => `/${k} ${text(4, v)}`)
      .join(' ')} >>`,
  );
  pages.forEach((lines, i) => {
    const page = 5 + 2 * i;
    const escape = (l: string) => `(${l.replace(/[\\()]/g, (c) => `\\${c}`)})`;
    let stream: Buffer = Buffer.from(`BT /F1 12 Tf 72 720 Td 14 TL ${lines.map((l) => `${escape(l)} Tj T*`).join(' ')} ET`, 'latin1');
    if (enc) stream = rc4(objectKey(enc, page + 1), stream);
    add(page, `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${page + 1} 0 R >>`);
    add(page + 1, Buffer.concat([Buffer.from(`<< /Length ${stream.length} >>\nstream\n`, 'latin1'), stream, Buffer.from('\nendstream', 'latin1')]));
  });
  const encryptNum = objects.length;
  if (enc) add(encryptNum, enc.dictionary);

  const chunks: Buffer[] = [Buffer.from('%PDF-1.4\n', 'latin1')];
  let length = chunks[0]!.length;
  const offsets: number[] = [];
  for (let num = 1; num < objects.length; num++) {
    offsets[num] = length;
    const chunk = Buffer.concat([Buffer.from(`${num} 0 obj\n`, 'latin1'), objects[num]!, Buffer.from('\nendobj\n', 'latin1')]);
    chunks.push(chunk);
    length += chunk.length;
  }
  const xref = [`xref\n0 ${objects.length}\n0000000000 65535 f \n`, ...offsets.slice(1).map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  const trailer = enc ? `/Encrypt ${encryptNum} 0 R /ID [<${enc.id.toString('hex')}> <${enc.id.toString('hex')}>]` : '';
  chunks.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length} /Root 1 0 R /Info 4 0 R ${trailer}>>\nstartxref\n${length}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(chunks);
}

/**
 * An .xls written by Python's xlwt 1.3.0 (not by this project), deflated. Sheets "Notes" (A1 "skip
 * me") and "Stock": sku, qty, price, ok, since, seen, note; A-1, 3 (RK), 12.5 (format `#,##0.00
 * "kr"`), TRUE, 2024-02-29 (`YYYY-MM-DD`), 2024-03-01 13:45 (`DD/MM/YYYY hh:mm`), "Zoë – 日本";
 * B-2, -40, -, FALSE, -, -, "ab" x 6000 (12,000 characters: the shared string table goes on in
 * CONTINUE records); a blank row 4; C-3, 1234567.891. Made with:
 *   wb = xlwt.Workbook(encoding='utf-8'); s = wb.add_sheet('Stock'); s.write(row, col, value, xlwt.easyxf(num_format_str=...)); wb.save(...)
 */
export function xlwtWorkbook(): Buffer {
  return inflateRawSync(Buffer.from(XLWT_WORKBOOK.join(''), 'base64'));
}

const XLWT_WORKBOOK = [
  '7ZxNaFxVFIC/d+fNX5yZzEyS2h8dnwmtGpM2bRBErJPUaFcTqhI0RdAkHWwYMxMn00VdaLUGFyIIXSkiFPqDm6obf1BBwYULoaKgUBAS/zZdCQou2jx7z3sT',
  'EjtCAppSOecj99177s+578x9j7PIeV+fzy2cfG/rIn+T+4iw5CeJrdA5wK3NRhaWfN+31ebVA3yV60qSiSzEonyc/ipuf0P7ey9ieNf9HAP8CDzOLKO1atnb',
  'QNkne5hw7B72Oi4OhjcxZNgi+8pLOSVlh5TvyNhPpBwSzatS7iXPgnOQ88XR3rvDc/yY6Za+DAaHD2TOBdHsposv7Tl+/jUnGBtluD498fT/vqPgpjhFHPaX',
  'q+W6bec5TRp6+np6BnYODHjdlXp3wW3nDG0wPj4+3l8q9Y+MFNwuztr3wcjIrlJpl+3wDh++Z2ZmgU5inOIP34Pfmy+OzzzVb6zesW/mP1fr4/+gT3C6pT7J',
  'mZb6Ns5epT9hXDiG/6Rjn6550lwYtD1RRmuN8pxVDNwVKB5p1KYql/C89JXn1f7FYa4yPevNlCO2diQCzzSORmG2Pj1VNlCrRGFuujpVdmGuXK66UK017PDh',
  '/t0JnIPUuIhHh+fxS7nvqQjs69+zsJOJSUVRFEVRFEVRFEVRFEVRFEVRFEVRFEVRrin30tuOukFRFEVRFEVRFEVRhAjc3z/YBgSZPdlVmT1pyXdJYThEu9Rz',
  'kvWSJcGlt3/7pjR5oPiEaI6RWM752m7/nx+fF+yMFCaz3BOUvTLjTilflFW3SX2rlJ1E7XXHga6w8uBxGfOS9O4gwaDIt8XbVtRvJ8H8xYc+LMz/VLyDBOf2',
  'Lz7bee774km6SXIIRzhOn9PnvPG6lY+KzasTZgf9IOWWqzKFEiYb7t0PE9vauWxzWoBckP1m8rxvhzK0Iv9tI7walTJ+HXs13tKr9o6DVtM7QcuQI7LcipDD',
  'XW655MQfQStKTrwdtGLkxEvWqtPCqiNWrbc/JS93lSMjeWOvdFirUZO4cqcR2dlzxo536eCtLwwRk5GkqE7GxsbG8tt/HQrWsxaToUXTwqIRi3Zvdr3gFEz6',
  'vm8tGbFEOM6udEO4kis+WL2SKyulrD9MBldWOnJi888vf7dnWE4mrU6mioqKioqKisraxJH4A4nB3DD+jIURqI2ekmF0YeOVVJija+Oo9uATEBLV5CUGtDEp',
  'dAGbgBuBzRIn2ogVtgE3ATcDBeCW8LsRl33fX9LPMFwzeZgaNRp4PECVBnWOruv8bCLqNNdy1jin+b0QK49So06FSdlHZd3nN49xVt7PmicO/XuP0HrtL61n',
  'n/+x/b8A',
];

/** One BIFF record: its type, its length, its data. */
export function biffRecord(type: number, ...data: (Buffer | number[])[]): Buffer {
  const body = Buffer.concat(data.map((d) => (Buffer.isBuffer(d) ? d : Buffer.from(d))));
  const head = Buffer.alloc(4);
  head.writeUInt16LE(type, 0);
  head.writeUInt16LE(body.length, 2);
  return Buffer.concat([head, body]);
}

export const u16 = (...values: number[]): Buffer => {
  const b = Buffer.alloc(values.length * 2);
  values.forEach((v, i) => b.writeUInt16LE(v, i * 2));
  return b;
};

export const u32 = (value: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value >>> 0, 0);
  return b;
};

export const f64 = (value: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(value, 0);
  return b;
};

const bofRecord = (type: number) => biffRecord(0x0809, u16(0x0600, type, 0x0dbb, 0x07cc), u32(0x41), u32(0x406));
const eofRecord = () => biffRecord(0x000a);

/**
 * A BIFF8 workbook in a Compound File: the `globals` records (fonts, XFs, SST, …) and each sheet's
 * cell records, with the BOF, BOUNDSHEET and EOF records around them placed as Excel places them.
 */
export function biffWorkbook(globals: Buffer[], sheets: { name: string; records: Buffer[] }[], stream = 'Workbook'): Buffer {
  const sheetName = (name: string) => Buffer.concat([Buffer.from([name.length, 0]), Buffer.from(name, 'latin1')]);
  const boundsheetSize = (name: string) => 4 + 6 + 2 + name.length;
  const head = Buffer.concat([bofRecord(0x0005), ...globals]);
  let offset = head.length + sheets.reduce((n, s) => n + boundsheetSize(s.name), 0) + 4;
  const bodies = sheets.map((s) => Buffer.concat([bofRecord(0x0010), ...s.records, eofRecord()]));
  const entries = sheets.map((s, i) => {
    const entry = biffRecord(0x0085, u32(offset), [0, 0], sheetName(s.name));
    offset += bodies[i]!.length;
    return entry;
  });
  const container = CFB.utils.cfb_new();
  CFB.utils.cfb_add(container, stream, Buffer.concat([head, ...entries, eofRecord(), ...bodies, Buffer.alloc(4096)]));
  return Buffer.from(CFB.write(container, { type: 'buffer' }) as Uint8Array);
}
