import type * as Cheerio from 'cheerio';
import type * as HtmlToText from 'html-to-text';
import { ownEntry, setOwn } from '../../../../../kernel/names';
import { binaryBuffer, DEFAULT_BINARY_KEY, NodeError, versionOf, type Item, type NodeContext, type NodeDefinition } from '../../../nodes';
import { getPath } from '../item-lists/paths';
import { collection, entries, fixedOption, type Params } from '../item-lists/params';

/**
 * n8n's HTML node (1, 1.1, 1.2) and the older HTML Extract (`htmlExtract`, 1), on cheerio as n8n's:
 *
 * - generateHtmlTemplate (the default): each `{{ … }}` in the template `html` is replaced, for each
 *   item, by its value as text, as n8n writes it (a missing field gives "undefined"; the template
 *   needs no leading `=`); the rest is kept as text, so a `<script>` in it is only text here
 *   (expressions run in the expression sandbox, nothing else runs): `{ html }` per item.
 * - extractHtmlContent: the HTML in `dataPropertyName` (a string or a list of them; 1.1 on, a path
 *   in dot notation) read with CSS selectors: one item per HTML text, each extraction value under
 *   its key (an attribute, the inner HTML, the text, or a form field's value; all matches when
 *   `returnArray`); with `sourceData` binary, the HTML file in the binary field `dataPropertyName`
 *   (default `data`) instead. `trimValues` and `cleanUpText` apply only when set, as in n8n today. Text is
 *   the DOM's text in 1 and 1.1; from 1.2 the element's inner HTML through html-to-text with its
 *   defaults, as n8n's (headings upper-cased, link targets in brackets, lines wrapped at 80), the
 *   comma-separated `skipSelectors` left out.
 * - convertToHtmlTable: every item as a row of one table, its columns the keys of all items.
 */

const OPERATIONS = ['generateHtmlTemplate', 'extractHtmlContent', 'convertToHtmlTable'];
const RETURN_VALUES = ['attribute', 'html', 'text', 'value'];
const VALUE_DEFAULTS = { key: '', cssSelector: '', returnValue: 'text', attribute: '', skipSelectors: '', returnArray: false };

type Extracted = string | Record<string, string> | undefined;

function valuesOf(p: Params, version: number | 'extract'): Params[] {
  // HTML 1 and HTML Extract have no value until one is added; later versions start with one.
  const dflt = typeof version === 'number' && version > 1 ? [{}] : [];
  return entries(p.extractionValues, 'values', VALUE_DEFAULTS, dflt);
}

function unsupported(p: Params, version: number | 'extract'): { option: string; message: string } | undefined {
  const operation = version === 'extract' ? 'extractHtmlContent' : fixedOption(p.operation, 'generateHtmlTemplate');
  if (operation === 'generateHtmlTemplate' && p.html === undefined) {
    return {
      option: 'html',
      message: "the HTML template was left at n8n's sample page, which is not part of the export: paste the template into the node and export it again",
    };
  }
  return undefined;
}

/** 1.2's `skipSelectors`: a comma-separated list, each selector left out of the text. */
function skipped(list: unknown): { selector: string; format: 'skip' }[] {
  if (typeof list !== 'string' || list === '') return [];
  return list
    .split(',')
    .map((selector) => selector.trim())
    .filter((selector) => selector !== '')
    .map((selector) => ({ selector, format: 'skip' as const }));
}

// Loaded at the node's first run: together ~200 ms that every process start would pay otherwise.
let cheerio: typeof Cheerio | undefined;
let htmlToText: typeof HtmlToText | undefined;
const load = (html: string) => (cheerio ??= require('cheerio') as typeof Cheerio).load(html);
const convert = (html: string, options: HtmlToText.HtmlToTextOptions) => (htmlToText ??= require('html-to-text') as typeof HtmlToText).convert(html, options);

function extract($: ReturnType<Cheerio.CheerioAPI>, v: Params, version: number | 'extract'): Extracted {
  switch (fixedOption(v.returnValue, 'text')) {
    case 'attribute': {
      // Without a name cheerio returns every attribute of the first element, as in n8n.
      const value = v.attribute === '' || v.attribute === undefined ? $.attr() : $.attr(String(v.attribute));
      return value !== null && typeof value === 'object' ? { ...value } : value;
    }
    case 'html':
      return $.html() || undefined;
    case 'text':
      if (version === 'extract') return $.text();
      if (version <= 1.1) return $.text() || undefined;
      return convert($.html() || '', { selectors: skipped(v.skipSelectors) });
    case 'value': {
      const value = $.val();
      return Array.isArray(value) ? value.join(',') : value;
    }
    default:
      throw new NodeError(`The return value "${String(v.returnValue)}" is not known`);
  }
}

function finish(value: Extracted, options: Params, version: number | 'extract'): Extracted {
  if (typeof value !== 'string') return value;
  let out = value;
  // HTML Extract trims unless told not to; the HTML node only when told to.
  if (version === 'extract' ? options.trimValues !== false : options.trimValues === true) out = out.trim();
  if (version !== 'extract' && options.cleanUpText === true) {
    out = out
      .replace(/^\s+|\s+$/g, '')
      .replace(/(\r\n|\n|\r)/gm, '')
      .replace(/\s+/g, ' ');
  }
  return out;
}

async function extractHtml(ctx: NodeContext, version: number | 'extract'): Promise<Item[]> {
  const params = await ctx.parameters();
  const out: Item[] = [];
  for (let i = 0; i < ctx.items.length; i++) {
    try {
      const p = params[i] ?? {};
      const property = String(p.dataPropertyName ?? 'data');
      let found: unknown;
      if (fixedOption(p.sourceData, 'json') === 'binary') {
        // The HTML file in the binary field named by dataPropertyName, read as UTF-8 text.
        found = binaryBuffer(ctx.items[i]!, property || DEFAULT_BINARY_KEY, i).toString('utf8');
      } else {
        const json = ctx.items[i]!.json;
        found = version === 'extract' || version === 1 ? ownEntry(json, property) : getPath(json, property);
        if (found === undefined) throw new NodeError(`No property named "${property}" exists!`, { itemIndex: i });
      }
      const options = collection(p.options);
      for (const source of Array.isArray(found) ? found : [found]) {
        const $ = load(typeof source === 'string' ? source : String(source));
        const result: Record<string, unknown> = {};
        for (const v of valuesOf(p, version)) {
          const selected = $(String(v.cssSelector));
          const key = String(v.key);
          if (v.returnArray === true) {
            const list: unknown[] = [];
            selected.each((_, el) => void list.push(finish(extract($(el), v, version), options, version) ?? null));
            setOwn(result, key, list);
          } else {
            const value = finish(extract(selected, v, version), options, version);
            if (value !== undefined) setOwn(result, key, value);
          }
        }
        ctx.checkOutput(out.length + 1);
        out.push({ json: result, pairedItem: { item: i } });
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (!ctx.continueOnFail) throw err instanceof NodeError ? err : new NodeError(message, { itemIndex: i });
      out.push({ json: { error: message }, pairedItem: { item: i } });
    }
  }
  return out;
}

function capitalizeHeader(header: string, capitalize: boolean): string {
  if (!capitalize) return header;
  return header
    .split('_')
    .filter((word) => word)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join(' ');
}

const TABLE_STYLE = "style='border-spacing:0; font-family:helvetica,arial,sans-serif'";
const HEADER_STYLE = "style='margin:0; padding:7px 20px 7px 0px; border-bottom:1px solid #eee; text-align:left; color:#888; font-weight:normal'";
const CELL_STYLE = "style='margin:0; padding:7px 20px 7px 0px; border-bottom:1px solid #eee'";

async function htmlTable(ctx: NodeContext): Promise<Item[]> {
  const params = await ctx.parameters();
  const options = collection(params[0]?.options);
  const custom = options.customStyling === true;
  const headers = [...new Set(ctx.items.flatMap((item) => Object.keys(item.json)))];
  const text = (v: unknown) => (v === undefined || v === null || v === '' ? '' : String(v));
  let table = `<table ${custom ? '' : TABLE_STYLE} ${text(options.tableAttributes)}>`;
  if (options.caption) table += `<caption>${String(options.caption)}</caption>`;
  table += `<thead ${custom ? '' : HEADER_STYLE} ${text(options.headerAttributes)}>`;
  table += `<tr>${headers.map((h) => `<th>${capitalizeHeader(h, options.capitalize === true)}</th>`).join('')}</tr>`;
  table += '</thead><tbody>';
  ctx.items.forEach((item, i) => {
    // Row and cell attributes are read per item (they may use its fields).
    const own = collection(params[i]?.options);
    table += `<tr  ${text(own.rowAttributes)}>`;
    table += headers
      .map((h) => {
        const value = ownEntry(item.json, h);
        const cell = typeof value === 'boolean' ? `<input type="checkbox" ${value ? 'checked="checked"' : ''}/>` : String(value);
        return `<td ${custom ? '' : CELL_STYLE} ${text(own.cellAttributes)}>${cell}</td>`;
      })
      .join('');
    table += '</tr>';
  });
  table += '</tbody></table>';
  return [{ json: { table }, pairedItem: { item: 0 } }];
}

async function htmlTemplates(ctx: NodeContext): Promise<Item[]> {
  const params = await ctx.parameters();
  return ctx.items.map((_, i) => {
    const html = params[i]?.html;
    return { json: { html: typeof html === 'string' ? html : String(html ?? '') }, pairedItem: { item: i } };
  });
}

export const html: NodeDefinition = {
  name: 'html',
  description: "n8n's HTML: generates HTML from a template, extracts values from HTML with CSS selectors, or turns the items into an HTML table.",
  n8n: { versions: [1, 1.1, 1.2], unsupported, templates: ['html'] },
  inProcess: true,
  invalid(p) {
    const operation = p.operation;
    if (typeof operation === 'string' && !OPERATIONS.includes(operation)) return { parameter: 'operation', message: `must be one of ${OPERATIONS.join(', ')}` };
    for (const v of entries(p.extractionValues, 'values', VALUE_DEFAULTS)) {
      if (typeof v.returnValue === 'string' && !v.returnValue.startsWith('=') && !RETURN_VALUES.includes(v.returnValue)) {
        return { parameter: 'extractionValues.values.returnValue', message: `must be one of ${RETURN_VALUES.join(', ')}` };
      }
    }
    return undefined;
  },
  async execute(ctx) {
    const version = versionOf(ctx.node);
    const operation = fixedOption(ctx.node.parameters?.operation, 'generateHtmlTemplate');
    if (operation === 'convertToHtmlTable' && ctx.items.length) return { outputs: [await htmlTable(ctx)] };
    if (operation === 'generateHtmlTemplate') return { outputs: [await htmlTemplates(ctx)] };
    if (operation === 'extractHtmlContent') return { outputs: [await extractHtml(ctx, version)] };
    return { outputs: [[]] };
  },
};

export const htmlExtract: NodeDefinition = {
  name: 'htmlExtract',
  description: "n8n's HTML Extract (the HTML node's extraction before HTML 1): values from HTML with CSS selectors.",
  n8n: { versions: [1], unsupported: (p) => unsupported(p, 'extract') },
  inProcess: true,
  async execute(ctx) {
    return { outputs: [await extractHtml(ctx, 'extract')] };
  },
};

export const htmlNodes: NodeDefinition[] = [html, htmlExtract];
