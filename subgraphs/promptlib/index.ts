/**
 * Prompt library: versioned templates with fragments, test runs, A/B tests, chains, refine, promote;
 * the agents render their instructions through `renderPrompt`.
 *
 * Owns: the `promptlib` schema, through its stores.
 * Calls: no other service (the model through kernel.llm).
 * Publishes: promptChanged (every process's prompt cache). Jobs: chain executions.
 */
import './codes';
import type { Kernel } from '../../kernel/platform';
import type { ServiceModule } from '../../kernel/subgraph';
import { ChainResolver } from './chain.resolver';
import { ChainRunner } from './chain-runner';
import { ChainService } from './chain.service';
import { FragmentResolver } from './fragment.resolver';
import { FragmentService } from './fragment.service';
import { Promptlib1763769600500 } from './migrations/1763769600500-promptlib';
import { ChainRunClock1763769601170 } from './migrations/1763769601170-chain-run-clock';
import { PromptResolver } from './prompt.resolver';
import { PromptService } from './prompt.service';
import { PromptTestService } from './prompt-test.service';
import { RefineService } from './refine.service';

export const promptlib: ServiceModule<Kernel> = {
  name: 'promptlib',
  surface: 'promptlib',
  migrations: [Promptlib1763769600500, ChainRunClock1763769601170],
  subscriptions: [],
  resolvers: [PromptResolver, FragmentResolver, ChainResolver],
  build: (kernel) => {
    const prompts = new PromptService(kernel.db, kernel.events);
    const tests = new PromptTestService(kernel.db, prompts, kernel.llm, kernel.rateLimiter);
    const refiner = new RefineService(prompts, tests, kernel.llm);
    const fragments = new FragmentService(kernel.db, prompts.loader);
    const chains = new ChainService(kernel.db, prompts, kernel.llm, kernel.rateLimiter, kernel.queue);
    const runner = new ChainRunner(kernel.db, prompts, tests, kernel.logger);
    return {
      instances: [new PromptResolver(prompts, tests, refiner), new FragmentResolver(fragments), new ChainResolver(chains)],
      jobs: () => runner.register(kernel.queue),
      /** Seeds the prompts the platform itself uses (the prompt-refiner's), if they are missing. */
      start: () => prompts.ensureSeeded(),
    };
  },
};
