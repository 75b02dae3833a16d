import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { alsoOn } from '../../../kernel/auth/principal';
import { AppError } from '../../../kernel/errors';
import { pageInfo } from '../../../kernel/graphql-types';
import type { RequestContext } from '../../../kernel/subgraph';
import {
  ControlPlaneExecutionListArgs,
  TriggerWorkflowInput,
  type ExecutionService,
  fromControlPlaneStatus,
  WorkflowExecution,
  WorkflowExecutionPage,
} from '../executions';
import { WorkflowWebhookRegistrationInput, type WebhookTriggerService, WorkflowWebhook } from '../webhooks';
import { WorkflowListArgs, type WorkflowService, WorkflowPage } from '../workflows';
import { toExecution } from './executions';
import { toWorkflow } from './workflows';

/**
 * The control plane's workflow operations (REST under /v1/control-plane/workflows).
 * The engine owns workflows and executions, so the operations are the engine's, and accept
 * control-plane keys as well as engine keys. They are distinct from the engine's own (whose
 * surface takes engine keys only): a workflow may be given by id or slug, execution statuses
 * are filtered in the control plane's spelling, and the trigger is the control plane's.
 */
@Resolver()
export class ControlPlaneWorkflowResolver {
  constructor(
    private readonly workflows: WorkflowService,
    private readonly executions: ExecutionService,
    private readonly triggers: WebhookTriggerService,
  ) {}

  @Authorized('workflow:execute', alsoOn('control-plane'))
  @Mutation(() => WorkflowExecution, {
    description:
      'Starts an active workflow (by id or slug) with `payload` (≤ 5 MB): async answers at once (running; queued with `priority`), sync waits up to `timeout` s (at most 300). `webhook` gets signed execution.started|completed|failed|waiting deliveries. 100 a minute per key.',
  })
  async triggerWorkflow(@Arg('input', () => TriggerWorkflowInput) input: TriggerWorkflowInput, @Ctx() ctx: RequestContext): Promise<WorkflowExecution> {
    return toExecution(await this.executions.trigger(ctx.principal, input, ctx.baseUrl));
  }

  @Authorized('workflow:read', alsoOn('control-plane'))
  @Query(() => WorkflowPage, { description: 'Workflows with their statistics, newest first (GET /v1/control-plane/workflows).' })
  async controlPlaneWorkflows(@Args() args: WorkflowListArgs): Promise<WorkflowPage> {
    const { records, total } = await this.workflows.list(args);
    return { workflows: records.map(toWorkflow), pagination: pageInfo(total, args.limit, args.offset) };
  }

  @Authorized('workflow:read', alsoOn('control-plane'))
  @Query(() => WorkflowExecution, { description: 'An execution; `controlPlaneStatus` is its status in the control plane’s spelling.' })
  async controlPlaneExecution(@Arg('executionId', () => ID) executionId: string): Promise<WorkflowExecution> {
    return toExecution(await this.executions.get(executionId));
  }

  @Authorized('workflow:read', alsoOn('control-plane'))
  @Query(() => WorkflowExecutionPage, { description: 'Executions, newest first; `status` in the control plane’s spelling, `workflowId` an id or a slug.' })
  async controlPlaneExecutions(@Args() args: ControlPlaneExecutionListArgs): Promise<WorkflowExecutionPage> {
    let workflowId = args.workflowId;
    if (workflowId !== undefined && workflowId !== null) {
      try {
        workflowId = (await this.workflows.resolve(workflowId)).id;
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'WORKFLOW_NOT_FOUND')) throw err;
        return { executions: [], pagination: pageInfo(0, args.limit, args.offset) };
      }
    }
    const status = args.status === undefined || args.status === null ? undefined : fromControlPlaneStatus(args.status);
    const { executions, total } = await this.executions.list({ ...args, workflowId: workflowId ?? undefined, status });
    return { executions: executions.map(toExecution), pagination: pageInfo(total, args.limit, args.offset) };
  }

  @Authorized('workflow:execute', alsoOn('control-plane'))
  @Mutation(() => WorkflowExecution, { description: 'Cancels a running or waiting execution (`reason` goes to its log).' })
  async controlPlaneCancelExecution(
    @Arg('executionId', () => ID) executionId: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | undefined,
  ): Promise<WorkflowExecution> {
    return toExecution(await this.executions.cancel(executionId, reason));
  }

  @Authorized('workflow:write', alsoOn('control-plane'))
  @Mutation(() => WorkflowWebhook, { description: 'Registers /webhook/<path> for the workflow (by id or slug), as the engine’s createWorkflowWebhook.' })
  async controlPlaneCreateWorkflowWebhook(
    @Arg('workflowId', () => ID) workflowId: string,
    @Arg('input', () => WorkflowWebhookRegistrationInput) input: WorkflowWebhookRegistrationInput,
    @Ctx() ctx: RequestContext,
  ): Promise<WorkflowWebhook> {
    const v = await this.triggers.create(ctx.principal, { ...input, workflowId });
    return { webhookId: v.id, ...v };
  }
}
