import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { PageInfo } from '../../kernel/graphql-types';

/** A step as stored (chain_versions.steps): the validated input, sorted by order. */
export interface StoredStep {
  order: number;
  promptId: string;
  /** Absent: the prompt's latest version at the time the step runs. */
  version?: number;
  inputMapping: Record<string, string>;
  outputKey: string;
  agentId?: string;
  parallel?: boolean;
}

export interface CompletedStep {
  step: number;
  promptId: string;
  version: number;
  outputKey: string;
  output: string;
  tokensUsed: number;
  /** Seconds. */
  latency: number;
  completedAt: string;
}

export interface ExecutionFailure {
  step: number;
  promptId: string | null;
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export const EXECUTION_STATUSES = ['running', 'completed', 'failed'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

@ObjectType()
export class ChainStep {
  @Field(() => Int) order: number;
  @Field(() => ID) promptId: string;
  @Field(() => Int, { nullable: true, description: 'Pinned prompt version; absent: the latest when the step runs.' }) version?: number;
  @Field(() => GraphQLJSONObject, { description: 'Prompt variable -> step_<order>.<outputKey>.' }) inputMapping: Record<string, string>;
  @Field() outputKey: string;
  @Field(() => String, { nullable: true }) agentId?: string;
  @Field(() => Boolean, { nullable: true }) parallel?: boolean;
}

@ObjectType()
export class ChainPerformance {
  @Field(() => Int) totalExecutions: number;
  @Field(() => Float, { description: 'Average total tokens of completed executions.' }) averageTokens: number;
  @Field(() => Float, { description: 'Average total latency of completed executions, in seconds.' }) averageLatency: number;
  @Field(() => Float, { description: 'Percent of finished executions that completed.' }) successRate: number;
}

@ObjectType({ description: 'Prompts run in order; outputs feed later steps.' })
export class Chain {
  @Field(() => ID, { description: 'Equals the name given.' }) chainId: string;
  @Field() name: string;
  @Field() description: string;
  @Field(() => Int) version: number;
  @Field(() => Int) latestVersion: number;
  @Field(() => [ChainStep]) steps: ChainStep[];
  @Field(() => Int) stepsCount: number;
  @Field(() => GraphQLJSONObject) metadata: Record<string, unknown>;
  @Field(() => ChainPerformance) performance: ChainPerformance;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
}

@ObjectType()
export class ChainListItem {
  @Field(() => ID) chainId: string;
  @Field() name: string;
  @Field() description: string;
  @Field(() => String, { nullable: true }) domain: string | null;
  @Field(() => Int) version: number;
  @Field(() => Int) stepsCount: number;
  @Field(() => Int) executions: number;
  @Field(() => Float) successRate: number;
  @Field() createdAt: Date;
}

@ObjectType()
export class ChainList {
  @Field(() => [ChainListItem]) chains: ChainListItem[];
  @Field(() => PageInfo) pagination: PageInfo;
}

@ObjectType()
export class ChainDeletion {
  @Field(() => ID) chainId: string;
  @Field() deletedAt: Date;
}

@ObjectType()
export class ChainCompletedStep {
  @Field(() => Int, { description: 'The step’s order.' }) step: number;
  @Field(() => ID) promptId: string;
  @Field(() => Int) version: number;
  @Field() outputKey: string;
  @Field() output: string;
  @Field(() => Int) tokensUsed: number;
  @Field(() => Float, { description: 'Seconds.' }) latency: number;
  @Field() completedAt: Date;
}

@ObjectType({ description: 'Why an execution failed: the failing step (order), its prompt, and the reason.' })
export class ChainExecutionError {
  @Field(() => Int) step: number;
  @Field(() => ID, { nullable: true }) promptId: string | null;
  @Field() code: string;
  @Field() message: string;
  @Field(() => GraphQLJSONObject, { nullable: true }) details?: Record<string, unknown>;
}

@ObjectType({ description: 'One run of a chain: running, then completed (with result) or failed (with error).' })
export class ChainExecution {
  @Field(() => ID) executionId: string;
  @Field(() => ID) chainId: string;
  @Field(() => Int) chainVersion: number;
  @Field({ description: 'running, completed or failed.' }) status: string;
  @Field(() => Int, { description: 'The order being run (the failing one when failed).' }) currentStep: number;
  @Field(() => Int, { description: 'Number of distinct orders.' }) totalSteps: number;
  @Field(() => [ChainCompletedStep]) completedSteps: ChainCompletedStep[];
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'When completed: step_<order> -> {<outputKey>: output}.' })
  result: Record<string, Record<string, string>> | null;
  @Field(() => ChainExecutionError, { nullable: true }) error: ChainExecutionError | null;
  @Field(() => Int) totalTokens: number;
  @Field(() => Float, { description: 'Sum of the steps’ model latencies, in seconds.' }) totalLatency: number;
  @Field(() => Float, { description: 'Seconds since the start, until completion or failure.' }) duration: number;
  @Field() model: string;
  @Field(() => Float) temperature: number;
  @Field() startedAt: Date;
  @Field(() => Date, { nullable: true }) completedAt: Date | null;
  @Field(() => Date, { nullable: true }) failedAt: Date | null;
}
