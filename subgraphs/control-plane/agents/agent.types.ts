import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

@ObjectType({ description: 'Context fields a task type takes: required ones must be present and non-empty.' })
export class AgentInputs {
  @Field(() => [String]) required: string[];
  @Field(() => [String]) optional: string[];
}

@ObjectType({ description: 'One task type an agent runs, with its own inputs and main file.' })
export class AgentTaskType {
  @Field() taskType: string;
  @Field() title: string;
  @Field() description: string;
  @Field(() => AgentInputs) inputs: AgentInputs;
  @Field({ description: 'Format of the main file: markdown, yaml, json, code or text.' }) artifactFormat: string;
  @Field(() => [String], { description: 'Headings a complete main document has (what quality figures are measured against).' })
  expectedSections: string[];
  @Field(() => Float, { description: 'Seconds; the estimate until the task type has history.' }) typicalDuration: number;
}

@ObjectType({ description: 'An agent of the catalogue, with figures from its task history.' })
export class Agent {
  @Field(() => ID) agentId: string;
  @Field() name: string;
  @Field({ description: 'orchestration, automation, engineering, devops, documentation, prompts or incident.' }) domain: string;
  @Field({ description: 'The delivery stage the agent works in (RESEARCH … MONITOR).' }) forgeStage: string;
  @Field() version: string;
  @Field() description: string;
  @Field(() => [String], { description: 'The task types the agent runs.' }) capabilities: string[];
  @Field(() => AgentInputs, { description: "Inputs of the agent's primary task type (the first capability); every task type's are in taskTypes." })
  inputs: AgentInputs;
  @Field(() => GraphQLJSONObject, { description: 'Output name -> type description: the fields of a task result’s output.' })
  outputs: Record<string, string>;
  @Field(() => [AgentTaskType]) taskTypes: AgentTaskType[];
  @Field(() => Float, { description: 'Seconds, mean of completed tasks (last 1,000 finished); 0 while the agent has none (totalExecutions tells).' })
  averageDuration: number;
  @Field(() => Float, { description: 'Percent of finished tasks that completed (last 1,000); 0 while the agent has finished none (totalExecutions tells).' })
  successRate: number;
  @Field(() => Int, { description: 'Finished tasks the figures are computed from.' }) totalExecutions: number;
}
