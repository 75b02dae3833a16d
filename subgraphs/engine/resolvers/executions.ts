import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { DeletedFlag, FirstStateLimit, pageInfo } from '../../../kernel/graphql-types';
import { load } from '../../../kernel/loaders';
import { absoluteUrl, type RequestContext } from '../../../kernel/subgraph';
import {
  ExecuteWorkflowInput,
  ExecutionListArgs,
  controlPlaneStatus,
  engineExecutionUrl,
  type ExecutionDetail,
  type ExecutionService,
  ExecutionBinary,
  ExecutionBudget,
  ExecutionDeletion,
  ExecutionLogEntry,
  ExecutionNodeData,
  WorkflowExecution,
  WorkflowExecutionPage,
} from '../executions';
import { TOPIC } from '../../../kernel/topics';

export function toExecution(v: ExecutionDetail): WorkflowExecution {
  return {
    executionId: v.id,
    workflowId: v.workflowId,
    workflowName: v.workflowName,
    workflowVersion: v.workflowVersion,
    status: v.status,
    controlPlaneStatus: controlPlaneStatus(v.status),
    mode: v.mode,
    progress: v.progress,
    result: v.result,
    error: v.error
      ? { code: v.error.code, message: v.error.message, node: v.error.node ?? null, nodeType: v.error.nodeType ?? null, details: v.error.details ?? {} }
      : null,
    duration: v.durationMs,
    startedAt: v.startedAt,
    finishedAt: v.finishedAt,
    failedAt: v.failedAt,
    canceledAt: v.canceledAt,
    estimatedCompletionAt: v.estimatedCompletionAt,
    waitTill: v.waitTill,
    resumeUrl: v.resumeUrl,
    originalExecutionId: v.originalExecutionId,
    parentExecutionId: v.parentExecutionId,
    webhookId: v.webhookId,
    engineExecutionUrl: engineExecutionUrl(v.id),
    traceId: v.traceId ?? null,
    version: v.version,
  };
}

@Resolver(() => WorkflowExecution)
export class ExecutionResolver {
  constructor(private readonly service: ExecutionService) {}

  /** Only executionsUpdated's event of its deletion says true (the gateway sets it). */
  @DeletedFlag()
  deleted(): boolean {
    return false;
  }

  @Authorized('workflow:execute')
  @Mutation(() => WorkflowExecution, {
    description: 'Starts an execution: async (default) answers at once (status running); sync waits up to `timeout` seconds for the result.',
  })
  async executeWorkflow(
    @Arg('workflowId', () => ID) workflowId: string,
    @Arg('input', () => ExecuteWorkflowInput, { nullable: true }) input: ExecuteWorkflowInput | undefined,
    @Ctx() ctx: RequestContext,
  ): Promise<WorkflowExecution> {
    return toExecution(await this.service.execute(ctx.principal, workflowId, input ?? {}));
  }

  @Authorized('workflow:read')
  @Query(() => [ExecutionBudget], {
    description: 'What one execution may use (items per node output, run data, runs of one node, running time); crossing one fails it with its name.',
  })
  executionBudgets(): ExecutionBudget[] {
    return this.service.budgets();
  }

  @Authorized('workflow:read')
  @Query(() => WorkflowExecution)
  async execution(@Arg('executionId', () => ID) executionId: string): Promise<WorkflowExecution> {
    return toExecution(await this.service.get(executionId));
  }

  @Authorized('workflow:read')
  @Query(() => ExecutionBinary, {
    description: "One file of an execution's binary data (run data gives each binary's id and its download url): readable by whoever may read the execution.",
  })
  async executionBinary(@Arg('executionId', () => ID) executionId: string, @Arg('binaryId', () => ID) binaryId: string): Promise<ExecutionBinary> {
    const file = await this.service.binary(executionId, binaryId);
    return { executionId, binaryId, mimeType: file.mimeType, fileName: file.fileName, bytes: file.data.length, data: file.data.toString('base64') };
  }

  @Authorized('workflow:read')
  @Query(() => WorkflowExecutionPage, { description: 'Executions, newest first.' })
  async executions(@Args() args: ExecutionListArgs): Promise<WorkflowExecutionPage> {
    const { executions, total } = await this.service.list(args);
    return { executions: executions.map(toExecution), pagination: pageInfo(total, args.limit, args.offset) };
  }

  @Authorized('workflow:execute')
  @Mutation(() => WorkflowExecution, {
    description:
      'A new execution (async) of a failed or canceled one: the nodes before `fromNode` (default: the node that failed) keep their stored outputs; it links originalExecutionId.',
  })
  async retryExecution(
    @Arg('executionId', () => ID) executionId: string,
    @Arg('fromNode', () => String, { nullable: true }) fromNode: string | undefined,
    @Ctx() ctx: RequestContext,
  ): Promise<WorkflowExecution> {
    return toExecution(await this.service.retry(ctx.principal, executionId, fromNode));
  }

  @Authorized('workflow:execute')
  @Mutation(() => WorkflowExecution, {
    description: 'Cancels a running or waiting execution: the running node is aborted. `reason` goes to the execution log.',
  })
  async cancelExecution(
    @Arg('executionId', () => ID) executionId: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | undefined,
  ): Promise<WorkflowExecution> {
    return toExecution(await this.service.cancel(executionId, reason));
  }

  @Authorized('workflow:write')
  @Mutation(() => ExecutionDeletion, { description: 'Deletes an execution with its run data and logs.' })
  deleteExecution(@Arg('executionId', () => ID) executionId: string): Promise<ExecutionDeletion> {
    return this.service.delete(executionId);
  }

  @FieldResolver(() => [ExecutionNodeData], { nullable: true, description: 'Run data per node (loaded only when selected).' })
  nodeData(@Root() e: WorkflowExecution, @Ctx() ctx: RequestContext): Promise<ExecutionNodeData[]> {
    return load(ctx, this.service.nodeDataByExecution, e.executionId) as Promise<ExecutionNodeData[]>;
  }

  @FieldResolver(() => String, { description: 'The execution on the engine surface, an absolute URL (PUBLIC_URL, else the address the caller used).' })
  engineExecutionUrl(@Root() e: WorkflowExecution, @Ctx() ctx: RequestContext): string {
    return absoluteUrl(ctx, e.engineExecutionUrl);
  }

  @FieldResolver(() => String, { nullable: true, description: 'While waiting for a resume webhook: the absolute URL that resumes it.' })
  resumeUrl(@Root() e: WorkflowExecution, @Ctx() ctx: RequestContext): string | null {
    return e.resumeUrl ? absoluteUrl(ctx, e.resumeUrl) : null;
  }

  @FieldResolver(() => [ExecutionLogEntry], { description: 'The execution log, oldest first.' })
  logs(@Root() e: WorkflowExecution, @Ctx() ctx: RequestContext): Promise<ExecutionLogEntry[]> {
    return load(ctx, this.service.logsByExecution, e.executionId);
  }

  @Authorized('workflow:read')
  @Subscription(() => WorkflowExecution, {
    topics: TOPIC.executionUpdated,
    description:
      'Emits the execution as it is at once (a finished one: its final state), then on every status and progress change, never an older version than one sent (served by the gateway).',
  })
  executionUpdated(@Arg('executionId', () => ID) _executionId: string, @Root() execution: WorkflowExecution): WorkflowExecution {
    return execution;
  }

  @Authorized('workflow:read')
  @Subscription(() => WorkflowExecution, {
    topics: TOPIC.executionUpdated,
    description:
      'Emits an execution of the workflow (of any workflow, when none is given) on every status change, as executionUpdated does, and a deleted one once more with `deleted` true. First sends the latest `limit` executions (as executions lists them), oldest first, each with its version; an unknown workflow is an error (served by the gateway).',
  })
  executionsUpdated(
    @Arg('workflowId', () => ID, { nullable: true }) _workflowId: string | null,
    @FirstStateLimit() _limit: number,
    @Root() execution: WorkflowExecution,
  ): WorkflowExecution {
    return execution;
  }
}
