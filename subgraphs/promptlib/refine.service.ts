import { AppError, type FieldError } from '../../kernel/errors';
import type { Principal } from '../../kernel/auth/principal';
import { OfflineProvider, type LlmProvider } from '../../kernel/llm';
import type { PromptService } from './prompt.service';
import { REFINER_PROMPT_ID } from './seeds';
import type { PromptTestService } from './prompt-test.service';
import { checkModelParams, DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, throwIf, type ModelParams } from './shared';

/**
 * Refine (`POST /promptlib/api/v1/prompts/refine`): the prompt-refiner agent's own prompt
 * (`prompt-refiner-refine`, newest active version) asks the model for an improved template; the
 * answer is stored as a new draft version of the prompt. Agents keep rendering the newest
 * active version until the draft is activated or promoted to production. Without a configured
 * model it refuses: the offline model's placeholder must never become a served version.
 */

export interface RefineData extends ModelParams {
  promptId: string;
  refinementGoals: string[];
}

export interface RefinementView {
  promptId: string;
  version: number;
  previousVersion: number;
  status: string;
  template: string;
  variables: string[];
  /** True when callers passing the previous version's variables can render the new one. */
  compatible: boolean;
  warnings: string[];
  refinementGoals: string[];
  model: string;
  tokensUsed: number;
  createdAt: Date;
}

export const MAX_REFINEMENT_GOALS = 20;

export class RefineService {
  constructor(
    private readonly prompts: PromptService,
    private readonly tests: PromptTestService,
    private readonly llm: LlmProvider,
  ) {}

  async refine(principal: Principal, input: RefineData): Promise<RefinementView> {
    const problems: FieldError[] = [];
    const goals = input.refinementGoals;
    if (!Array.isArray(goals) || goals.length === 0) {
      problems.push({ field: 'refinementGoals', message: 'must list at least one goal' });
    } else if (goals.length > MAX_REFINEMENT_GOALS) {
      problems.push({ field: 'refinementGoals', message: `must list at most ${MAX_REFINEMENT_GOALS} goals` });
    } else {
      goals.forEach((g, i) => {
        if (typeof g !== 'string' || !g.trim() || g.length > 1000)
          problems.push({ field: `refinementGoals.${i}`, message: 'must be a non-empty string of at most 1000 characters' });
      });
    }
    checkModelParams(problems, input);
    // Refine is served on the snake_case platform layout: report fields as its clients wrote them.
    throwIf(problems.map((p) => ({ ...p, field: p.field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) })));
    if (this.llm instanceof OfflineProvider) {
      throw new AppError('model_unavailable', 'Refine needs a language model: set LLM_BASE_URL (and LLM_API_KEY if the endpoint wants one) and restart', {
        setting: 'LLM_BASE_URL',
      });
    }
    // A refinement is a model run like a test: it counts against the same per-minute limit.
    await this.tests.consumeTest(principal);
    const model = this.llm.resolveModel(input.model ?? undefined);
    const current = await this.prompts.loadVersion(input.promptId);
    await this.prompts.ensureSeeded();
    const instructions = await this.prompts.renderForAgent(REFINER_PROMPT_ID, {
      template: current.template,
      goals: goals.map((g) => `- ${g.trim()}`).join('\n'),
    });
    const result = await this.llm.complete({
      model,
      messages: [{ role: 'user', content: instructions.rendered }],
      temperature: input.temperature ?? DEFAULT_TEMPERATURE,
      maxTokens: input.maxTokens ?? DEFAULT_MAX_TOKENS,
    });
    const template = cleanAnswer(result.output);
    if (!template) {
      throw new AppError('upstream_error', 'The model returned an empty template', { status: null, reason: 'empty_template' });
    }
    const { version, warnings } = await this.prompts.addRefinedVersion(input.promptId, template, current, {
      refinedFrom: current.version,
      refinementGoals: goals,
    });
    const compatible = version.variables.every((v) => current.variables.includes(v)) && !warnings.some((w) => w.startsWith('the new template'));
    return {
      promptId: input.promptId,
      version: version.version,
      previousVersion: current.version,
      status: version.status,
      template: version.template,
      variables: version.variables,
      compatible,
      warnings,
      refinementGoals: goals,
      model: result.model,
      tokensUsed: result.tokens.total,
      createdAt: version.createdAt,
    };
  }
}

/** The template out of a model's answer: code fences and the <<< >>> markers dropped, trimmed. */
export function cleanAnswer(output: string): string {
  let text = output.trim();
  const fenced = /^```[\w-]*\s*\n([\s\S]*?)\n?```$/.exec(text);
  if (fenced) text = fenced[1]!.trim();
  const marked = /^<<<\s*\n?([\s\S]*?)\n?>>>$/.exec(text);
  if (marked) text = marked[1]!.trim();
  return text.slice(0, 100_000);
}
