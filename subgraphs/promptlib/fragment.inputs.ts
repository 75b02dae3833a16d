import { IsInt, IsOptional, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, InputType, Int } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

@InputType()
export class CreateFragmentInput {
  @Field({ description: 'Slug; becomes the fragmentId.' }) @Length(1, 100) name: string;
  @Field({ description: 'role, constraints, examples (or example), context or format.' }) type: string;
  @Field() @Length(1, 100_000) content: string;
  @Field({ nullable: true }) @IsOptional() @Length(0, 10_000) description?: string;
  @Field(() => GraphQLJSONObject, { nullable: true }) metadata?: Record<string, unknown>;
}

@InputType()
export class UpdateFragmentInput {
  @Field({ nullable: true }) @IsOptional() @Length(1, 100_000) content?: string;
  @Field({ nullable: true }) @IsOptional() @Length(0, 10_000) description?: string;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Replaces the metadata.' }) metadata?: Record<string, unknown>;
  @Field({ nullable: true, defaultValue: false }) createNewVersion?: boolean;
}

@ArgsType()
export class FragmentListArgs {
  @Field(() => String, { nullable: true }) type?: string;
  @Field(() => String, { nullable: true }) domain?: string;
  @Field(() => String, { nullable: true }) tag?: string;
  @Field(() => Int, { nullable: true, defaultValue: 20 }) @IsOptional() @IsInt() @Min(1) @Max(100) limit?: number;
  @Field(() => Int, { nullable: true, defaultValue: 0 }) @IsOptional() @IsInt() @Min(0) offset?: number;
}
