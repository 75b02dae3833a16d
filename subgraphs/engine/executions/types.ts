import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Directive, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { PageInfo } from '../../../kernel/graphql-types';

/** The signed webhooks an execution started by the control plane's trigger can ask for (notify.ts). */
export const EXECUTION_EVENTS = ['execution.started', 'execution.completed', 'execution.failed', 'execution.waiting'] as const;
export type ExecutionEvent = (typeof EXECUTION_EVENTS)[number];

/** A control-plane trigger's webhook subscription (notify.ts), stored with the execution (jsonb). */
export interface NotifyConfig {
  url: string;
  events: ExecutionEvent[];
  /** base64 of the AES-256-GCM ciphertext (the execution id is the associated data); null: unsigned. */
  secretEnc: string | null;
  /** The platform's address as the triggering caller reached it: the base of the payload's links. */
  baseUrl?: string;
}

@ObjectType()
export class ExecutionProgress {
  @Field(() => Int, { description: 'Nodes that ran or were skipped (no items reached them).' }) nodesCompleted: number;
  @Field(() => Int) nodesTotal: number;
  @Field(() => String, { nullable: true }) currentNode: string | null;
}

@ObjectType({
  description:
    'Why an execution failed. code: NODE_EXECUTION_FAILED (a node) or EXECUTION_FAILED (a budget crossed — details.budget, limit, value — or a lost process).',
})
export class ExecutionError {
  @Field() code: string;
  @Field() message: string;
  @Field(() => String, { nullable: true }) node: string | null;
  @Field(() => String, { nullable: true }) nodeType: string | null;
  @Field(() => GraphQLJSONObject) details: Record<string, unknown>;
}

@ObjectType({ description: 'Run data of one node.' })
export class ExecutionNodeData {
  @Field() nodeName: string;
  @Field(() => Int, {
    description: 'Which run of the node this is, from 0: workflows in n8n’s execution order v1 run a node once per arriving branch, and loops run it again.',
  })
  runIndex: number;
  @Field() nodeType: string;
  @Field({ description: 'success or error (an error with continueOnFail still passed items on).' }) status: string;
  @Field() startedAt: Date;
  @Field(() => Int, { description: 'Milliseconds, all attempts included.' }) duration: number;
  @Field(() => Int) tries: number;
  @Field({ description: 'Copied from the original execution by a retry, not run again.' }) reused: boolean;
  @Field(() => GraphQLJSON, { nullable: true, description: '{main: [[{json}], …]}: the items of each output.' }) output: unknown;
  @Field(() => GraphQLJSONObject, { nullable: true }) error: Record<string, unknown> | null;
}

@ObjectType()
export class ExecutionLogEntry {
  @Field() timestamp: Date;
  @Field({ description: 'debug, info, warn or error.' }) level: string;
  @Field(() => String, { nullable: true }) node: string | null;
  @Field() message: string;
}

@ObjectType({ description: 'One execution of a workflow. status: running, success, error, waiting or canceled.' })
@Directive('@key(fields: "executionId")')
export class WorkflowExecution {
  @Field(() => ID) executionId: string;
  @Field(() => ID) workflowId: string;
  @Field() workflowName: string;
  @Field(() => Int) workflowVersion: number;
  @Field() status: string;
  @Field({ description: 'The status in the control plane’s spelling: running, completed, failed, waiting or cancelled.' })
  controlPlaneStatus: string;
  @Field({ description: 'manual, webhook, schedule, retry, subworkflow, test or error.' }) mode: string;
  @Field(() => ExecutionProgress) progress: ExecutionProgress;
  @Field(() => GraphQLJSON, { nullable: true, description: 'On success: {lastNode, items (the json of its items), nodesExecuted}.' })
  result: unknown;
  @Field(() => ExecutionError, { nullable: true }) error: ExecutionError | null;
  @Field(() => Int, { nullable: true, description: 'Milliseconds from start to end (waiting included).' }) duration: number | null;
  @Field() startedAt: Date;
  @Field(() => Date, { nullable: true }) finishedAt: Date | null;
  @Field(() => Date, { nullable: true }) failedAt: Date | null;
  @Field(() => Date, { nullable: true }) canceledAt: Date | null;
  @Field(() => Date, { nullable: true, description: 'While running: the start plus the average duration of recent successes.' })
  estimatedCompletionAt: Date | null;
  @Field(() => Date, { nullable: true, description: 'While waiting on a timer: when it resumes.' }) waitTill: Date | null;
  @Field(() => String, { nullable: true, description: 'While waiting for a webhook: the path (on this platform) that resumes it.' })
  resumeUrl: string | null;
  @Field(() => ID, { nullable: true, description: 'For a retry: the execution it retries.' }) originalExecutionId: string | null;
  @Field(() => ID, { nullable: true, description: 'For a sub-workflow: the execution whose executeWorkflow node started it.' })
  parentExecutionId: string | null;
  @Field(() => ID, { nullable: true, description: 'The webhook trigger that started it.' }) webhookId: string | null;
  @Field({ description: 'The engine’s address of this execution, relative to the platform: /v1/engine/executions/<id>.' })
  engineExecutionUrl: string;
  @Field(() => String, {
    nullable: true,
    description: 'The trace (OpenTelemetry trace id) of the request or job that started it, with a span per node run; null when tracing was off.',
  })
  traceId: string | null;
  @Field(() => Int, { description: 'Raised by every change of the execution row: of two states, the higher version is the newer.' }) version: number;
}

@ObjectType()
export class WorkflowExecutionPage {
  @Field(() => [WorkflowExecution]) executions: WorkflowExecution[];
  @Field(() => PageInfo) pagination: PageInfo;
}

@ObjectType({ description: 'What one execution may use; crossing it fails the execution with this name in error.details.budget.' })
export class ExecutionBudget {
  @Field({ description: 'maxItemsPerOutput, maxRunDataBytes, maxLoopTurns, maxDurationMs, maxBinaryBytes or maxExecutionBinaryBytes.' }) name: string;
  @Field({ description: 'The environment variable that sets it (what error.details.budget names).' }) variable: string;
  @Field(() => Float) limit: number;
  @Field() unit: string;
  @Field() description: string;
}

@ObjectType()
export class ExecutionDeletion {
  @Field(() => ID) executionId: string;
  @Field() deletedAt: Date;
}

@ObjectType({ description: "One file of an execution's binary data (n8n's binary items), with its bytes: what the download route answers." })
export class ExecutionBinary {
  @Field(() => ID) executionId: string;
  @Field(() => ID) binaryId: string;
  @Field() mimeType: string;
  @Field(() => String, { nullable: true }) fileName: string | null;
  @Field(() => Float, { description: 'Its size in bytes.' }) bytes: number;
  @Field({ description: 'Its bytes, base64.' }) data: string;
}
