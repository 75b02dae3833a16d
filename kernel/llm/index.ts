import type { Config } from '../config';
import type { Logger } from '../logger';
import { OfflineProvider } from './offline';
import { OpenAiCompatibleProvider } from './openai-compatible';
import type { LlmProvider } from './types';

export * from './types';
export { countTokens, countPromptTokens, DEFAULT_TIMEOUT_MS } from './common';
export { OfflineProvider, OFFLINE_MARKER, offlineAnswer } from './offline';
export { OpenAiCompatibleProvider } from './openai-compatible';
export { LLM_PRICE_PER_1000_TOKENS } from './tracing';

/**
 * The process's LLM provider: the OpenAI-compatible endpoint of LLM_BASE_URL (with LLM_API_KEY as
 * its bearer key), else the deterministic offline provider. LLM_MODELS are the accepted names.
 */
export function createLlmProvider(config: Config['llm'], logger: Logger): LlmProvider {
  const log = logger.child({ component: 'llm' });
  if (config.baseUrl) {
    log.debug('llm provider: openai-compatible', { base_url: config.baseUrl, models: config.models });
    return new OpenAiCompatibleProvider({ baseUrl: config.baseUrl, apiKey: config.apiKey, models: config.models, logger: log });
  }
  log.debug('llm provider: offline (LLM_BASE_URL is unset)', { models: config.models });
  return new OfflineProvider({ models: config.models });
}
