import { defineRoute } from '../route';

/** The prompt library's platform layout, `{prompt_library_url}/api/v1` (snake_case bodies). */

export const promptlibPlatformRoutes = [
  defineRoute({
    method: 'POST',
    path: '/prompts/refine',
    operation: /* GraphQL */ `
      mutation RefinePrompt($input: RefinePromptInput!) {
        refinePrompt(input: $input) {
          promptId version previousVersion status template variables compatible warnings refinementGoals model tokensUsed createdAt
        }
      }`,
    variables: ({ body }) => ({ input: body ?? {} }),
    status: 201,
    pick: ({ refinePrompt: r }) => ({
      prompt_id: r.promptId,
      version: r.version,
      previous_version: r.previousVersion,
      status: r.status,
      template: r.template,
      variables: r.variables,
      compatible: r.compatible,
      warnings: r.warnings,
      refinement_goals: r.refinementGoals,
      model: r.model,
      tokens_used: r.tokensUsed,
      created_at: r.createdAt,
    }),
  }),
  defineRoute({
    method: 'POST',
    path: '/prompts/promote',
    operation: /* GraphQL */ `
      mutation PromotePrompt($input: PromotePromptInput!) {
        promotePrompt(input: $input) { promptId environment version previousVersion status promotedAt }
      }`,
    variables: ({ body }) => ({ input: body ?? {} }),
    pick: ({ promotePrompt: p }) => ({
      prompt_id: p.promptId,
      environment: p.environment,
      version: p.version,
      previous_version: p.previousVersion,
      status: p.status,
      promoted_at: p.promotedAt,
    }),
  }),
];
