import { defineRoute } from '../route';
import { PromotePromptDocument, RefinePromptDocument } from './generated';

/** The prompt library's platform layout, `{prompt_library_url}/api/v1` (snake_case bodies; answers are the selections, snake_cased). */

export const promptlibPlatformRoutes = [
  defineRoute({
    method: 'POST',
    path: '/prompts/refine',
    operation: RefinePromptDocument,
    refusals: [{ code: 'model_unavailable', when: 'no language model is configured (LLM_BASE_URL): the offline model cannot refine' }],
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
    snakeCase: true,
  }),
  defineRoute({
    method: 'POST',
    path: '/prompts/promote',
    operation: PromotePromptDocument,
    variables: ({ body }) => ({ input: body ?? {} }),
    snakeCase: true,
  }),
];
