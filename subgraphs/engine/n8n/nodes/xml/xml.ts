import type * as Xml2js from 'xml2js';
import { NodeError, isPlainObject, type Item, type NodeDefinition } from '../../../nodes';
import { collection, fixedOption, type Params } from '../item-lists/params';

/** xml2js, loaded at the node's first run rather than at every process start. */
let xml2jsModule: typeof Xml2js | undefined;
const xml2js = () => (xml2jsModule ??= require('xml2js') as typeof Xml2js);
/**
 * n8n's XML node (1) on xml2js, the library n8n's own node uses, so that options and output agree:
 * `mode` xmlToJson (the default) parses the text in `dataPropertyName` (default `data`) of each
 * item into the item's new json (attributes merged, no arrays for single children, unless the
 * options say otherwise); jsonToxml writes each item's json as XML into `{ [dataPropertyName]: xml }`.
 * n8n reads the mode, the property and the options from the first item. Only xml2js's options
 * that n8n's editor offers are passed on (an export cannot hand xml2js anything else). As in
 * n8n, with onError set to continue an item that fails is left out of the output.
 */

const MODES = ['xmlToJson', 'jsonToxml'];

/** The options of each mode, with the type n8n's editor gives them. */
const PARSER_OPTIONS: Record<string, 'string' | 'boolean'> = {
  attrkey: 'string',
  charkey: 'string',
  explicitArray: 'boolean',
  explicitRoot: 'boolean',
  ignoreAttrs: 'boolean',
  mergeAttrs: 'boolean',
  normalize: 'boolean',
  normalizeTags: 'boolean',
  trim: 'boolean',
};
const BUILDER_OPTIONS: Record<string, 'string' | 'boolean'> = {
  allowSurrogateChars: 'boolean',
  attrkey: 'string',
  cdata: 'boolean',
  charkey: 'string',
  headless: 'boolean',
  rootName: 'string',
};

function pick(options: Params, known: Record<string, 'string' | 'boolean'>): Params {
  const out: Params = {};
  for (const [name, type] of Object.entries(known)) {
    const v = options[name];
    if (v === undefined || v === null) continue;
    out[name] = type === 'boolean' ? v === true || v === 'true' : String(v);
  }
  return out;
}

export const xml: NodeDefinition = {
  name: 'xml',
  description: "n8n's XML: converts a field's XML text to JSON (xmlToJson), or each item's JSON to XML (jsonToxml).",
  n8n: { versions: [1] },
  inProcess: true,
  invalid(p) {
    const mode = p.mode;
    if (typeof mode === 'string' && !mode.startsWith('=') && !MODES.includes(mode)) return { parameter: 'mode', message: `must be one of ${MODES.join(', ')}` };
    return undefined;
  },
  async execute(ctx) {
    const [p] = await ctx.parameters([0]);
    const mode = fixedOption(p!.mode, 'xmlToJson');
    const property = String(p!.dataPropertyName ?? 'data');
    const options = collection(p!.options);
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      try {
        if (mode === 'xmlToJson') {
          const value = ctx.items[i]!.json[property];
          if (value === undefined) throw new NodeError(`No json property "${property}" does not exists on item!`, { itemIndex: i });
          // n8n's defaults first, the options over them.
          const parser = new (xml2js().Parser)({ mergeAttrs: true, explicitArray: false, ...pick(options, PARSER_OPTIONS) });
          const json: unknown = await parser.parseStringPromise(value as string);
          // A JSON copy: an element named __proto__ becomes a plain key, not the object's prototype.
          const copy: unknown = JSON.parse(JSON.stringify(json ?? {}));
          out.push({ json: isPlainObject(copy) ? copy : {}, pairedItem: { item: i } });
        } else if (mode === 'jsonToxml') {
          const builder = new (xml2js().Builder)(pick(options, BUILDER_OPTIONS));
          out.push({ json: { [property]: builder.buildObject(ctx.items[i]!.json) }, pairedItem: { item: i } });
        } else {
          throw new NodeError(`The operation "${mode}" is not known!`, { itemIndex: i });
        }
      } catch (err) {
        if (ctx.continueOnFail) continue;
        if (err instanceof NodeError) throw err;
        throw new NodeError(err instanceof Error ? err.message : String(err), { itemIndex: i });
      }
    }
    return { outputs: [out] };
  },
};
