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

const built = new WeakMap<object, ReturnType<typeof build>>();

/** The services of the prompt library, built once per kernel (`create` and `start` share them). */
export function createPromptlib(kernel: Kernel) {
  let services = built.get(kernel);
  if (!services) built.set(kernel, (services = build(kernel)));
  return services;
}

function build(kernel: Kernel) {
  const prompts = new PromptService(kernel.db, kernel.events);
  const tests = new PromptTestService(kernel.db, prompts, kernel.llm, kernel.rateLimiter);
  return {
    prompts,
    tests,
    refiner: new RefineService(prompts, tests, kernel.llm),
    fragments: new FragmentService(kernel.db, prompts.loader),
    chains: new ChainService(kernel.db, prompts, kernel.llm, kernel.rateLimiter, kernel.queue),
    runner: new ChainRunner(kernel.db, prompts, tests, kernel.logger),
  };
}

/**
 * The prompt library: prompts, fragments, chains, tests, A/B tests, refine and promote. The
 * control plane's agents render their instructions through `renderPrompt` (CONTRACT.md section 8).
 */
export const promptlib: ServiceModule<Kernel> = {
  name: 'promptlib',
  entities: [],
  migrations: [Promptlib1763769600500, ChainRunClock1763769601170],
  subscriptions: [],
  create: (kernel) => {
    const s = createPromptlib(kernel);
    s.runner.register(kernel.queue);
    return {
      name: 'promptlib',
      surface: 'promptlib',
      resolvers: [PromptResolver, FragmentResolver, ChainResolver],
      instances: [new PromptResolver(s.prompts, s.tests, s.refiner), new FragmentResolver(s.fragments), new ChainResolver(s.chains)],
    };
  },
  /** Seeds the prompts the platform itself uses (the prompt-refiner's), if they are missing. */
  start: async (kernel) => {
    await createPromptlib(kernel).prompts.ensureSeeded();
  },
};
