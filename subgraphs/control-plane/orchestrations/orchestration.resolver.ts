import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { FirstStateLimit } from '../../../kernel/graphql-types';
import type { RequestContext } from '../../../kernel/subgraph';
import { CreateOrchestrationInput, CreateOrchestrationWorkflowInput, OrchestrationArgs, OrchestrationListArgs } from './orchestration.inputs';
import type { OrchestrationService } from './orchestration.service';
import { Orchestration, OrchestrationList } from './orchestration.types';
import { TOPIC } from '../../../kernel/topics';

@Resolver(() => Orchestration)
export class OrchestrationResolver {
  constructor(private readonly service: OrchestrationService) {}

  @Authorized('orchestration:read')
  @Query(() => Orchestration, { description: 'An orchestration’s status, progress and stages (tasks with includeTaskDetails).' })
  orchestration(@Args() args: OrchestrationArgs, @Ctx() ctx: RequestContext): Promise<Orchestration> {
    return this.service.get(ctx.principal, args.orchestrationId, args.includeTaskDetails ?? false);
  }

  @Authorized('orchestration:read')
  @Query(() => OrchestrationList, { description: 'Orchestrations, newest first.' })
  orchestrations(@Args() args: OrchestrationListArgs, @Ctx() ctx: RequestContext): Promise<OrchestrationList> {
    return this.service.list(ctx.principal, args);
  }

  @Authorized('orchestration:write')
  @Mutation(() => Orchestration, { description: 'Validates and starts an orchestration: the first stage runs, the others wait.' })
  createOrchestration(@Arg('input') input: CreateOrchestrationInput, @Ctx() ctx: RequestContext): Promise<Orchestration> {
    return this.service.create(ctx.principal, input);
  }

  @Authorized('orchestration:write')
  @Mutation(() => Orchestration, { description: 'The alternate layout’s workflow of agents by stage, run as an orchestration.' })
  createOrchestrationWorkflow(@Arg('input') input: CreateOrchestrationWorkflowInput, @Ctx() ctx: RequestContext): Promise<Orchestration> {
    return this.service.createFromWorkflow(ctx.principal, input);
  }

  @Authorized('orchestration:write')
  @Mutation(() => Orchestration, { description: 'No new task starts; running tasks finish. Only a running orchestration can be paused.' })
  pauseOrchestration(
    @Arg('orchestrationId', () => ID) orchestrationId: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<Orchestration> {
    return this.service.pause(ctx.principal, orchestrationId, reason);
  }

  @Authorized('orchestration:write')
  @Mutation(() => Orchestration, { description: 'A paused orchestration runs again.' })
  resumeOrchestration(@Arg('orchestrationId', () => ID) orchestrationId: string, @Ctx() ctx: RequestContext): Promise<Orchestration> {
    return this.service.resume(ctx.principal, orchestrationId);
  }

  @Authorized('orchestration:write')
  @Mutation(() => Orchestration, { description: 'Cancels a running or paused orchestration and, unless cancelRunningTasks is false, its running tasks.' })
  cancelOrchestration(
    @Arg('orchestrationId', () => ID) orchestrationId: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | null,
    @Arg('cancelRunningTasks', () => Boolean, { nullable: true, defaultValue: true }) cancelRunningTasks: boolean | null,
    @Ctx() ctx: RequestContext,
  ): Promise<Orchestration> {
    return this.service.cancel(ctx.principal, orchestrationId, reason, cancelRunningTasks !== false);
  }

  @Authorized('orchestration:read')
  @Subscription(() => Orchestration, {
    topics: TOPIC.orchestrationUpdated,
    description:
      'Emits the orchestration as it is at once (a finished one: its final state), then on every state and progress change, never an older version than one sent (served by the gateway).',
  })
  orchestrationUpdated(@Args() _args: OrchestrationArgs, @Root() orchestration: Orchestration): Orchestration {
    return orchestration;
  }

  @Authorized('orchestration:read')
  @Subscription(() => Orchestration, {
    topics: TOPIC.orchestrationUpdated,
    description:
      'Emits an orchestration (without task details) on every state and progress change, as orchestrationUpdated does. First sends the latest `limit` orchestrations (as orchestrations lists them), oldest first, each with its version (served by the gateway).',
  })
  orchestrationsUpdated(@FirstStateLimit() _limit: number, @Root() orchestration: Orchestration): Orchestration {
    return orchestration;
  }
}
