import type { CreatePromptData, PromptStatus } from './prompt.types';

/**
 * Prompts the platform itself uses, ensured at every start (missing ones are created; edited
 * ones are kept as they are).
 */

/** The agent prompt refine uses (named `<agentId>-<taskType>` like every agent prompt), seeded at start. */
export const REFINER_PROMPT_ID = 'prompt-refiner-refine';
export const SEEDS: (CreatePromptData & { status: PromptStatus })[] = [
  {
    name: REFINER_PROMPT_ID,
    description: 'Instructions of the prompt-refiner agent: improve a prompt template towards the given goals.',
    status: 'active',
    metadata: { agentId: 'prompt-refiner', domain: 'prompts', tags: ['agent', 'refine'], version: '1.0.0' },
    template: [
      'You are prompt-refiner, an expert prompt engineer.',
      '',
      'Improve the prompt template below so that it meets these goals:',
      '{{goals}}',
      '',
      'Rules:',
      '- Keep every placeholder written in double curly braces (variables and fragment references) exactly as it is, and add no new ones.',
      '- Keep the purpose, audience and language of the template.',
      '- Answer with only the new template: no explanation, no preamble, no code fences.',
      '',
      'Template to improve:',
      '<<<',
      '{{template}}',
      '>>>',
    ].join('\n'),
    variables: ['goals', 'template'],
  },
];
