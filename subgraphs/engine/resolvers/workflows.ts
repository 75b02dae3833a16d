import { GraphQLJSON } from 'graphql-scalars';
import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { pageInfo } from '../../../kernel/graphql-types';
import { load, loaderOf } from '../../../kernel/loaders';
import { absoluteUrl, type RequestContext } from '../../../kernel/subgraph';
import type { WebhookTriggerService } from '../webhooks';
import {
  CreateWorkflowInput,
  UpdateWorkflowInput,
  WorkflowExportArgs,
  WorkflowListArgs,
  type WorkflowRecord,
  type WorkflowService,
  Workflow,
  WorkflowDeletion,
  WorkflowExport,
  WorkflowPage,
  WorkflowStatistics,
} from '../workflows';

export function toWorkflow(r: WorkflowRecord): Workflow {
  return {
    workflowId: r.id,
    name: r.name,
    description: r.description,
    tags: r.tags,
    active: r.active,
    version: r.version,
    nodes: r.nodes,
    nodeCount: r.nodes.length,
    connections: r.connections,
    settings: r.settings,
    stickyNotes: r.stickyNotes,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

@Resolver(() => Workflow)
export class WorkflowResolver {
  constructor(
    private readonly service: WorkflowService,
    private readonly triggers: WebhookTriggerService,
  ) {}

  @Authorized('workflow:read')
  @Query(() => WorkflowPage, { description: 'Workflows, newest first.' })
  async workflows(@Args() args: WorkflowListArgs): Promise<WorkflowPage> {
    const { records, total } = await this.service.list(args);
    return { workflows: records.map(toWorkflow), pagination: pageInfo(total, args.limit, args.offset) };
  }

  @Authorized('workflow:read')
  @Query(() => Workflow)
  async workflow(@Arg('workflowId', () => ID) workflowId: string): Promise<Workflow> {
    return toWorkflow(await this.service.get(workflowId));
  }

  @Authorized('workflow:write')
  @Mutation(() => Workflow, { description: 'Validated before anything is stored (WORKFLOW_INVALID names the node).' })
  async createWorkflow(@Arg('input') input: CreateWorkflowInput, @Ctx() ctx: RequestContext): Promise<Workflow> {
    return created(ctx, this.triggers, await this.service.create(ctx.principal, input));
  }

  @Authorized('workflow:write')
  @Mutation(() => Workflow)
  async updateWorkflow(
    @Arg('workflowId', () => ID) workflowId: string,
    @Arg('input') input: UpdateWorkflowInput,
    @Ctx() ctx: RequestContext,
  ): Promise<Workflow> {
    return toWorkflow(await this.service.update(workflowId, input, ctx.principal));
  }

  @Authorized('workflow:write')
  @Mutation(() => WorkflowDeletion, { description: 'Deletes the workflow with its webhook triggers and executions (running ones are canceled).' })
  deleteWorkflow(@Arg('workflowId', () => ID) workflowId: string): Promise<WorkflowDeletion> {
    return this.service.delete(workflowId);
  }

  @Authorized('workflow:write')
  @Mutation(() => Workflow)
  async activateWorkflow(@Arg('workflowId', () => ID) workflowId: string, @Ctx() ctx: RequestContext): Promise<Workflow> {
    return toWorkflow(await this.service.setActive(workflowId, true, ctx.principal));
  }

  @Authorized('workflow:write')
  @Mutation(() => Workflow)
  async deactivateWorkflow(@Arg('workflowId', () => ID) workflowId: string, @Ctx() ctx: RequestContext): Promise<Workflow> {
    return toWorkflow(await this.service.setActive(workflowId, false, ctx.principal));
  }

  @Authorized('workflow:write')
  @Mutation(() => Workflow, { description: 'An inactive copy under a new name.' })
  async duplicateWorkflow(@Arg('workflowId', () => ID) workflowId: string, @Arg('name') name: string, @Ctx() ctx: RequestContext): Promise<Workflow> {
    return created(ctx, this.triggers, await this.service.duplicate(ctx.principal, workflowId, name));
  }

  @Authorized('workflow:read')
  @Query(() => WorkflowExport)
  exportWorkflow(@Args() args: WorkflowExportArgs): Promise<WorkflowExport> {
    return this.service.export(args.workflowId, args.format);
  }

  @Authorized('workflow:write')
  @Mutation(() => Workflow, {
    description: 'Imports our format or an n8n export of the core nodes (n8n-nodes-base.<name>), as an object or JSON/YAML text. The copy is inactive.',
  })
  async importWorkflow(
    @Arg('workflow', () => GraphQLJSON) workflow: unknown,
    @Arg('name', () => String, { nullable: true }) name: string | undefined,
    @Ctx() ctx: RequestContext,
  ): Promise<Workflow> {
    return created(ctx, this.triggers, await this.service.import(ctx.principal, workflow, name ?? undefined));
  }

  @FieldResolver(() => WorkflowStatistics)
  async statistics(@Root() w: Workflow, @Ctx() ctx: RequestContext): Promise<WorkflowStatistics> {
    const stats = await load(ctx, this.service.statisticsByWorkflow, w.workflowId);
    return { executions: stats.executions, successRate: stats.successRate, averageDuration: stats.averageDuration };
  }

  @FieldResolver(() => Date, { nullable: true, description: 'When the newest execution started.' })
  async lastExecuted(@Root() w: Workflow, @Ctx() ctx: RequestContext): Promise<Date | null> {
    return (await load(ctx, this.service.statisticsByWorkflow, w.workflowId)).lastExecuted;
  }

  @FieldResolver(() => String, { nullable: true, description: 'The absolute URL of its first active webhook trigger.' })
  async webhookUrl(@Root() w: Workflow, @Ctx() ctx: RequestContext): Promise<string | null> {
    const path = await load(ctx, this.triggers.webhookUrlByWorkflow, w.workflowId);
    return path ? absoluteUrl(ctx, path) : null;
  }
}

/** A workflow just created (created, duplicated, imported) has no trigger yet: its webhookUrl needs no query. */
function created(ctx: RequestContext, triggers: WebhookTriggerService, r: WorkflowRecord): Workflow {
  loaderOf(ctx, triggers.webhookUrlByWorkflow).prime(r.id, null);
  return toWorkflow(r);
}
