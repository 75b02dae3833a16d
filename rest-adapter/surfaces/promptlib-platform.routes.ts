import { defineRoute } from '../route';

/** The prompt library's platform layout, `{prompt_library_url}/api/v1` (snake_case bodies; answers are the selections, snake_cased). */

export const promptlibPlatformRoutes = [
  defineRoute({
    method: 'POST',
    path: '/prompts/refine',
    operation: /* GraphQL */ `
      mutation RefinePrompt($input: RefinePromptInput!) {
        refinePrompt(input: $input) {
          promptId
          version
          previousVersion
          status
          template
          variables
          compatible
          warnings
          refinementGoals
          model
          tokensUsed
          createdAt
        }
      }
    `,
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
    snakeCase: true,
  }),
  defineRoute({
    method: 'POST',
    path: '/prompts/promote',
    operation: /* GraphQL */ `
      mutation PromotePrompt($input: PromotePromptInput!) {
        promotePrompt(input: $input) {
          promptId
          environment
          version
          previousVersion
          status
          promotedAt
        }
      }
    `,
    variables: ({ body }) => ({ input: body ?? {} }),
    snakeCase: true,
  }),
];
