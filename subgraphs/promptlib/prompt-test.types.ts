import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

@ObjectType()
export class PromptTestMetadata {
  @Field({ description: 'The model that answered.' }) model: string;
  @Field(() => Int) tokensUsed: number;
  @Field(() => Float, { description: 'Seconds.' }) latency: number;
  @Field(() => Float) temperature: number;
}

@ObjectType({ description: 'One test run of a prompt version, stored against it.' })
export class PromptTestRun {
  @Field(() => ID) testId: string;
  @Field(() => ID) promptId: string;
  @Field(() => Int) version: number;
  @Field() output: string;
  @Field(() => PromptTestMetadata) metadata: PromptTestMetadata;
  @Field() createdAt: Date;
}

@ObjectType()
export class PromptRunError {
  @Field() code: string;
  @Field() message: string;
}

@ObjectType({ description: 'One arm’s run of one test case.' })
export class PromptAbRun {
  @Field(() => Int, { description: 'Index of the test case.' }) testCase: number;
  @Field() success: boolean;
  @Field(() => String, { nullable: true }) output: string | null;
  @Field(() => Int) tokensUsed: number;
  @Field(() => Float, { description: 'Seconds.' }) latency: number;
  @Field(() => PromptRunError, { nullable: true }) error: PromptRunError | null;
}

@ObjectType()
export class PromptAbArmResult {
  @Field(() => Float, { description: 'Average total tokens of the successful runs.' }) averageTokens: number;
  @Field(() => Float, { description: 'Average latency of the successful runs, in seconds.' }) averageLatency: number;
  @Field(() => Int) successfulTests: number;
  @Field(() => Int) failedTests: number;
  @Field(() => Float, { description: 'Percent.' }) successRate: number;
  @Field(() => [PromptAbRun]) runs: PromptAbRun[];
}

@ObjectType()
export class PromptAbResults {
  @Field(() => PromptAbArmResult) promptA: PromptAbArmResult;
  @Field(() => PromptAbArmResult) promptB: PromptAbArmResult;
  @Field({ description: 'promptA or promptB: higher success rate, then fewer tokens, then lower latency; a tie keeps promptA.' })
  recommendation: string;
  @Field() reason: string;
}

@ObjectType({ description: 'What an arm ran: a stored prompt version, or an inline template (promptId null).' })
export class PromptAbArm {
  @Field(() => ID, { nullable: true }) promptId: string | null;
  @Field(() => Int, { nullable: true }) version: number | null;
  @Field() template: string;
}

@ObjectType({ description: 'A stored A/B test.' })
export class PromptAbTest {
  @Field(() => ID) testId: string;
  @Field(() => PromptAbArm) promptA: PromptAbArm;
  @Field(() => PromptAbArm) promptB: PromptAbArm;
  @Field(() => [GraphQLJSONObject]) testCases: Record<string, unknown>[];
  @Field() model: string;
  @Field(() => Float) temperature: number;
  @Field(() => Int) maxTokens: number;
  @Field(() => PromptAbResults) results: PromptAbResults;
  @Field() createdAt: Date;
}
