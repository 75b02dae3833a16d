import { ArrayMaxSize, IsInt, IsOptional, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, Float, InputType, Int } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

@InputType()
export class ChainStepInput {
  @Field(() => Int, { description: 'Orders run 1..N; steps sharing an order must set parallel.' }) order: number;
  @Field() promptId: string;
  @Field(() => Int, { nullable: true, description: 'Pin a prompt version; default the latest when the step runs.' }) version?: number;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Prompt variable -> "step_<order>.<outputKey>" of an earlier order.' })
  inputMapping?: Record<string, unknown>;
  @Field() outputKey: string;
  @Field(() => String, { nullable: true }) agentId?: string;
  @Field(() => Boolean, { nullable: true }) parallel?: boolean;
}

@InputType()
export class CreateChainInput {
  @Field({ description: 'Slug; becomes the chainId.' }) @Length(1, 100) name: string;
  @Field() @Length(1, 10_000) description: string;
  @Field(() => [ChainStepInput]) @ArrayMaxSize(50) steps: ChainStepInput[];
  @Field(() => GraphQLJSONObject, { nullable: true }) metadata?: Record<string, unknown>;
}

@InputType()
export class UpdateChainInput {
  @Field(() => [ChainStepInput], { nullable: true }) @IsOptional() @ArrayMaxSize(50) steps?: ChainStepInput[];
  @Field({ nullable: true }) @IsOptional() @Length(1, 10_000) description?: string;
  @Field(() => GraphQLJSONObject, { nullable: true }) metadata?: Record<string, unknown>;
  @Field({ nullable: true, defaultValue: false }) createNewVersion?: boolean;
}

@InputType()
export class ExecuteChainInput {
  @Field(() => GraphQLJSONObject, { description: 'Variables of the first step (and of any later step that does not map them).' })
  initialVariables: Record<string, unknown>;
  @Field(() => String, { nullable: true, description: 'Applies to every step.' }) model?: string;
  @Field(() => Float, { nullable: true }) @IsOptional() @Min(0) @Max(1) temperature?: number;
  @Field(() => Int, { nullable: true }) @IsOptional() @Min(1) @Max(128_000) maxTokens?: number;
}

@ArgsType()
export class ChainListArgs {
  @Field(() => String, { nullable: true }) domain?: string;
  @Field(() => Int, { nullable: true, defaultValue: 20 }) @IsOptional() @IsInt() @Min(1) @Max(100) limit?: number;
  @Field(() => Int, { nullable: true, defaultValue: 0 }) @IsOptional() @IsInt() @Min(0) offset?: number;
}
