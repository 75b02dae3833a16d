import { Field, InputType, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { IsIn, IsObject } from 'class-validator';

@ObjectType({ description: 'One criterion of a gate and whether the outputs met it.' })
export class GateCriterionResult {
  @Field({ description: 'The output name the criterion looks for.' }) name: string;
  @Field({ description: 'A required criterion that is not met fails the gate.' }) required: boolean;
  @Field({ description: 'The outputs carry a non-empty value under this name.' }) met: boolean;
}

@ObjectType({ description: 'The result of validating the entry or exit gate of a stage. A failed gate is a result (passed false), not an error.' })
export class GateValidationResult {
  @Field({ description: 'RESEARCH, DESIGN, IMPLEMENT, VERIFY, DEPLOY or MONITOR.' }) stage: string;
  @Field({ description: 'entry or exit.' }) gateType: string;
  @Field() passed: boolean;
  @Field(() => [GateCriterionResult]) criteria: GateCriterionResult[];
  @Field(() => [String], { nullable: true, description: 'The required criteria not met; present only when passed is false.' })
  missingCriteria?: string[];
  @Field() validatedAt: Date;
}

@ObjectType({ description: 'A documented criterion of the gate catalogue.' })
export class GateCriterion {
  @Field() name: string;
  @Field() required: boolean;
  @Field() description: string;
  @Field(() => [String], { description: 'Agent output names that also meet the criterion.' }) evidence: string[];
}

@ObjectType({ description: "A stage's two gates: entry (the exit outputs of the stage before it) and exit." })
export class GateStageCatalog {
  @Field() stage: string;
  @Field(() => [GateCriterion]) entry: GateCriterion[];
  @Field(() => [GateCriterion]) exit: GateCriterion[];
}

@InputType()
export class ValidateGateInput {
  @Field({ description: 'RESEARCH, DESIGN, IMPLEMENT, VERIFY, DEPLOY or MONITOR.' }) stage: string;
  @Field({ description: 'entry or exit.' }) @IsIn(['entry', 'exit'], { message: 'must be entry or exit' }) gateType: string;
  @Field(() => GraphQLJSONObject, { description: 'Map of criterion name to value.' }) @IsObject() outputs: Record<string, unknown>;
}
