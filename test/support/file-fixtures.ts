import { createHash } from 'node:crypto';

/**
 * Small real files for the file-node tests, written byte by byte: a PDF (text pages, an Info
 * dictionary, optionally encrypted with a user password) that any PDF reader opens.
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
