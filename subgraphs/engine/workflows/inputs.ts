import { ArrayMaxSize, IsIn, IsOptional, Length, Max, Min } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { ArgsType, Field, Float, ID, InputType, Int } from 'type-graphql';

@InputType({ description: 'A node: name (unique in the workflow), type engine.<name>, position, parameters and settings.' })
export class WorkflowNodeInput {
  @Field() name: string;
  @Field() type: string;
  @Field(() => [Float], { nullable: true }) position?: number[];
  @Field(() => GraphQLJSONObject, { nullable: true }) parameters?: Record<string, unknown>;
  @Field(() => String, { nullable: true }) id?: string;
  @Field(() => Float, { nullable: true }) typeVersion?: number;
  @Field(() => String, { nullable: true }) notes?: string;
  @Field(() => Boolean, { nullable: true }) disabled?: boolean;
  @Field(() => Boolean, { nullable: true }) retryOnFail?: boolean;
  @Field(() => Int, { nullable: true }) maxTries?: number;
  @Field(() => Int, { nullable: true }) waitBetweenTries?: number;
  @Field(() => Boolean, { nullable: true }) continueOnFail?: boolean;
  @Field(() => Float, { nullable: true }) timeout?: number;
  @Field(() => String, { nullable: true }) onError?: string;
  @Field(() => Boolean, { nullable: true }) alwaysOutputData?: boolean;
  @Field(() => Boolean, { nullable: true }) executeOnce?: boolean;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Credential type to {id, name} of a stored credential (resolved by id, then name).' })
  credentials?: Record<string, unknown>;
}

@InputType()
export class CreateWorkflowInput {
  @Field() name: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => [String], { nullable: true }) @IsOptional() @ArrayMaxSize(20) tags?: string[];
  @Field(() => [WorkflowNodeInput]) nodes: WorkflowNodeInput[];
  @Field(() => GraphQLJSONObject, { description: 'Node name -> {main: [[{node, type: "main", index}]]}.' }) connections: Record<string, unknown>;
  @Field(() => Boolean, { nullable: true, description: 'Default false.' }) active?: boolean;
  @Field(() => GraphQLJSONObject, { nullable: true }) settings?: Record<string, unknown>;
}

@InputType({ description: 'Every field optional; the version increases when anything changes.' })
export class UpdateWorkflowInput {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => [String], { nullable: true }) @IsOptional() @ArrayMaxSize(20) tags?: string[];
  @Field(() => [WorkflowNodeInput], { nullable: true }) nodes?: WorkflowNodeInput[];
  @Field(() => GraphQLJSONObject, { nullable: true }) connections?: Record<string, unknown>;
  @Field(() => Boolean, { nullable: true }) active?: boolean;
  @Field(() => GraphQLJSONObject, { nullable: true }) settings?: Record<string, unknown>;
}

@ArgsType()
export class WorkflowListArgs {
  @Field(() => Boolean, { nullable: true }) active?: boolean;
  @Field(() => String, { nullable: true }) tag?: string;
  @Field(() => String, { nullable: true, description: 'Part of the name.' }) @IsOptional() @Length(1, 200) search?: string;
  @Field(() => Int, { defaultValue: 20, description: '1 to 100.' }) @Min(1) @Max(100) limit: number;
  @Field(() => Int, { defaultValue: 0 }) @Min(0) offset: number;
}

@ArgsType()
export class WorkflowExportArgs {
  @Field(() => ID) workflowId: string;
  @Field(() => String, { defaultValue: 'json', description: 'json or yaml.' }) @IsIn(['json', 'yaml']) format: string;
}
