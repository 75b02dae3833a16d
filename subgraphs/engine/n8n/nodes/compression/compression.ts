import { Gunzip, gzipSync, unzipSync, zipSync, type Zippable } from 'fflate';
import { basename, posix } from 'node:path';
import type * as TarStream from 'tar-stream';
import type { BinaryData } from '../../../expressions';
import { binaryBuffer, DEFAULT_BINARY_KEY, NodeError, prepareBinary, versionOf, type Item, type NodeContext, type NodeDefinition } from '../../../nodes';
import { isZip, perItem } from '../files.items';
import { fieldList, fixedOption, type Params } from '../item-lists/params';

/**
 * n8n's Compression (1, 1.1) on fflate:
 *
 * - compress: the files in the comma-separated binary fields `binaryPropertyName` (default
 *   `data`) of each item, as one zip, tar or gzipped tar (`targz`) `fileName` in
 *   `binaryPropertyOutput` (default `data`), or
 *   each gzipped (<name up to its first dot>.gzip, as n8n names it) into `<outputPrefix><n>` (1; prefix `data`) or, in 1.1,
 *   `binaryPropertyOutput` when there is one file and `<binaryPropertyOutput><n>` when there are
 *   more. The item keeps its fields; its files are replaced by the archive(s).
 * - decompress: each zip's or tar's members (folders, links and __MACOSX copies left out; a
 *   .tar.gz or .tgz unpacked in one step) or the gzip's content as `<outputPrefix><n>` (prefix
 *   `file_`; n counts every file of the item from 0), under their own names.
 *
 * What one item may unpack is capped (MAX_UNPACKED_BYTES), so that a small archive cannot
 * unfold into gigabytes in memory. Tar and tar.gz came to n8n's 1.1 later (n8n 2.28) under the
 * same version: both are read and written here at 1 and 1.1.
 */

/** What one item's archives may unpack to, in bytes. */
export const MAX_UNPACKED_BYTES = 256 * 1024 * 1024;

const FORMATS = ['zip', 'gzip', 'tar', 'targz'];

/** tar-stream, loaded at the first tar rather than at every start. */
let tarModule: typeof TarStream | undefined;
const tarStream = () => (tarModule ??= require('tar-stream') as typeof TarStream);

function tooLarge(): NodeError {
  return new NodeError(`The archive unpacks to more than ${MAX_UNPACKED_BYTES / 1024 / 1024} MB, more than one item may hold`);
}

function entryName(binary: BinaryData, key: string): string {
  if (binary.fileName) return binary.fileName;
  return binary.fileExtension ? `${key}.${binary.fileExtension}` : key;
}

async function compress(ctx: NodeContext, p: Params, i: number, version: number): Promise<Item> {
  const item = ctx.items[i]!;
  const keys = fieldList(p.binaryPropertyName ?? DEFAULT_BINARY_KEY, 'binaryPropertyName');
  const format = fixedOption(p.outputFormat, 'zip');
  if (!FORMATS.includes(format)) throw new NodeError(`The output format "${format}" is not supported; use zip, gzip, tar or targz`);
  const output = String(p.binaryPropertyOutput || DEFAULT_BINARY_KEY);
  if (format === 'zip') {
    const files: Zippable = {};
    for (const key of keys) {
      let name = entryName(item.binary?.[key] ?? { data: '', mimeType: '' }, key);
      const bytes = binaryBuffer(item, key, i);
      // Two files of one name would overwrite each other in the archive: the second gets its key.
      if (Object.hasOwn(files, name)) name = `${key}_${name}`;
      files[name] = new Uint8Array(bytes);
    }
    const fileName = String(p.fileName || 'file.zip');
    const zipped = Buffer.from(zipSync(files));
    return { json: item.json, binary: { [output]: prepareBinary(zipped, { fileName, mimeType: 'application/zip' }) }, pairedItem: { item: i } };
  }
  if (format === 'tar' || format === 'targz') {
    const files: [string, Buffer][] = [];
    const names = new Set<string>();
    for (const key of keys) {
      let name = entryName(item.binary?.[key] ?? { data: '', mimeType: '' }, key);
      const bytes = binaryBuffer(item, key, i);
      if (names.has(name)) name = `${key}_${name}`;
      names.add(name);
      files.push([name, bytes]);
    }
    const tar = await packTar(files);
    const gz = format === 'targz';
    const fileName = String(p.fileName || (gz ? 'file.tar.gz' : 'file.tar'));
    const bytes = gz ? Buffer.from(gzipSync(new Uint8Array(tar))) : tar;
    return {
      json: item.json,
      binary: { [output]: prepareBinary(bytes, { fileName, mimeType: gz ? 'application/gzip' : 'application/x-tar' }) },
      pairedItem: { item: i },
    };
  }
  const binary: Record<string, BinaryData> = {};
  keys.forEach((key, n) => {
    // n8n names the gzip after the file's name up to its first dot: report.csv -> report.gzip.
    const name = `${entryName(item.binary?.[key] ?? { data: '', mimeType: '' }, key).split('.')[0]}.gzip`;
    const target = version >= 1.1 ? (keys.length === 1 ? output : `${output}${n}`) : `${String(p.outputPrefix ?? 'data')}${n}`;
    binary[target] = prepareBinary(Buffer.from(gzipSync(new Uint8Array(binaryBuffer(item, key, i)))), { fileName: name, mimeType: 'application/gzip' });
  });
  return { json: item.json, binary, pairedItem: { item: i } };
}

async function packTar(files: [string, Buffer][]): Promise<Buffer> {
  const pack = tarStream().pack();
  for (const [name, bytes] of files) pack.entry({ name, size: bytes.length, mode: 0o644, mtime: new Date() }, bytes);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A tar header's "ustar" magic (POSIX and GNU tars write it). */
function isTar(bytes: Uint8Array): boolean {
  return bytes.length >= 512 && Buffer.from(bytes.subarray(257, 262)).toString('latin1') === 'ustar';
}

/** The archive's kind: by its first bytes, else by its extension or MIME type; a gzip named .tar.gz or .tgz is a tar inside. */
function kindOf(binary: BinaryData, bytes: Buffer): 'zip' | 'gzip' | 'tar' | 'targz' | undefined {
  const name = (binary.fileName ?? '').toLowerCase();
  const ext = binary.fileExtension?.toLowerCase();
  if (isZip(bytes)) return 'zip';
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return name.endsWith('.tar.gz') || name.endsWith('.tgz') || ext === 'tgz' ? 'targz' : 'gzip';
  if (isTar(bytes)) return 'tar';
  if (ext === 'tar' || /\bx-tar\b/.test(binary.mimeType)) return 'tar';
  if (ext === 'gz' || /\bx?-?gzip\b/.test(binary.mimeType)) return 'gzip';
  if (ext === 'zip' || /\bx?-?zip(-compressed)?\b/.test(binary.mimeType)) return 'zip';
  return undefined;
}

function gunzip(bytes: Buffer, budget: { left: number }): Buffer {
  const chunks: Uint8Array[] = [];
  const stream = new Gunzip((chunk) => {
    budget.left -= chunk.length;
    if (budget.left < 0) throw tooLarge();
    chunks.push(chunk);
  });
  stream.push(new Uint8Array(bytes), true);
  return Buffer.concat(chunks);
}

function unzip(bytes: Buffer, budget: { left: number }): [string, Uint8Array][] {
  const files = unzipSync(new Uint8Array(bytes), {
    filter(file) {
      // Folders, and the copies macOS adds under __MACOSX, are not files of the archive.
      if (file.name.endsWith('/') || file.name.includes('__MACOSX')) return false;
      // The sizes a zip declares are checked before anything is inflated; the inflated sizes again below.
      budget.left -= file.originalSize;
      if (budget.left < 0) throw tooLarge();
      return true;
    },
  });
  return Object.entries(files);
}

/** A tar's files, each checked against the budget before its bytes are kept. */
async function untar(bytes: Buffer, budget: { left: number }): Promise<[string, Buffer][]> {
  const extract = tarStream().extract();
  const files: [string, Buffer][] = [];
  const done = (async () => {
    for await (const entry of extract) {
      const { name, type, size = 0 } = entry.header;
      if (type !== 'file' && type !== 'contiguous-file') {
        entry.resume();
        continue;
      }
      budget.left -= size;
      if (budget.left < 0) {
        extract.destroy();
        throw tooLarge();
      }
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      files.push([name, Buffer.concat(chunks)]);
    }
  })();
  extract.end(bytes);
  await done;
  return files;
}

async function decompress(ctx: NodeContext, p: Params, i: number): Promise<Item> {
  const item = ctx.items[i]!;
  const keys = fieldList(p.binaryPropertyName ?? DEFAULT_BINARY_KEY, 'binaryPropertyName');
  const prefix = String(p.outputPrefix ?? 'file_');
  const binary: Record<string, BinaryData> = {};
  const budget = { left: MAX_UNPACKED_BYTES };
  let n = 0;
  for (const key of keys) {
    const bytes = binaryBuffer(item, key, i);
    const source = item.binary![key]!;
    const kind = kindOf(source, bytes);
    if (kind === 'zip') {
      let members: [string, Uint8Array][];
      try {
        members = unzip(bytes, budget);
      } catch (err) {
        if (err instanceof NodeError) throw err;
        throw new NodeError(`The file in '${key}' is not a readable zip archive: ${err instanceof Error ? err.message : String(err)}`, { itemIndex: i });
      }
      for (const [path, data] of members) {
        const dir = posix.dirname(path);
        binary[`${prefix}${n++}`] = prepareBinary(Buffer.from(data), { fileName: posix.basename(path), ...(dir !== '.' ? { directory: dir } : {}) });
      }
    } else if (kind === 'tar' || kind === 'targz') {
      let members: [string, Buffer][];
      try {
        const tar = kind === 'targz' ? gunzip(bytes, budget) : bytes;
        // The gzip layer's bytes were counted; the members are counted again as they are kept.
        if (kind === 'targz') budget.left += tar.length;
        members = await untar(tar, budget);
      } catch (err) {
        if (err instanceof NodeError) throw err;
        throw new NodeError(`The file in '${key}' is not a readable tar archive: ${err instanceof Error ? err.message : String(err)}`, { itemIndex: i });
      }
      for (const [path, data] of members) {
        const dir = posix.dirname(path);
        binary[`${prefix}${n++}`] = prepareBinary(data, { fileName: posix.basename(path), ...(dir !== '.' ? { directory: dir } : {}) });
      }
    } else if (kind === 'gzip') {
      let data: Buffer;
      try {
        data = gunzip(bytes, budget);
      } catch (err) {
        if (err instanceof NodeError) throw err;
        throw new NodeError(`The file in '${key}' is not a readable gzip file: ${err instanceof Error ? err.message : String(err)}`, { itemIndex: i });
      }
      binary[`${prefix}${n++}`] = prepareBinary(data, { fileName: basename(entryName(source, key).replace(/\.(gz|gzip)$/i, '')) });
    } else {
      throw new NodeError(`The file in '${key}' is not a zip, gzip, tar or tar.gz archive`, { itemIndex: i });
    }
  }
  return { json: item.json, binary, pairedItem: { item: i } };
}

export const compression: NodeDefinition = {
  name: 'compression',
  description:
    "n8n's Compression: packs an item's files into a zip or tar (plain or gzipped) or gzips them, or unpacks zip, gzip, tar and tar.gz archives into files.",
  n8n: {
    versions: [1, 1.1],
    unsupported(p) {
      const format = p.outputFormat;
      if (typeof format === 'string' && !format.startsWith('=') && !FORMATS.includes(format)) {
        return { option: `outputFormat: ${format}`, message: `the ${format} format is not supported; use zip, gzip, tar or targz` };
      }
      return undefined;
    },
  },
  inProcess: true,
  invalid(p) {
    const operation = p.operation;
    if (typeof operation === 'string' && !operation.startsWith('=') && !['compress', 'decompress'].includes(operation)) {
      return { parameter: 'operation', message: 'must be one of compress, decompress' };
    }
    return undefined;
  },
  async execute(ctx) {
    const params = await ctx.parameters();
    const version = versionOf(ctx.node);
    const operation = fixedOption(ctx.node.parameters?.operation, 'decompress');
    const out = await perItem(ctx, async (i) => (operation === 'compress' ? compress(ctx, params[i]!, i, version) : decompress(ctx, params[i]!, i)));
    return { outputs: [out] };
  },
};
