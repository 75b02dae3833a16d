import { NodeError, type Item, type NodeDefinition } from '../../../nodes';
import type { BinaryData } from '../../../expressions';
import { spreadsheetItem } from '../convert-to-file/convert-to-file';
import type { SheetFormat } from '../convert-to-file/spreadsheet';
import { sheetItems, unsupportedSheetOptions } from '../extract-from-file/extract-from-file';
import type { SheetReadFormat } from '../extract-from-file/spreadsheet';
import { isCompoundFile, isZip } from '../files.items';
import { collection, fixedOption, type Params } from '../item-lists/params';

/**
 * n8n's Spreadsheet File (1, 2), the node Convert To File and Extract From File replaced, on
 * their code:
 *
 * - fromFile (the default): each item's file in `binaryPropertyName` (default `data`) read as
 *   Extract From File reads it, one item per row; the format from the file's extension or MIME
 *   type (2: `fileFormat`, default autodetect).
 * - toFile: all items as one file as Convert To File writes it, `fileFormat` xls (n8n's
 *   default), xlsx, csv, ods, html or rtf.
 */

const FORMATS = ['csv', 'html', 'xlsx', 'ods', 'rtf', 'xls'];

function unsupported(p: Params): { option: string; message: string } | undefined {
  return unsupportedSheetOptions(collection(p.options));
}

/**
 * The format of a file to read: from its first bytes where they decide (a Compound File is XLS, a
 * ZIP archive XLSX or ODS), else its extension, else its MIME type. A file named or typed as XLS
 * that is not a Compound File is what such files often are (a CSV a browser sent as
 * `application/vnd.ms-excel`, an HTML table saved as .xls): read as HTML when it starts with `<`,
 * else as CSV.
 */
function detected(binary: BinaryData | undefined): SheetReadFormat {
  const ext = binary?.fileExtension?.toLowerCase() ?? binary?.fileName?.split('.').pop()?.toLowerCase();
  const mime = binary?.mimeType ?? '';
  // 12 base64 characters: the first 9 bytes (a file kept in the store, not loaded, has none here).
  const head = Buffer.from((binary?.data ?? '').slice(0, 12), 'base64');
  if (isCompoundFile(head)) return 'xls';
  if (isZip(head)) return ext === 'ods' || mime.includes('opendocument') ? 'ods' : 'xlsx';
  if (head.length && (ext === 'xls' || mime === 'application/vnd.ms-excel')) return head.toString('latin1').trimStart().startsWith('<') ? 'html' : 'csv';
  if (ext === 'csv' || mime === 'text/csv') return 'csv';
  if (ext === 'xlsx' || mime.includes('spreadsheetml')) return 'xlsx';
  if (ext === 'xls' || mime === 'application/vnd.ms-excel') return 'xls';
  if (ext === 'rtf' || mime === 'application/rtf' || mime === 'text/rtf') return 'rtf';
  if (ext === 'ods' || mime === 'application/vnd.oasis.opendocument.spreadsheet') return 'ods';
  if (ext === 'html' || ext === 'htm' || mime === 'text/html') return 'html';
  throw new NodeError(`The file's format (${ext ?? mime}) cannot be read: only CSV, XLSX, XLS, ODS, HTML and RTF files are supported`);
}

export const spreadsheetFile: NodeDefinition = {
  name: 'spreadsheetFile',
  description: "n8n's Spreadsheet File: reads a CSV, XLSX, XLS, ODS, HTML or RTF table file into items, or writes the items as one.",
  n8n: { versions: [1, 2], unsupported },
  inProcess: true,
  invalid(p) {
    const operation = p.operation;
    if (typeof operation === 'string' && !operation.startsWith('=') && !['fromFile', 'toFile'].includes(operation)) {
      return { parameter: 'operation', message: 'must be one of fromFile, toFile' };
    }
    const format = p.fileFormat;
    if (typeof format === 'string' && !format.startsWith('=') && ![...FORMATS, 'autodetect'].includes(format)) {
      return { parameter: 'fileFormat', message: `must be one of ${FORMATS.join(', ')}` };
    }
    return undefined;
  },
  async execute(ctx) {
    const operation = fixedOption(ctx.node.parameters?.operation, 'fromFile');
    if (operation === 'toFile') {
      if (!ctx.items.length) return { outputs: [[]] };
      const [p] = await ctx.parameters([0]);
      const item: Item = await spreadsheetItem(ctx.items, fixedOption(p!.fileFormat, 'xls') as SheetFormat, p!, 'spreadsheet');
      return { outputs: [[item]] };
    }
    const rows = await sheetItems(ctx, (p, i) => {
      const chosen = fixedOption(p.fileFormat, 'autodetect');
      if (chosen !== 'autodetect') {
        if (!FORMATS.includes(chosen)) throw new NodeError(`Reading ${chosen.toUpperCase()} files is not supported`);
        return chosen as SheetReadFormat;
      }
      return detected(ctx.items[i]!.binary?.[String(p.binaryPropertyName || 'data')]);
    });
    return { outputs: [rows] };
  },
};
