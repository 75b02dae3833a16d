/** The agent catalogue (data in agent.catalog.json), its GraphQL face and the agents' prompts in the prompt library. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { AGENTS, DOMAINS, findAgent, findTaskType, languageOf, promptIdOf, slugify, type AgentSpec, type TaskTypeSpec } from './agent.catalog';
export { AgentResolver } from './agent.resolver';
export { AgentService } from './agent.service';
export { agentPromptSeeds, seedAgentPrompts } from './prompts.seed';
