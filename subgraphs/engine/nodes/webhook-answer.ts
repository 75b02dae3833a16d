import { NodeError, isPlainObject, type LastNodeData, type ResponseMode, type WebhookAnswerOptions } from './types';

/**
 * How n8n's Webhook trigger and a Wait node's resume URL answer their caller, read from the
 * node's parameters as n8n writes them. `responseMode`: onReceived (at once), lastNode (the last
 * node's output once the workflow has run) or responseNode (the first Respond to Webhook's
 * answer). The status is `responseCode` (Webhook 1 and 1.1, Wait) or, from Webhook 2 on,
 * `options.responseCode.values` ({responseCode} or {responseCode: 'customCode', customCode}).
 * onReceived answers `options.responseData` (a text) or, with `options.noResponseBody`, nothing.
 * lastNode answers what `responseData` says: firstEntryJson (the first item's json, or its
 * `options.responsePropertyName` field; `options.responseContentType` sends it as that type),
 * firstEntryBinary (the first item's file `responseBinaryPropertyName`, default data),
 * allEntries (every item's json, a list) or noData (no body). Headers are
 * `options.responseHeaders.entries` in every mode.
 */

export const LAST_NODE_DATA: readonly LastNodeData[] = ['firstEntryJson', 'firstEntryBinary', 'allEntries', 'noData'];
export const RESPONSE_MODES: readonly ResponseMode[] = ['onReceived', 'lastNode', 'responseNode'];

const HEADER = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/** A value n8n would have evaluated as an expression (`={{ … }}`): not read here. */
const isExpression = (v: unknown) => typeof v === 'string' && v.startsWith('=');

function statusOf(value: unknown): number {
  const code = Number(value);
  if (!Number.isInteger(code) || code < 100 || code > 599)
    throw new NodeError(`The response code must be an HTTP status from 100 to 599, not ${String(value)}`);
  return code;
}

/** The answer options of a Webhook or Wait node's parameters; a NodeError names a value no HTTP answer can carry. */
export function webhookAnswerOptions(p: Record<string, unknown>): WebhookAnswerOptions {
  const o: Record<string, unknown> = isPlainObject(p.options) ? p.options : {};
  const out: WebhookAnswerOptions = {};
  if (typeof p.responseMode === 'string' && (RESPONSE_MODES as readonly string[]).includes(p.responseMode)) out.responseMode = p.responseMode as ResponseMode;

  if (p.responseCode !== undefined && p.responseCode !== '' && p.responseCode !== null && !isExpression(p.responseCode))
    out.responseCode = statusOf(p.responseCode);
  else if (isPlainObject(o.responseCode) && isPlainObject(o.responseCode.values)) {
    const { responseCode, customCode } = o.responseCode.values;
    // n8n takes a custom code whenever one is set, and the selected one otherwise.
    const code = customCode !== undefined && customCode !== null && customCode !== '' && customCode !== 0 ? customCode : responseCode;
    if (code !== undefined && code !== 'customCode' && !isExpression(code)) out.responseCode = statusOf(code);
  } else if (typeof o.responseCode === 'number' || (typeof o.responseCode === 'string' && o.responseCode !== '' && !isExpression(o.responseCode)))
    out.responseCode = statusOf(o.responseCode);

  if (typeof o.responseData === 'string' && o.responseData !== '') out.responseData = o.responseData;
  if (o.noResponseBody === true) out.noResponseBody = true;
  const entries = isPlainObject(o.responseHeaders) ? o.responseHeaders.entries : undefined;
  if (Array.isArray(entries)) {
    const headers: Record<string, string> = {};
    for (const e of entries as { name?: unknown; value?: unknown }[]) {
      const name = typeof e?.name === 'string' ? e.name.trim().toLowerCase() : '';
      if (!name) continue;
      if (!HEADER.test(name)) throw new NodeError(`The response header name "${name}" is not a valid HTTP header name`);
      const value = String(e.value ?? '');
      if (/[\r\n]/.test(value)) throw new NodeError(`The response header "${name}" must be one line`);
      headers[name] = value;
    }
    if (Object.keys(headers).length) out.responseHeaders = headers;
  }
  if (typeof p.responseData === 'string' && (LAST_NODE_DATA as readonly string[]).includes(p.responseData)) out.lastNodeData = p.responseData as LastNodeData;
  if (typeof o.responsePropertyName === 'string' && o.responsePropertyName.trim() && !isExpression(o.responsePropertyName))
    out.responsePropertyName = o.responsePropertyName.trim();
  if (typeof o.responseContentType === 'string' && o.responseContentType.trim() && !isExpression(o.responseContentType)) {
    if (/[\r\n]/.test(o.responseContentType)) throw new NodeError('The response content type must be one line');
    out.responseContentType = o.responseContentType.trim();
  }
  if (typeof p.responseBinaryPropertyName === 'string' && p.responseBinaryPropertyName.trim() && !isExpression(p.responseBinaryPropertyName))
    out.responseBinaryPropertyName = p.responseBinaryPropertyName.trim();
  return out;
}
