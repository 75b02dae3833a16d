import { binaryBuffer, DEFAULT_BINARY_KEY, NodeError, isPlainObject, prepareBinary, type Item, type NodeContext, type NodeDefinition } from '../../../nodes';
import { binaryCopy, decodeText, encodeText, perItem, unsupportedEncoding } from '../files.items';
import { deepCopy, getPath, setPath, unsetPath } from '../item-lists/paths';
import { collection, fixedOption, type Params } from '../item-lists/params';

/**
 * n8n's Move Binary Data (1, 1.1), the older way between files and fields:
 *
 * - binaryToJson (the default): the file in binary field `sourceKey` (default `data`) as text in
 *   `encoding` (a leading BOM dropped unless `stripBOM` is off); with `setAllData` (the default)
 *   parsed as JSON to become the item's fields, else put into `destinationKey` (a dotted path;
 *   parsed first with `jsonParse`; left as base64 with `keepAsBase64`). The file is
 *   removed from the item unless `keepSource`.
 * - jsonToBinary: with `convertAllData` (the default) the item's fields as JSON, else the value
 *   at `sourceKey` (as it is when it is text and `useRawData`, or already base64 with
 *   `dataIsBase64`, else as JSON), written in `encoding` (after a BOM with `addBOM`) to the binary
 *   field `destinationKey` with `mimeType` (default application/json) and `fileName`. The fields
 *   used go unless `keepSource`.
 *
 * As in n8n, an item without the file (or field) to move is left out.
 */

function unsupported(p: Params): { option: string; message: string } | undefined {
  return unsupportedEncoding(collection(p.options).encoding, 'options.encoding');
}

function binaryToJson(ctx: NodeContext, p: Params, i: number): Item | undefined {
  const item = ctx.items[i]!;
  const options = collection(p.options);
  const sourceKey = String(p.sourceKey || DEFAULT_BINARY_KEY);
  if (!item.binary?.[sourceKey]) return undefined;
  const bytes = binaryBuffer(item, sourceKey, i);
  const binary = options.keepSource === true ? binaryCopy(item.binary) : binaryCopy(item.binary, sourceKey);
  let json: Record<string, unknown>;
  if (p.setAllData !== false) {
    const text = decodeText(bytes, options.encoding, options.stripBOM !== false);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new NodeError(`The file in '${sourceKey}' is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!isPlainObject(parsed)) throw new NodeError(`The file in '${sourceKey}' holds no JSON object: set "Set All Data" off to put it into a field`);
    json = parsed;
  } else {
    let value: unknown;
    if (options.keepAsBase64 === true) value = bytes.toString('base64');
    else {
      const text = decodeText(bytes, options.encoding, options.stripBOM !== false);
      if (options.jsonParse === true) {
        try {
          value = JSON.parse(text);
        } catch (err) {
          throw new NodeError(`The file in '${sourceKey}' is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
        }
      } else value = text;
    }
    json = deepCopy(item.json);
    setPath(json, String(p.destinationKey || 'data'), value);
  }
  return binary ? { json, binary, pairedItem: { item: i } } : { json, pairedItem: { item: i } };
}

function jsonToBinary(ctx: NodeContext, p: Params, i: number): Item | undefined {
  const item = ctx.items[i]!;
  const options = collection(p.options);
  const all = p.convertAllData !== false;
  let bytes: Buffer;
  let json: Record<string, unknown>;
  if (all) {
    bytes = encodeText(JSON.stringify(item.json), options.encoding, options.addBOM === true);
    json = options.keepSource === true ? deepCopy(item.json) : {};
  } else {
    const sourceKey = String(p.sourceKey || 'data');
    const value = getPath(item.json, sourceKey);
    if (value === undefined) return undefined;
    if (options.dataIsBase64 === true) bytes = Buffer.from(String(value), 'base64');
    else {
      const text = options.useRawData === true && typeof value === 'string' ? value : JSON.stringify(value);
      bytes = encodeText(text, options.encoding, options.addBOM === true);
    }
    json = deepCopy(item.json);
    if (options.keepSource !== true) unsetPath(json, sourceKey);
  }
  const file = prepareBinary(bytes, {
    mimeType: String(options.mimeType || 'application/json'),
    fileName: (options.fileName as string | undefined) || undefined,
  });
  return { json, binary: { ...binaryCopy(item.binary), [String(p.destinationKey || DEFAULT_BINARY_KEY)]: file }, pairedItem: { item: i } };
}

export const moveBinaryData: NodeDefinition = {
  name: 'moveBinaryData',
  description: "n8n's Move Binary Data: a file's content into the item's fields (binaryToJson), or fields into a file (jsonToBinary).",
  n8n: { versions: [1, 1.1], unsupported },
  inProcess: true,
  invalid(p) {
    const mode = p.mode;
    if (typeof mode === 'string' && !mode.startsWith('=') && !['binaryToJson', 'jsonToBinary'].includes(mode)) {
      return { parameter: 'mode', message: 'must be one of binaryToJson, jsonToBinary' };
    }
    return undefined;
  },
  async execute(ctx) {
    const params = await ctx.parameters();
    const mode = fixedOption(ctx.node.parameters?.mode, 'binaryToJson');
    const out = await perItem(ctx, async (i) => (mode === 'jsonToBinary' ? jsonToBinary(ctx, params[i]!, i) : binaryToJson(ctx, params[i]!, i)));
    return { outputs: [out] };
  },
};
