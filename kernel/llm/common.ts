import type * as GptTokenizer from 'gpt-tokenizer';
import { errors } from '../errors';
import type { ChatMessage } from './types';

/** Helpers both providers share: model resolution and token counting. */

/** Default per-call time limit (CompletionRequest.timeoutMs). */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** The model for a requested name: undefined → the default (first of LLM_MODELS); unknown → 400. */
export function resolveModelIn(models: readonly string[], model?: string): string {
  if (model === undefined || model === null) return models[0];
  if (typeof model === 'string' && models.includes(model)) return model;
  throw errors.validation([{ field: 'model', message: `must be one of ${models.join(', ')}` }]);
}

// gpt-tokenizer (o200k_base, the GPT-4o/GPT-5 encoding) holds ~90 MB once its tables are loaded
// (~300 ms): loaded at the first count, so a process that never calls a model never holds them.
let tokenizer: typeof GptTokenizer | undefined;
function loadTokenizer(): typeof GptTokenizer {
  return (tokenizer ??= require('gpt-tokenizer') as typeof GptTokenizer);
}

/** Special-token text such as `<|endoftext|>` in user input is counted as plain text, never thrown on. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Tokens of a text (o200k_base; an estimate for other models' tokenizers). Counted per line with each
 * line's count cached, since prompts of one template share most lines. The sum is exact because the
 * encoding's pre-split pieces never span a newline followed by anything but whitespace or '/'.
 */
export function countTokens(text: string): number {
  if (!text) return 0;
  let total = 0;
  let start = 0;
  for (let nl = text.indexOf('\n'); nl !== -1 && nl + 1 < text.length; nl = text.indexOf('\n', nl + 1)) {
    if (JOINS_A_NEWLINE.test(text[nl + 1]!)) continue;
    total += countLine(text.slice(start, nl + 1));
    start = nl + 1;
  }
  return total + countLine(start ? text.slice(start) : text);
}

/** A character a piece may carry on from a newline (o200k_base's pattern). */
const JOINS_A_NEWLINE = /[\s/]/u;
/** Lines remembered, and the longest remembered (a long line is rarely seen again). */
const LINES_KEPT = 4_096;
const LONGEST_KEPT = 1_024;
const lineCounts = new Map<string, number>();

function countLine(line: string): number {
  const known = lineCounts.get(line);
  if (known !== undefined) return known;
  const n = loadTokenizer().countTokens(line, PLAIN_TEXT);
  if (line.length <= LONGEST_KEPT) {
    if (lineCounts.size >= LINES_KEPT) lineCounts.clear();
    lineCounts.set(line, n);
  }
  return n;
}

/**
 * Prompt tokens of a chat: each message's content plus OpenAI's chat-format overhead (3 tokens per
 * message for its role and delimiters, 3 more priming the reply).
 */
export function countPromptTokens(messages: readonly ChatMessage[], count: (text: string) => number = countTokens): number {
  let total = 3;
  for (const m of messages) total += 3 + count(m.content ?? '');
  return total;
}

/** The first `maxTokens` tokens of a text (for the offline provider's `maxTokens`). */
export function truncateToTokens(text: string, maxTokens: number): { text: string; truncated: boolean } {
  const tk = loadTokenizer();
  const tokens = tk.encode(text, PLAIN_TEXT);
  if (tokens.length <= maxTokens) return { text, truncated: false };
  return { text: tk.decode(tokens.slice(0, Math.max(0, maxTokens))), truncated: true };
}

/** Throws the signal's own reason when it is aborted (so cancellation keeps its own error). */
export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
