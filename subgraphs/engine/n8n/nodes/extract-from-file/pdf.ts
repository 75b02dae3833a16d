import { NodeError } from '../../../nodes';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs', { with: { 'resolution-mode': 'import' } });

/** pdfjs is an ES module of several megabytes: imported at the first PDF, not at every start. */
let pdfjsModule: Promise<PdfJs> | undefined;
const pdfjs = () => (pdfjsModule ??= import('pdfjs-dist/legacy/build/pdf.mjs'));

export interface PdfReadOptions {
  /** The password of an encrypted PDF. */
  password?: string;
  /** Pages' texts joined into one string (the default), else a list of one text per page. */
  joinPages?: boolean;
  /** Pages read at most from the first; 0 or unset reads them all. */
  maxPages?: number;
}

/**
 * A PDF's text and description as n8n's PDF readers give them: `numpages` (the document's
 * pages), `numrender` (the pages read), `info` (the document information dictionary as pdfjs
 * reads it: PDFFormatVersion, Title, Author, …), `metadata` (its XMP metadata, when it has any),
 * `text` and `version` (pdfjs's). A page's text is its text runs in order, a line break where a
 * line ends; pages are joined by a blank line.
 */
export async function readPdf(bytes: Buffer, options: PdfReadOptions = {}): Promise<Record<string, unknown>> {
  const lib = await pdfjs();
  // No eval of font programs, no fonts loaded into the process: text extraction needs neither.
  const task = lib.getDocument({
    data: new Uint8Array(bytes),
    password: options.password || undefined,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  });
  let document: Awaited<typeof task.promise>;
  try {
    document = await task.promise;
  } catch (err) {
    await task.destroy();
    const name = err instanceof Error ? err.name : '';
    const code = (err as { code?: number } | null)?.code;
    if (name === 'PasswordException') {
      throw new NodeError(
        code === lib.PasswordResponses.INCORRECT_PASSWORD
          ? 'The PDF could not be opened: the password is incorrect'
          : 'The PDF is password protected: give its password (options.password)',
      );
    }
    throw new NodeError(`The file is not a readable PDF: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    const numpages = document.numPages;
    const max = options.maxPages && options.maxPages > 0 ? Math.floor(options.maxPages) : numpages;
    const numrender = Math.min(max, numpages);
    const pages: string[] = [];
    for (let n = 1; n <= numrender; n++) {
      const page = await document.getPage(n);
      const content = await page.getTextContent();
      pages.push(content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join(''));
      page.cleanup();
    }
    const { info, metadata } = await document.getMetadata();
    const result: Record<string, unknown> = {
      numpages,
      numrender,
      // A JSON copy: pdfjs's objects (names, dates) become plain values.
      info: JSON.parse(JSON.stringify(info ?? {})) as unknown,
    };
    if (metadata) result.metadata = JSON.parse(JSON.stringify(metadata.getAll())) as unknown;
    result.text = options.joinPages === false ? pages : pages.join('\n\n');
    result.version = lib.version;
    return result;
  } finally {
    await document.destroy();
  }
}
