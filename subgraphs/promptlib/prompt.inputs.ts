import { ArrayMaxSize, IsIn, IsInt, IsOptional, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, Float, InputType, Int } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { PROMPT_STATUSES } from './prompt.types';

@InputType()
export class CreatePromptInput {
  @Field({ description: 'Slug (lowercase letters, digits, "-", "_"); becomes the promptId.' }) @Length(1, 100) name: string;
  @Field() @Length(1, 10_000) description: string;
  @Field() @Length(1, 100_000) template: string;
  @Field(() => [String], { description: 'Exactly the variables the template uses (its fragments included).' })
  @ArrayMaxSize(200)
  variables: string[];
  @Field(() => GraphQLJSONObject, { nullable: true }) metadata?: Record<string, unknown>;
}

@InputType()
export class UpdatePromptInput {
  @Field({ nullable: true }) @IsOptional() @Length(1, 100_000) template?: string;
  @Field({ nullable: true }) @IsOptional() @Length(1, 10_000) description?: string;
  @Field(() => [String], { nullable: true, description: 'Omitted with a new template: derived from it.' })
  @IsOptional()
  @ArrayMaxSize(200)
  variables?: string[];
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Replaces the metadata.' }) metadata?: Record<string, unknown>;
  @Field(() => String, { nullable: true, description: 'draft, active or archived (archived applies to every version).' })
  @IsOptional()
  @IsIn(PROMPT_STATUSES)
  status?: string;
  @Field({ nullable: true, defaultValue: false, description: 'Store a new version instead of changing the latest in place.' })
  createNewVersion?: boolean;
}

@ArgsType()
export class PromptListArgs {
  @Field(() => String, { nullable: true }) domain?: string;
  @Field(() => String, { nullable: true }) agentId?: string;
  @Field(() => String, { nullable: true }) @IsOptional() @IsIn(PROMPT_STATUSES) status?: string;
  @Field(() => String, { nullable: true }) tag?: string;
  @Field(() => Int, { nullable: true, defaultValue: 20 }) @IsOptional() @IsInt() @Min(1) @Max(100) limit?: number;
  @Field(() => Int, { nullable: true, defaultValue: 0 }) @IsOptional() @IsInt() @Min(0) offset?: number;
}

@InputType()
export class TestPromptInput {
  @Field(() => GraphQLJSONObject) variables: Record<string, unknown>;
  @Field(() => String, { nullable: true, description: 'One of LLM_MODELS; default the first.' }) model?: string;
  @Field(() => Float, { nullable: true, description: '0.0 to 1.0, default 0.7.' }) @IsOptional() @Min(0) @Max(1) temperature?: number;
  @Field(() => Int, { nullable: true, description: 'Default 4096.' }) @IsOptional() @Min(1) @Max(128_000) maxTokens?: number;
  @Field(() => Int, { nullable: true, description: 'The version to test; default the latest.' }) @IsOptional() @Min(1) version?: number;
}

@InputType({ description: 'A stored prompt (promptId, optional version) or an inline template.' })
export class PromptAbArmInput {
  @Field(() => String, { nullable: true }) promptId?: string;
  @Field(() => Int, { nullable: true }) @IsOptional() @Min(1) version?: number;
  @Field(() => String, { nullable: true }) template?: string;
  @Field(() => [String], {
    nullable: true,
    description: "With an inline template: the variables it declares, checked against its placeholders as a stored prompt's are.",
  })
  variables?: string[];
}

@InputType()
export class PromptAbTestInput {
  @Field(() => PromptAbArmInput) promptA: PromptAbArmInput;
  @Field(() => PromptAbArmInput) promptB: PromptAbArmInput;
  @Field(() => [GraphQLJSONObject], { description: 'Variables of each test case (1 to 50).' }) testCases: Record<string, unknown>[];
  @Field(() => String, { nullable: true }) model?: string;
  @Field(() => Float, { nullable: true }) @IsOptional() @Min(0) @Max(1) temperature?: number;
  @Field(() => Int, { nullable: true }) @IsOptional() @Min(1) @Max(128_000) maxTokens?: number;
}

/** Ranges are checked by the service, which names fields in snake_case (refine's REST surface). */
@InputType()
export class RefinePromptInput {
  @Field() promptId: string;
  @Field(() => [String]) refinementGoals: string[];
  @Field(() => String, { nullable: true }) model?: string;
  @Field(() => Float, { nullable: true, description: '0.0 to 1.0, default 0.7.' }) temperature?: number;
  @Field(() => Int, { nullable: true, description: 'Default 4096.' }) maxTokens?: number;
}

@InputType()
export class PromotePromptInput {
  @Field() promptId: string;
  @Field({ description: 'An environment name such as production or staging.' }) environment: string;
}
