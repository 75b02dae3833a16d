import { Field, ID, InputType, ObjectType } from 'type-graphql';

@ObjectType({ description: 'An n8n variable: every workflow reads it, read-only, as `$vars.<key>` in expressions and Code nodes.' })
export class WorkflowVariable {
  @Field(() => ID) variableId: string;
  @Field({ description: 'Letters, digits and _, at most 50 characters; unique.' }) key: string;
  @Field({ description: 'Text, at most 1,000 characters.' }) value: string;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
}

@ObjectType()
export class WorkflowVariableDeletion {
  @Field(() => ID) variableId: string;
  @Field() deletedAt: Date;
}

@InputType({ description: 'A new variable: both fields required.' })
export class WorkflowVariableInput {
  @Field(() => String, { nullable: true }) key?: string | null;
  @Field(() => String, { nullable: true }) value?: string | null;
}

@InputType({ description: 'Fields left out keep their value.' })
export class UpdateWorkflowVariableInput {
  @Field(() => String, { nullable: true }) key?: string | null;
  @Field(() => String, { nullable: true }) value?: string | null;
}
