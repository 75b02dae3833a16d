import { extension, lookup } from 'mime-types';
import prettyBytes from 'pretty-bytes';
import type { BinaryData, Item } from '../expressions';
import { NodeError } from './types';

/** The key a node reads and writes binary data under unless told otherwise (n8n's `data`). */
export const DEFAULT_BINARY_KEY = 'data';

/** A file as an item's binary data, in memory (base64), described as n8n describes it. */
export function prepareBinary(bytes: Buffer, meta: { fileName?: string; mimeType?: string; directory?: string } = {}): BinaryData {
  const mimeType = meta.mimeType || (meta.fileName && lookup(meta.fileName)) || 'application/octet-stream';
  const fileExtension = meta.fileName?.includes('.') ? meta.fileName.slice(meta.fileName.lastIndexOf('.') + 1) : extension(mimeType) || undefined;
  return {
    data: bytes.toString('base64'),
    mimeType,
    fileType: fileTypeOf(mimeType),
    ...(meta.fileName ? { fileName: meta.fileName } : {}),
    ...(meta.directory ? { directory: meta.directory } : {}),
    ...(fileExtension ? { fileExtension } : {}),
    fileSize: prettyBytes(bytes.length),
    bytes: bytes.length,
  };
}

/** The bytes of an item's binary `key`; a NodeError naming the key when the item has none. */
export function binaryBuffer(item: Item, key: string, itemIndex = 0): Buffer {
  const binary = item.binary?.[key];
  if (!binary) {
    const keys = Object.keys(item.binary ?? {});
    throw new NodeError(
      keys.length
        ? `This item has no binary field '${key}' (it has: ${keys.join(', ')})`
        : `This item has no binary field '${key}': the input item carries no binary data`,
      { itemIndex },
    );
  }
  if (binary.id && !binary.data) throw new NodeError(`Binary field '${key}' was not loaded into memory`, { itemIndex });
  return Buffer.from(binary.data, 'base64');
}

function fileTypeOf(mimeType: string): string | undefined {
  const [type, sub = ''] = mimeType.split('/');
  if (type === 'text') return sub === 'html' ? 'html' : 'text';
  if (type === 'image' || type === 'audio' || type === 'video') return type;
  if (sub === 'json') return 'json';
  if (sub === 'pdf') return 'pdf';
  return undefined;
}
