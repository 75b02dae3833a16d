import type { BinaryData } from '../../expressions';
import { NodeError, type Item, type NodeContext } from '../../nodes';

/**
 * What n8n's file nodes (Convert To File, Extract From File, Compression, Move Binary Data,
 * Spreadsheet File, Read/Write Files) share: text in a named encoding with or without a byte-order
 * mark, and the per-item loop where, with n8n's continueOnFail, a failed item becomes `{error}`.
 */

/**
 * The encodings a file's text may be in. n8n lists iconv-lite's; these are the ones Node's Buffer
 * reads and writes itself, under n8n's names. Any other is refused when the workflow is saved.
 */
const ENCODINGS: Record<string, BufferEncoding> = {
  utf8: 'utf8',
  'utf-8': 'utf8',
  utf16le: 'utf16le',
  'utf-16le': 'utf16le',
  ucs2: 'utf16le',
  latin1: 'latin1',
  'iso-8859-1': 'latin1',
  binary: 'latin1',
  ascii: 'ascii',
  base64: 'base64',
  hex: 'hex',
};

export const SUPPORTED_ENCODINGS = Object.keys(ENCODINGS);

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const COMPOUND_FILE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/** Whether the bytes start as a ZIP archive does (a .zip, and XLSX and ODS files). */
export function isZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && ZIP_MAGIC.equals(bytes.subarray(0, 4));
}

/** Whether the bytes start as a Compound File does (an XLS, and the other Office 97-2003 files). */
export function isCompoundFile(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && COMPOUND_FILE_MAGIC.equals(bytes.subarray(0, 8));
}

/** Refusal text for an encoding option Buffer cannot handle, undefined when it can (or is an expression). */
export function unsupportedEncoding(value: unknown, option = 'encoding'): { option: string; message: string } | undefined {
  if (value === undefined || value === '' || (typeof value === 'string' && value.startsWith('='))) return undefined;
  if (typeof value === 'string' && Object.hasOwn(ENCODINGS, value.toLowerCase())) return undefined;
  return {
    option: `${option}: ${String(value)}`,
    message: `the ${String(value)} encoding is not supported; use one of ${SUPPORTED_ENCODINGS.join(', ')}`,
  };
}

export function bufferEncoding(value: unknown): BufferEncoding {
  if (value === undefined || value === '') return 'utf8';
  const found = typeof value === 'string' ? ENCODINGS[value.toLowerCase()] : undefined;
  if (!found) throw new NodeError(`The ${String(value)} encoding is not supported; use one of ${SUPPORTED_ENCODINGS.join(', ')}`);
  return found;
}

const BOMS: Partial<Record<BufferEncoding, Buffer>> = {
  utf8: Buffer.from([0xef, 0xbb, 0xbf]),
  utf16le: Buffer.from([0xff, 0xfe]),
};

/** Text as bytes in `encoding`, after a byte-order mark when `addBOM`. */
export function encodeText(text: string, encoding: unknown, addBOM = false): Buffer {
  const enc = bufferEncoding(encoding);
  const body = Buffer.from(text, enc);
  const bom = addBOM ? BOMS[enc] : undefined;
  return bom ? Buffer.concat([bom, body]) : body;
}

/** Bytes as text in `encoding`, a leading byte-order mark dropped unless `stripBOM` is false. */
export function decodeText(bytes: Buffer, encoding: unknown, stripBOM = true): string {
  const text = bytes.toString(bufferEncoding(encoding));
  return stripBOM && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** A copy of an item's binary map, undefined when it holds nothing. */
export function binaryCopy(binary: Record<string, BinaryData> | undefined, without?: string): Record<string, BinaryData> | undefined {
  if (!binary) return undefined;
  const out: Record<string, BinaryData> = {};
  for (const [key, value] of Object.entries(binary)) if (key !== without) out[key] = value;
  return Object.keys(out).length ? out : undefined;
}

/** An item with `json` and, when there is any, `binary`. */
export function fileItem(json: Record<string, unknown>, binary: Record<string, BinaryData> | undefined, index: number): Item {
  return binary ? { json, binary, pairedItem: { item: index } } : { json, pairedItem: { item: index } };
}

/**
 * n8n's loop: `each` gives the output items of input item i (none, one or many). A failure
 * names its item; with continueOnFail the item becomes `{error}` and the others go on.
 */
export async function perItem(ctx: NodeContext, each: (index: number) => Promise<Item[] | Item | undefined>): Promise<Item[]> {
  const out: Item[] = [];
  for (let i = 0; i < ctx.items.length; i++) {
    let list: Item[];
    try {
      const result = await each(i);
      list = result === undefined ? [] : Array.isArray(result) ? result : [result];
    } catch (err) {
      // An execution budget crossed while reading (ctx.checkOutput) is the execution's, never the item's.
      if (err instanceof Error && err.name === 'BudgetExceeded') throw err;
      const message = err instanceof Error ? err.message : String(err);
      if (!ctx.continueOnFail) throw new NodeError(message, { ...(err instanceof NodeError ? err.details : {}), itemIndex: i });
      list = [{ json: { error: message }, pairedItem: { item: i } }];
    }
    // The budget is the execution's, not the item's: outside the try, continueOnFail does not swallow it.
    ctx.checkOutput(out.length + list.length);
    out.push(...list);
  }
  return out;
}
