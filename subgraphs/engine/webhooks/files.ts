import busboy from 'busboy';
import { type AppError, errors } from '../../../kernel/errors';
import { setOwn } from '../../../kernel/names';
import { prepareBinary } from '../nodes';

/** A file of an item (n8n's binary data). */
export type BinaryData = ReturnType<typeof prepareBinary>;

/**
 * A webhook request's files as n8n's Webhook node gives them: a multipart/form-data upload's
 * files in the item's binary data, each under its field name (a field sent with several files:
 * name0, name1…; a nameless one: data<n>; with the `binaryPropertyName` option: <option><n>,
 * counting every file), its text fields as `body`; and, with the `rawBody` option (or Webhook
 * v1's `binaryData`), a raw body as the file `data` (or the option's name).
 */

export interface WebhookFileOptions {
  binaryPropertyName?: string;
  rawBody?: boolean;
  binaryData?: boolean;
}

/** The Webhook node's file options, from its parameters (n8n keeps them under `options`; v1 had `binaryData` at the top). */
export function fileOptions(parameters: Record<string, unknown> | undefined): WebhookFileOptions {
  const options = (parameters?.options ?? {}) as Record<string, unknown>;
  const name = options.binaryPropertyName ?? parameters?.binaryPropertyName;
  return {
    ...(typeof name === 'string' && name.trim() ? { binaryPropertyName: name.trim() } : {}),
    rawBody: options.rawBody === true,
    binaryData: parameters?.binaryData === true || options.binaryData === true,
  };
}

interface UploadedFile {
  field: string;
  fileName?: string;
  mimeType: string;
  chunks: Buffer[];
}

export function isMultipart(contentType: string): boolean {
  return contentType === 'multipart/form-data';
}

/** A multipart/form-data body: its text fields (repeated names as lists) and its files, named as n8n names them. */
export function parseMultipart(
  body: Buffer,
  headers: Record<string, string>,
  options: WebhookFileOptions,
): Promise<{ fields: Record<string, string | string[]>; binary: Record<string, BinaryData> }> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string | string[]> = {};
    const files: UploadedFile[] = [];
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': headers['content-type'] ?? '' }, limits: { fieldSize: body.length + 1 } });
    } catch (err) {
      reject(invalid((err as Error).message));
      return;
    }
    parser.on('field', (name, value) => {
      const prev = fields[name];
      setOwn(fields, name, prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]);
    });
    parser.on('file', (field, stream, info) => {
      const file = { field, fileName: info.filename, mimeType: info.mimeType, chunks: [] as Buffer[] };
      files.push(file);
      stream.on('data', (chunk: Buffer) => file.chunks.push(chunk));
    });
    parser.on('error', (err: Error) => reject(invalid(err.message)));
    parser.on('close', () => resolve({ fields, binary: nameFiles(files, options) }));
    parser.end(body);
  });
}

function nameFiles(files: UploadedFile[], options: WebhookFileOptions): Record<string, BinaryData> {
  const binary: Record<string, BinaryData> = {};
  const perField = new Map<string, number>();
  for (const f of files) perField.set(f.field, (perField.get(f.field) ?? 0) + 1);
  const seen = new Map<string, number>();
  let count = 0;
  for (const f of files) {
    let key = f.field.endsWith('[]') ? f.field.slice(0, -2) : f.field;
    const multi = perField.get(f.field)! > 1 || f.field.endsWith('[]');
    if (!key.trim()) key = `data${count}`;
    else if (multi) {
      const n = seen.get(f.field) ?? 0;
      seen.set(f.field, n + 1);
      key += n;
    }
    if (options.binaryPropertyName) key = `${options.binaryPropertyName}${count}`;
    setOwn(binary, key, prepareBinary(Buffer.concat(f.chunks), { fileName: f.fileName || undefined, mimeType: f.mimeType || undefined }));
    count++;
  }
  return binary;
}

function invalid(reason: string): AppError {
  return errors.validation([{ field: 'body', message: `the multipart/form-data body could not be read: ${reason}` }]);
}
