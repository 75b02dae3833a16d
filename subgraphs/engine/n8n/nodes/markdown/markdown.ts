import type * as HtmlMarkdown from 'node-html-markdown';
import type * as Showdown from 'showdown';
import { NodeError, isPlainObject, type Item, type NodeDefinition } from '../../../nodes';
import { deepCopy, setPath } from '../item-lists/paths';
import { collection, fixedOption, type Params } from '../item-lists/params';

// Loaded at the node's first run rather than at every process start.
let showdownModule: typeof Showdown | undefined;
let htmlMarkdownModule: typeof HtmlMarkdown | undefined;
const showdown = () => (showdownModule ??= require('showdown') as typeof Showdown);
const htmlMarkdown = () => (htmlMarkdownModule ??= require('node-html-markdown') as typeof HtmlMarkdown);
/**
 * n8n's Markdown node (1) on the libraries n8n's own node uses: `mode` htmlToMarkdown (the
 * default) converts the `html` parameter with node-html-markdown, markdownToHtml converts
 * `markdown` with showdown; the result goes into a copy of the item at `destinationKey` (default
 * `data`, dot notation for nested fields). The options are the libraries' own, as n8n's editor
 * names them; only those are passed on. n8n reads the mode from the first item, everything else
 * per item. As in n8n, with onError set to continue a failed item becomes `{ error }`.
 */

const MODES = ['htmlToMarkdown', 'markdownToHtml'];

/** showdown's options n8n's editor offers (Converter.setOption). */
const SHOWDOWN_OPTIONS = new Set([
  'openLinksInNewWindow',
  'simplifiedAutoLink',
  'backslashEscapesHTMLTags',
  'completeHTMLDocument',
  'customizedHeaderId',
  'emoji',
  'encodeEmails',
  'excludeTrailingPunctuationFromURLs',
  'ghCodeBlocks',
  'ghCompatibleHeaderId',
  'ghMentionsLink',
  'ghMentions',
  'tasklists',
  'headerLevelStart',
  'requireSpaceBeforeHeadingText',
  'literalMidWordAsterisks',
  'literalMidWordUnderscores',
  'noHeaderId',
  'parseImgDimensions',
  'prefixHeaderId',
  'rawHeaderId',
  'rawPrefixHeaderId',
  'simpleLineBreaks',
  'smartIndentationFix',
  'disableForced4SpacesIndentedSublists',
  'splitAdjacentBlockquotes',
  'strikethrough',
  'tablesHeaderId',
  'tables',
]);

/** node-html-markdown's plain options n8n's editor offers; the patterns and lists are built below. */
const TRANSLATOR_OPTIONS = new Set([
  'bulletMarker',
  'codeFence',
  'emDelimiter',
  'keepDataImages',
  'maxConsecutiveNewlines',
  'useLinkReferenceDefinitions',
  'strongDelimiter',
  'codeBlockStyle',
]);

const text = (v: unknown): string => (v === undefined || v === null ? '' : String(v));
const list = (v: unknown): string[] | undefined =>
  v
    ? text(v)
        .split(',')
        .map((e) => e.trim())
    : undefined;

/** A fixedCollection holding one `{ pattern, replacement }`, as node-html-markdown's pair (n8n passes the pattern as text). */
function pair(value: unknown): [string, string] | undefined {
  const v = collection(collection(value).value);
  return Object.keys(v).length ? [text(v.pattern), text(v.replacement)] : undefined;
}

export function translatorOptions(options: Params): Params {
  const all: Params = {};
  for (const [k, v] of Object.entries(options)) if (TRANSLATOR_OPTIONS.has(k)) all[k] = v;
  const replacements = collection(options.textReplace).values;
  all.textReplace =
    Array.isArray(replacements) && replacements.length ? replacements.map((r) => [text(collection(r).pattern), text(collection(r).replacement)]) : undefined;
  all.lineStartEscape = pair(options.lineStartEscape);
  all.globalEscape = pair(options.globalEscape);
  all.ignore = list(options.ignore);
  all.blockElements = list(options.blockElements);
  // Only the options that are set (truthy) are passed, as n8n does.
  const out: Params = {};
  for (const [k, v] of Object.entries(all)) if (v) out[k] = v;
  return out;
}

export function showdownHtml(markdown: string, options: Params): string {
  const converter = new (showdown().Converter)();
  for (const [k, v] of Object.entries(options)) if (SHOWDOWN_OPTIONS.has(k)) converter.setOption(k, v);
  return converter.makeHtml(markdown);
}

export const markdown: NodeDefinition = {
  name: 'markdown',
  description: "n8n's Markdown: converts HTML to Markdown (node-html-markdown) or Markdown to HTML (showdown) into a field of each item.",
  n8n: { versions: [1] },
  inProcess: true,
  invalid(p) {
    if (typeof p.mode === 'string' && !p.mode.startsWith('=') && !MODES.includes(p.mode))
      return { parameter: 'mode', message: `must be one of ${MODES.join(', ')}` };
    return undefined;
  },
  async execute(ctx) {
    const params = await ctx.parameters();
    const mode = fixedOption(params[0]?.mode, 'htmlToMarkdown');
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      try {
        // An unknown mode converts nothing, and the item is left out (as in n8n).
        if (!MODES.includes(mode)) continue;
        const p = params[i] ?? {};
        const options = collection(p.options);
        const converted =
          mode === 'markdownToHtml'
            ? showdownHtml(text(p.markdown), options)
            : htmlMarkdown().NodeHtmlMarkdown.translate(text(p.html), translatorOptions(options));
        const json = deepCopy(ctx.items[i]!.json);
        setPath(json, text(p.destinationKey ?? 'data'), converted);
        out.push({ json: isPlainObject(json) ? json : {}, pairedItem: { item: i } });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (!ctx.continueOnFail) throw err instanceof NodeError ? err : new NodeError(message, { itemIndex: i });
        out.push({ json: { error: message }, pairedItem: { item: i } });
      }
    }
    return { outputs: [out] };
  },
};
