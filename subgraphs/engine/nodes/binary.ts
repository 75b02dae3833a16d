import { Readable } from 'node:stream';
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

/**
 * A file a webhook answer sends (Respond to Webhook's binary, a last node's first binary): its
 * metadata and a way to read it. The run that answers swaps `open` for a read from the binary
 * store where the file is kept there; the HTTP answer pipes the stream to the caller.
 */
export class WebhookFile {
  constructor(
    readonly binary: BinaryData,
    readonly bytes: number,
    private opener: () => Promise<Readable>,
  ) {}

  /** The file's bytes as a stream. */
  open(): Promise<Readable> {
    return this.opener();
  }

  /** Reads the file from elsewhere from now on (the store that keeps it), given how it was read until now. */
  readFrom(opener: (before: () => Promise<Readable>) => Promise<Readable>): void {
    const before = this.opener;
    this.opener = () => opener(before);
  }
}

/** How much base64 one chunk of an in-memory file's stream decodes (a multiple of 4 characters). */
const BASE64_CHUNK = 256 * 1024;

/** An item's binary `key` as a file to answer with, read from memory a chunk at a time until a store takes over. */
export function webhookFile(item: Item, key: string, itemIndex = 0): WebhookFile {
  const binary = item.binary?.[key];
  if (!binary) binaryBuffer(item, key, itemIndex);
  const b = binary!;
  const text = b.data ?? '';
  const bytes = b.bytes ?? Buffer.byteLength(text, 'base64');
  return new WebhookFile(b, bytes, async () => {
    if (b.id && !text) throw new NodeError(`Binary field '${key}' was not loaded into memory`, { itemIndex });
    return Readable.from(
      (function* () {
        for (let at = 0; at < text.length; at += BASE64_CHUNK) yield Buffer.from(text.slice(at, at + BASE64_CHUNK), 'base64');
      })(),
    );
  });
}
