import type { Tier } from '../../../kernel/auth/principal';
import { LLM_PRICE_PER_1000_TOKENS } from '../../../kernel/llm';

/**
 * The price table of GET /metrics/costs (USD). A month's bill is the tier's base fee plus usage:
 * each agent task, each workflow execution and each orchestration at its unit price, and the
 * model tokens of agent tasks per 1,000. For a period shorter or longer than a month the base fee
 * is prorated by days (a month counts 30).
 */
export const PRICES = {
  currency: 'USD',
  baseFeePerMonth: { free: 0, starter: 29, professional: 99, enterprise: 499 } satisfies Record<Tier, number>,
  perAgentExecution: 0.002,
  perWorkflowExecution: 0.001,
  perOrchestration: 0.05,
  // Also the cost each model call's span reports.
  per1000Tokens: LLM_PRICE_PER_1000_TOKENS,
};
