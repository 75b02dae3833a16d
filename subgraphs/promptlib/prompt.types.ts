import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { PageInfo } from '../../kernel/graphql-types';

export const PROMPT_STATUSES = ['draft', 'active', 'archived'] as const;
export type PromptStatus = (typeof PROMPT_STATUSES)[number];

/** What PromptService.create and update take; seeds.ts declares the platform's own prompts in the first. */
export interface CreatePromptData {
  name: string;
  description: string;
  template: string;
  variables: string[];
  metadata?: Record<string, unknown> | null;
}

export interface UpdatePromptData {
  template?: string | null;
  description?: string | null;
  variables?: string[] | null;
  metadata?: Record<string, unknown> | null;
  status?: string | null;
  createNewVersion?: boolean | null;
}

@ObjectType({ description: 'Runs of a prompt (tests, A/B test cases, chain steps) and how they went.' })
export class PromptVersionPerformance {
  @Field(() => Int) version: number;
  @Field(() => Int) totalTests: number;
  @Field(() => Float, { description: 'Average total tokens of the successful runs.' }) averageTokens: number;
  @Field(() => Float, { description: 'Average model latency of the successful runs, in seconds.' }) averageLatency: number;
  @Field(() => Float, { description: 'Percent of runs that succeeded (0 when none ran).' }) successRate: number;
}

@ObjectType({ description: 'Performance over every version of the prompt, and per version.' })
export class PromptPerformance {
  @Field(() => Int) totalTests: number;
  @Field(() => Float, { description: 'Average total tokens of the successful runs.' }) averageTokens: number;
  @Field(() => Float, { description: 'Average model latency of the successful runs, in seconds.' }) averageLatency: number;
  @Field(() => Float, { description: 'Percent of runs that succeeded (0 when none ran).' }) successRate: number;
  @Field(() => [PromptVersionPerformance]) byVersion: PromptVersionPerformance[];
}

@ObjectType({ description: 'The version of a prompt promoted to an environment.' })
export class PromptDeployment {
  @Field() environment: string;
  @Field(() => Int) version: number;
  @Field() promotedAt: Date;
}

@ObjectType({ description: 'A versioned prompt template. Fields describe the version asked for (default the latest).' })
export class Prompt {
  @Field(() => ID, { description: 'Equals the slug name given on creation.' }) promptId: string;
  @Field() name: string;
  @Field() description: string;
  @Field({ description: 'Text with {{variable}} and {{fragment:<id>}} / {{fragment:<id>:<version>}} placeholders.' }) template: string;
  @Field(() => [String], { description: 'Every variable the template uses, its fragments included.' }) variables: string[];
  @Field(() => Int) version: number;
  @Field(() => Int) latestVersion: number;
  @Field(() => [Int], { description: 'Every stored version.' }) versions: number[];
  @Field({ description: 'draft, active or archived (of this version).' }) status: string;
  @Field(() => GraphQLJSONObject, { description: 'domain, version (semver), tags, agentId, fragments (set from the template), and any other keys.' })
  metadata: Record<string, unknown>;
  @Field(() => PromptPerformance) performance: PromptPerformance;
  @Field(() => [PromptDeployment], { description: 'Versions promoted to environments.' }) environments: PromptDeployment[];
  @Field({ description: 'When the prompt was created.' }) createdAt: Date;
  @Field({ description: 'When this version last changed.' }) updatedAt: Date;
}

@ObjectType()
export class PromptListItem {
  @Field(() => ID) promptId: string;
  @Field() name: string;
  @Field() description: string;
  @Field(() => String, { nullable: true }) domain: string | null;
  @Field(() => String, { nullable: true }) agentId: string | null;
  @Field(() => [String]) tags: string[];
  @Field(() => Int, { description: 'The latest version.' }) version: number;
  @Field({ description: 'Status of the latest version.' }) status: string;
  @Field(() => Int) testsRun: number;
  @Field(() => Float) successRate: number;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
}

@ObjectType()
export class PromptList {
  @Field(() => [PromptListItem]) prompts: PromptListItem[];
  @Field(() => PageInfo) pagination: PageInfo;
}

@ObjectType()
export class PromptDeletion {
  @Field(() => ID) promptId: string;
  @Field(() => Int) versionsDeleted: number;
  @Field() deletedAt: Date;
}

@ObjectType()
export class PromptFragmentUse {
  @Field(() => ID) fragmentId: string;
  @Field(() => Int) version: number;
}

@ObjectType({ description: 'A prompt version rendered: fragments inlined, variables replaced literally.' })
export class PromptRendering {
  @Field(() => ID) promptId: string;
  @Field(() => Int) version: number;
  @Field() status: string;
  @Field() rendered: string;
  @Field(() => [String]) variables: string[];
  @Field(() => [PromptFragmentUse]) fragments: PromptFragmentUse[];
}

@ObjectType()
export class PromptPromotion {
  @Field(() => ID) promptId: string;
  @Field() environment: string;
  @Field(() => Int) version: number;
  @Field(() => Int, { nullable: true, description: 'The version the environment served before.' }) previousVersion: number | null;
  @Field({ description: 'Status of the promoted version (production makes it active).' }) status: string;
  @Field() promotedAt: Date;
}

@ObjectType({ description: 'A new draft version written by the model through the prompt-refiner agent prompt.' })
export class PromptRefinement {
  @Field(() => ID) promptId: string;
  @Field(() => Int) version: number;
  @Field(() => Int) previousVersion: number;
  @Field() status: string;
  @Field() template: string;
  @Field(() => [String]) variables: string[];
  @Field({ description: 'True when the previous version’s variables are enough to render the new one.' }) compatible: boolean;
  @Field(() => [String]) warnings: string[];
  @Field(() => [String]) refinementGoals: string[];
  @Field() model: string;
  @Field(() => Int) tokensUsed: number;
  @Field() createdAt: Date;
}
