import { SpanKind } from '@opentelemetry/api';
import { inSpan } from '../tracing';
import type { CompletionRequest, CompletionResult } from './types';

/** What a model's tokens cost (USD per 1,000, prompt and completion alike): the price table's figure. */
export const LLM_PRICE_PER_1000_TOKENS = 0.002;

/**
 * One client span per model call, named and described by the GenAI semantic conventions (`chat
 * <model>`, operation, provider, requested and answering model, token usage, finish reason), with
 * the call's cost at the price table's rate. The outbound HTTP request is this span's child.
 */
export function tracedCompletion(
  provider: string,
  model: string,
  request: CompletionRequest,
  call: () => Promise<CompletionResult>,
): Promise<CompletionResult> {
  const attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': provider,
    'gen_ai.request.model': model,
    ...(typeof request.temperature === 'number' ? { 'gen_ai.request.temperature': request.temperature } : {}),
    ...(typeof request.maxTokens === 'number' ? { 'gen_ai.request.max_tokens': request.maxTokens } : {}),
  };
  return inSpan(`chat ${model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const result = await call();
    span?.setAttributes({
      'gen_ai.response.model': result.model,
      'gen_ai.usage.input_tokens': result.tokens.prompt,
      'gen_ai.usage.output_tokens': result.tokens.completion,
      ...(result.finishReason ? { 'gen_ai.response.finish_reasons': [result.finishReason] } : {}),
      'platform.llm.cost_usd': (result.tokens.total / 1000) * LLM_PRICE_PER_1000_TOKENS,
    });
    return result;
  });
}
