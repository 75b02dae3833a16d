import { Arg, Args, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import type { RequestContext } from '../../kernel/subgraph';
import type { PromptService } from './prompt.service';
import type { PromptTestService } from './prompt-test.service';
import type { RefineService } from './refine.service';
import {
  CreatePromptInput,
  PromotePromptInput,
  PromptAbTestInput,
  PromptListArgs,
  RefinePromptInput,
  TestPromptInput,
  UpdatePromptInput,
} from './prompt.inputs';
import { Prompt, PromptDeletion, PromptList, PromptPromotion, PromptRefinement, PromptRendering } from './prompt.types';
import { PromptAbTest, PromptTestRun } from './prompt-test.types';

@Resolver(() => Prompt)
export class PromptResolver {
  constructor(
    private readonly promptService: PromptService,
    private readonly tests: PromptTestService,
    private readonly refiner: RefineService,
  ) {}

  @Authorized('prompt:read')
  @Query(() => Prompt, { description: 'A prompt at a version (default the latest), or at the version promoted to an environment.' })
  prompt(
    @Arg('promptId', () => ID) promptId: string,
    @Arg('version', () => Int, { nullable: true }) version?: number,
    @Arg('environment', () => String, { nullable: true }) environment?: string,
  ): Promise<Prompt> {
    return this.promptService.get(promptId, { version, environment });
  }

  @Authorized('prompt:read')
  @Query(() => [ID], { description: 'Which of the given prompt ids exist (one look-up for many: seeding, batch checks).' })
  promptsExisting(@Arg('promptIds', () => [ID]) promptIds: string[]): Promise<string[]> {
    return this.promptService.existing(promptIds);
  }

  @Authorized('prompt:read')
  @Query(() => PromptList, { description: 'Prompts (latest versions), newest first.' })
  prompts(@Args() args: PromptListArgs): Promise<PromptList> {
    return this.promptService.list({ ...args, limit: args.limit ?? 20, offset: args.offset ?? 0 });
  }

  @Authorized('prompt:read')
  @Query(() => PromptRendering, {
    description: 'Renders a prompt: the given version, else the version promoted to `environment`, else the newest active version (what agents run).',
  })
  renderPrompt(
    @Arg('promptId', () => ID) promptId: string,
    @Arg('variables', () => GraphQLJSONObject, { nullable: true, validate: false }) variables?: Record<string, unknown>,
    @Arg('version', () => Int, { nullable: true }) version?: number,
    @Arg('environment', () => String, { nullable: true }) environment?: string,
  ): Promise<PromptRendering> {
    return this.promptService.render(promptId, variables ?? {}, { version, environment });
  }

  @Authorized('prompt:read')
  @Query(() => PromptAbTest, { description: 'A stored A/B test.' })
  promptAbTest(@Arg('testId', () => ID) testId: string): Promise<PromptAbTest> {
    return this.tests.getAbTest(testId);
  }

  @Authorized('prompt:read')
  @Query(() => [PromptAbTest], { description: 'The A/B tests that compared a version of this prompt, newest first.' })
  promptAbTests(@Arg('promptId', () => ID) promptId: string, @Arg('limit', () => Int, { defaultValue: 20 }) limit: number): Promise<PromptAbTest[]> {
    return this.tests.abTestsOf(promptId, limit);
  }

  @Authorized('prompt:write')
  @Mutation(() => Prompt, { description: 'Creates a prompt at version 1, in draft.' })
  createPrompt(@Arg('input') input: CreatePromptInput): Promise<Prompt> {
    return this.promptService.create(input);
  }

  @Authorized('prompt:write')
  @Mutation(() => Prompt, { description: 'Changes the latest version in place, or stores a new version (createNewVersion); also changes status.' })
  updatePrompt(@Arg('promptId', () => ID) promptId: string, @Arg('input') input: UpdatePromptInput): Promise<Prompt> {
    return this.promptService.update(promptId, input);
  }

  @Authorized('prompt:write')
  @Mutation(() => PromptDeletion, { description: 'Deletes one version, or the whole prompt when no version is given.' })
  deletePrompt(@Arg('promptId', () => ID) promptId: string, @Arg('version', () => Int, { nullable: true }) version?: number): Promise<PromptDeletion> {
    return this.promptService.delete(promptId, version);
  }

  @Authorized('prompt:test')
  @Mutation(() => PromptTestRun, { description: 'Renders a prompt version with the variables and runs it on the model; the run is stored.' })
  testPrompt(@Arg('promptId', () => ID) promptId: string, @Arg('input') input: TestPromptInput, @Ctx() ctx: RequestContext): Promise<PromptTestRun> {
    return this.tests.test(ctx.principal, promptId, input);
  }

  @Authorized('prompt:test')
  @Mutation(() => PromptAbTest, { description: 'Runs both prompts over every test case and recommends one.' })
  runPromptAbTest(@Arg('input') input: PromptAbTestInput, @Ctx() ctx: RequestContext): Promise<PromptAbTest> {
    return this.tests.abTest(ctx.principal, input);
  }

  @Authorized('prompt:write')
  @Mutation(() => PromptRefinement, { description: 'Asks the model (prompt-refiner agent prompt) for an improved template, stored as a new draft version.' })
  refinePrompt(@Arg('input') input: RefinePromptInput, @Ctx() ctx: RequestContext): Promise<PromptRefinement> {
    return this.refiner.refine(ctx.principal, input);
  }

  @Authorized('prompt:write')
  @Mutation(() => PromptPromotion, { description: 'Pins the latest version for an environment; production also makes it active.' })
  promotePrompt(@Arg('input') input: PromotePromptInput): Promise<PromptPromotion> {
    return this.promptService.promote(input.promptId, input.environment);
  }
}
