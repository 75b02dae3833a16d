/**
 * The one interface every caller of a language model uses (prompt tests, A/B tests, chains,
 * agents, the engine's prompt node). Implementations: an OpenAI-compatible endpoint
 * (LLM_BASE_URL) and a deterministic offline provider.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface CompletionRequest {
  /** One of LLM_MODELS; default the first. An unknown model is a 400 validation_error. */
  model?: string;
  messages: ChatMessage[];
  /** 0.0 to 1.0. */
  temperature?: number;
  maxTokens?: number;
  /** Aborts the call (cancelled tasks, timeouts). */
  signal?: AbortSignal;
  /** Per call; default 60 s. Past it: 504 `timeout`. */
  timeoutMs?: number;
}

export interface CompletionResult {
  output: string;
  /** The model that answered (for the offline provider: "offline:<model>"). */
  model: string;
  tokens: { prompt: number; completion: number; total: number };
  latencyMs: number;
  /** True when the built-in offline provider answered (no LLM_BASE_URL). */
  offline: boolean;
  finishReason?: string;
}

export interface LlmProvider {
  readonly models: readonly string[];
  readonly defaultModel: string;
  /** The model to use for a requested name; throws validation_error (field `model`) if unknown. */
  resolveModel(model?: string): string;
  /** Upstream failures: 502 `upstream_error`; time-outs: 504 `timeout`; aborts: the signal's reason. */
  complete(request: CompletionRequest): Promise<CompletionResult>;
  /** Tokens of a text by a real tokenizer (used when a provider reports no usage). */
  countTokens(text: string): number;
}
