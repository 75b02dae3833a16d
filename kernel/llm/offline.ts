import { performance } from 'node:perf_hooks';
import { errors } from '../errors';
import { countPromptTokens, countTokens, resolveModelIn, throwIfAborted, truncateToTokens } from './common';
import { tracedCompletion } from './tracing';
import type { ChatMessage, CompletionRequest, CompletionResult, LlmProvider } from './types';

/**
 * The provider used when LLM_BASE_URL is unset, so every flow works without a model server. It never
 * calls out and is deterministic. Its answers are documented in docs/prompt-library.md; the JSON mode's
 * `keys:` line is what the agents' prompts (prompts.seed.ts) rely on to get a valid object.
 */

export const OFFLINE_MARKER = '[offline model]';
const JSON_REQUEST = /respond with json|json object/i;
const KEYS_LINE = /^[ \t]*keys[ \t]*:[ \t]*(.+)$/im;
const MAX_LINES = 3;
const MAX_ASKED_CHARS = 300;

export interface OfflineOptions {
  models: readonly string[];
}

/** The last user message (or the last message), the one the offline answer is about. */
function subject(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') return messages[i].content ?? '';
  return messages.length ? (messages[messages.length - 1].content ?? '') : '';
}

function firstLines(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, MAX_LINES);
  const joined = lines.join(' / ');
  return joined.length > MAX_ASKED_CHARS ? `${joined.slice(0, MAX_ASKED_CHARS - 1)}…` : joined;
}

/** Keys from a `keys: a, "b", `c`` line; empty when there is none. */
export function requestedKeys(text: string): string[] {
  const match = KEYS_LINE.exec(text);
  if (!match) return [];
  const keys = match[1]
    .split(',')
    .map((k) =>
      k
        .trim()
        .replace(/[.;]+$/, '')
        .replace(/^["'`]+|["'`]+$/g, '')
        .trim(),
    )
    .filter(Boolean);
  return [...new Set(keys)];
}

function describeMessages(messages: readonly ChatMessage[]): { count: number; roles: string; characters: number } {
  const byRole = new Map<string, number>();
  let characters = 0;
  for (const m of messages) {
    byRole.set(m.role, (byRole.get(m.role) ?? 0) + 1);
    characters += (m.content ?? '').length;
  }
  const roles = ['system', 'user', 'assistant']
    .filter((r) => byRole.has(r))
    .map((r) => `${byRole.get(r)} ${r}`)
    .join(', ');
  return { count: messages.length, roles, characters };
}

export function offlineAnswer(messages: readonly ChatMessage[], maxTokens?: number): { output: string; finishReason: string } {
  const asked = subject(messages);
  const { count, roles, characters } = describeMessages(messages);
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content ?? '');
  if (JSON_REQUEST.test(asked) || system.some((t) => JSON_REQUEST.test(t))) {
    let keys = requestedKeys(asked);
    for (const t of system) if (!keys.length) keys = requestedKeys(t);
    const object: Record<string, unknown> = keys.length
      ? Object.fromEntries(keys.map((k) => [k, `${OFFLINE_MARKER} ${k}`]))
      : { offline_model: true, summary: firstLines(asked), messages: count, characters };
    return { output: JSON.stringify(object), finishReason: 'stop' };
  }
  const text = [
    `${OFFLINE_MARKER} No LLM endpoint is configured (LLM_BASE_URL is unset); this is a deterministic summary of the request.`,
    `Asked: ${firstLines(asked) || '(empty)'}`,
    `Messages: ${count}${roles ? ` (${roles})` : ''}; characters: ${characters}`,
  ].join('\n');
  // A token holds at least one character, so a text no longer than maxTokens characters is never cut.
  if (maxTokens !== undefined && maxTokens >= 0 && text.length > maxTokens) {
    const cut = truncateToTokens(text, Math.floor(maxTokens));
    if (cut.truncated) return { output: cut.text, finishReason: 'length' };
  }
  return { output: text, finishReason: 'stop' };
}

export class OfflineProvider implements LlmProvider {
  readonly models: readonly string[];
  readonly defaultModel: string;

  constructor(opts: OfflineOptions) {
    if (!opts.models.length) throw new Error('LLM provider needs at least one model');
    this.models = [...opts.models];
    this.defaultModel = this.models[0];
  }

  resolveModel(model?: string): string {
    return resolveModelIn(this.models, model);
  }

  countTokens(text: string): number {
    return countTokens(text);
  }

  async complete(request: CompletionRequest): Promise<CompletionResult> {
    const model = this.resolveModel(request.model);
    return tracedCompletion('offline', model, request, () => this.answer(model, request));
  }

  private async answer(model: string, request: CompletionRequest): Promise<CompletionResult> {
    const started = performance.now();
    if (!Array.isArray(request.messages) || request.messages.length === 0) {
      throw errors.validation([{ field: 'messages', message: 'must hold at least one message' }]);
    }
    throwIfAborted(request.signal);
    const messages = request.messages;
    const { output, finishReason } = offlineAnswer(messages, request.maxTokens);
    const latencyMs = Math.round(performance.now() - started);
    const prompt = countPromptTokens(messages);
    const completion = countTokens(output);
    return {
      output,
      model: `offline:${model}`,
      tokens: { prompt, completion, total: prompt + completion },
      latencyMs,
      offline: true,
      finishReason,
    };
  }
}
