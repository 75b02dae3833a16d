import { isAppError } from '../../../kernel/errors';
import type { Logger } from '../../../kernel/logger';
import type { Operations } from '../../../kernel/operations';
import { AGENTS, promptIdOf, type AgentSpec, type TaskTypeSpec } from './agent.catalog';

/**
 * The agents' instructions (`<agentId>-<taskType>`), seeded into the prompt library through its public
 * operations at start. An existing prompt is left alone whatever its state, so user edits survive
 * restarts. Every prompt asks for `summary` and `files` on a `keys:` line, so the offline provider
 * also answers a valid object. `prompt-refiner-refine` is the prompt library's own and seeded there.
 */

/** Prompts another service owns and seeds itself. */
const OWNED_ELSEWHERE = new Set(['prompt-refiner-refine']);
const SEED_WIDTH = 8;

export interface PromptSeed {
  name: string;
  description: string;
  template: string;
  variables: string[];
  metadata: Record<string, unknown>;
}

export function agentPrompt(agent: AgentSpec, spec: TaskTypeSpec): PromptSeed {
  const inputs = [...spec.required.map((name) => `- ${name} (required): {{${name}}}`), ...spec.optional.map((name) => `- ${name} (optional): {{${name}}}`)];
  const sections = spec.sections?.length ? `\nThe main file has these sections, as headings: ${spec.sections.join(', ')}.` : '';
  const template = [
    `You are ${agent.name} (${agent.agentId}), the ${agent.domain} agent of an automated delivery factory. ${agent.description}`,
    '',
    `## Task: ${spec.title} (${spec.taskType})`,
    spec.description,
    '',
    spec.instructions,
    '',
    '## Inputs',
    ...inputs,
    '',
    'Delivery stage: {{forgeStage}}',
    'Outputs of earlier stages: {{previousOutputs}}',
    'The whole task context, as JSON:',
    '{{context}}',
    '',
    '## Answer',
    `Write the deliverable as complete files. The main file is {{primaryPath}} (${spec.artifact.format}).${sections}`,
    'Paths are relative, with no "..". Use action "modify" for a file that already exists in the inputs, "create" otherwise.',
    'Respond with JSON only: one JSON object, no prose around it, no code fences.',
    'keys: summary, files',
    '- summary: two or three sentences on what you produced and anything the reader must check.',
    '- files: an array of {"path": string, "content": string (the whole file), "action": "create" or "modify"}.',
  ].join('\n');
  return {
    name: promptIdOf(agent.agentId, spec.taskType),
    description: `Instructions of the ${agent.agentId} agent for ${spec.taskType}: ${spec.description}`,
    template,
    variables: [...spec.required, ...spec.optional, 'forgeStage', 'previousOutputs', 'context', 'primaryPath'],
    metadata: {
      agentId: agent.agentId,
      taskType: spec.taskType,
      domain: agent.domain,
      tags: ['agent', agent.agentId, spec.taskType],
      version: agent.version,
      seededBy: 'control-plane',
    },
  };
}

export function agentPromptSeeds(): PromptSeed[] {
  return AGENTS.flatMap((agent) => agent.taskTypes.map((spec) => agentPrompt(agent, spec))).filter((s) => !OWNED_ELSEWHERE.has(s.name));
}

const EXISTING = /* GraphQL */ `
  query SeedPromptsExisting($promptIds: [ID!]!) {
    promptsExisting(promptIds: $promptIds)
  }
`;
const CREATE = /* GraphQL */ `
  mutation SeedPrompt($input: CreatePromptInput!) {
    createPrompt(input: $input) {
      promptId
    }
  }
`;
const ACTIVATE = /* GraphQL */ `
  mutation ActivateSeededPrompt($promptId: ID!) {
    updatePrompt(promptId: $promptId, input: { status: "active" }) {
      promptId
      status
    }
  }
`;

/**
 * Creates (active) every agent prompt that does not exist yet, after one look-up of which exist
 * (an existing prompt is left as the user has it). Returns the names created.
 */
export async function seedAgentPrompts(operations: Operations, logger: Logger): Promise<string[]> {
  const all = agentPromptSeeds();
  const { promptsExisting } = await operations.execute<{ promptsExisting: string[] }>(EXISTING, { promptIds: all.map((s) => s.name) });
  const present = new Set(promptsExisting);
  const seeds = all.filter((s) => !present.has(s.name));
  const created: string[] = [];
  let next = 0;
  const one = async (seed: PromptSeed) => {
    try {
      await operations.execute(CREATE, { input: seed });
    } catch (err) {
      if (isAppError(err) && err.code === 'resource_already_exists') return; // another process seeded it
      throw err;
    }
    await operations.execute(ACTIVATE, { promptId: seed.name });
    created.push(seed.name);
  };
  await Promise.all(
    Array.from({ length: SEED_WIDTH }, async () => {
      while (next < seeds.length) await one(seeds[next++]!);
    }),
  );
  if (created.length) logger.info('seeded agent prompts', { count: created.length });
  return created;
}
