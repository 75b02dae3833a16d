import path from 'node:path';
import { binaryBuffer, DEFAULT_BINARY_KEY, NodeError, prepareBinary, versionOf, type Item, type NodeContext, type NodeDefinition } from '../../../nodes';
import { perItem } from '../files.items';
import { collection, fixedOption, type Params } from '../item-lists/params';
import { findFiles, readInFolder, writeInFolder } from './folder';

/**
 * n8n's Read/Write Files from Disk (1, 1.1), inside the files folder only (FILES_DIR, folder.ts):
 *
 * - read (the default): the files `fileSelector` names (a path relative to the folder, or a
 *   pattern with `*`, `?` or `[…]` in its file name part; `**` and patterns in folder names are
 *   refused), one item per file: its description as json (mimeType, fileType, fileName,
 *   fileExtension, fileSize) and the file in `options.dataPropertyName` (default `data`, its
 *   `directory` relative to the folder); options fileName, fileExtension, mimeType override what
 *   is guessed. Nothing found gives no item in 1 and fails from 1.1, as in n8n.
 * - write: the file in binary field `dataPropertyName` to `fileName` (missing folders are
 *   made; `options.append` appends); the item goes on with `fileName` added.
 *
 * A path out of the folder fails the node with "outside the files folder".
 */

function directoryOf(relative: string): string | undefined {
  const dir = path.dirname(relative);
  return dir === '.' ? undefined : dir.split(path.sep).join('/');
}

async function read(ctx: NodeContext, p: Params, i: number, version: number): Promise<Item[]> {
  const selector = String(p.fileSelector ?? '');
  if (selector.includes('**'))
    throw new NodeError('The pattern "**" is not supported: name the folder and match the file name with * or ?', { reason: 'pattern_in_folder' });
  const options = collection(p.options);
  const files = await findFiles(ctx.services.filesDir, selector);
  // 1 reads nothing quietly; later versions say so.
  if (!files.length && version > 1) throw new NodeError(`No file(s) found: no file matching the selector "${selector}" found`, { reason: 'not_found' });
  ctx.checkOutput(files.length);
  const out: Item[] = [];
  for (const file of files) {
    const bytes = await readInFolder(file);
    const directory = directoryOf(file.relative);
    const binary = prepareBinary(bytes, {
      fileName: String(options.fileName || path.basename(file.relative)),
      mimeType: (options.mimeType as string | undefined) || undefined,
      ...(directory ? { directory } : {}),
    });
    if (options.fileExtension) binary.fileExtension = String(options.fileExtension);
    const { mimeType, fileType, fileName, fileExtension, fileSize } = binary;
    out.push({
      json: JSON.parse(JSON.stringify({ mimeType, fileType, fileName, fileExtension, fileSize })) as Record<string, unknown>,
      binary: { [String(options.dataPropertyName || DEFAULT_BINARY_KEY)]: binary },
      pairedItem: { item: i },
    });
  }
  return out;
}

async function write(ctx: NodeContext, p: Params, i: number): Promise<Item> {
  const item = ctx.items[i]!;
  const fileName = String(p.fileName ?? '');
  const bytes = binaryBuffer(item, String(p.dataPropertyName || DEFAULT_BINARY_KEY), i);
  await writeInFolder(ctx.services.filesDir, fileName, bytes, collection(p.options).append === true);
  const out: Item = { json: { ...item.json, fileName }, pairedItem: { item: i } };
  if (item.binary) out.binary = item.binary;
  return out;
}

export const readWriteFile: NodeDefinition = {
  name: 'readWriteFile',
  description: "n8n's Read/Write Files from Disk: reads files of the platform's files folder into items, or writes an item's file there.",
  n8n: { versions: [1, 1.1] },
  invalid(p) {
    const operation = p.operation;
    if (typeof operation === 'string' && !operation.startsWith('=') && !['read', 'write'].includes(operation)) {
      return { parameter: 'operation', message: 'must be one of read, write' };
    }
    return undefined;
  },
  missing(p) {
    const operation = fixedOption(p.operation, 'read');
    if (operation === 'read' && !p.fileSelector) return ['fileSelector'];
    if (operation === 'write' && !p.fileName) return ['fileName'];
    return [];
  },
  async execute(ctx) {
    const params = await ctx.parameters();
    const operation = fixedOption(ctx.node.parameters?.operation, 'read');
    const version = versionOf(ctx.node);
    const out = await perItem(ctx, (i) => (operation === 'write' ? write(ctx, params[i]!, i) : read(ctx, params[i]!, i, version)));
    return { outputs: [out] };
  },
};
