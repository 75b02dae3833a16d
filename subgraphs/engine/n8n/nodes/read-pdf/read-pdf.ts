import { binaryBuffer, DEFAULT_BINARY_KEY, type NodeDefinition } from '../../../nodes';
import { readPdf } from '../extract-from-file/pdf';
import { perItem } from '../files.items';

/**
 * n8n's legacy Read PDF (1), which Extract From File's `pdf` replaced and older exports still
 * carry: each item's PDF in `binaryPropertyName` (default `data`) read as Extract From File reads
 * it (numpages, numrender, info, metadata, text, version) into the item's json, every page, its
 * pages joined; the item keeps its files. With `encrypted` on, `password` opens the file.
 */
export const readPDF: NodeDefinition = {
  name: 'readPDF',
  description: "n8n's legacy Read PDF: a PDF file's text and description as the item's fields.",
  n8n: { versions: [1] },
  inProcess: true,
  async execute(ctx) {
    const params = await ctx.parameters();
    const out = await perItem(ctx, async (i) => {
      const p = params[i]!;
      const item = ctx.items[i]!;
      const bytes = binaryBuffer(item, String(p.binaryPropertyName || DEFAULT_BINARY_KEY), i);
      const password = p.encrypted === true && typeof p.password === 'string' ? p.password : undefined;
      const json = await readPdf(bytes, { password });
      return item.binary ? { json, binary: item.binary, pairedItem: { item: i } } : { json, pairedItem: { item: i } };
    });
    return { outputs: [out] };
  },
};
