import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { alsoOn } from '../../../kernel/auth/principal';
import type { RequestContext } from '../../../kernel/subgraph';
import { isoWithOffset } from '../nodes';
import {
  UpdateWorkflowScheduleInput,
  WorkflowScheduleInput,
  type ScheduleView,
  type WorkflowSchedules,
  WorkflowSchedule,
  WorkflowScheduleDeletion,
} from '../schedules';

export function toSchedule(v: ScheduleView): WorkflowSchedule {
  return {
    scheduleId: v.id,
    workflowId: v.workflowId,
    cron: v.cron,
    timezone: v.timezone,
    nextRunAt: v.nextRunAt ? isoWithOffset(v.nextRunAt, v.timezone) : null,
    nextRunAtUtc: v.nextRunAt,
    enabled: v.enabled,
    payload: v.payload,
    nodeName: v.nodeName,
    lastRunAt: v.lastRunAt,
    lastScheduledFor: v.lastScheduledFor,
    lastExecutionId: v.lastExecutionId,
    runs: v.runs,
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
  };
}

/** Schedules: the engine owns them; the control plane's paths expose them (control-plane keys accepted). */
@Resolver(() => WorkflowSchedule)
export class ScheduleResolver {
  constructor(private readonly schedules: WorkflowSchedules) {}

  @Authorized('workflow:write', alsoOn('control-plane'))
  @Mutation(() => WorkflowSchedule, {
    description:
      'Runs the workflow (by id or slug) on a cron schedule while it is active: SCHEDULE_INVALID for a bad cron, validation_error for an unknown time zone.',
  })
  async createWorkflowSchedule(
    @Arg('workflowId', () => ID) workflowId: string,
    @Arg('input', () => WorkflowScheduleInput) input: WorkflowScheduleInput,
    @Ctx() ctx: RequestContext,
  ): Promise<WorkflowSchedule> {
    return toSchedule(await this.schedules.create(ctx.principal, workflowId, input));
  }

  @Authorized('workflow:read', alsoOn('control-plane'))
  @Query(() => [WorkflowSchedule], { description: 'A workflow’s schedules (its scheduleTrigger nodes’ included), oldest first.' })
  async workflowSchedules(@Arg('workflowId', () => ID) workflowId: string): Promise<WorkflowSchedule[]> {
    return (await this.schedules.list(workflowId)).map(toSchedule);
  }

  @Authorized('workflow:read', alsoOn('control-plane'))
  @Query(() => WorkflowSchedule)
  async workflowSchedule(@Arg('scheduleId', () => ID) scheduleId: string): Promise<WorkflowSchedule> {
    return toSchedule(await this.schedules.get(scheduleId));
  }

  @Authorized('workflow:write', alsoOn('control-plane'))
  @Mutation(() => WorkflowSchedule, { description: 'A scheduleTrigger node’s schedule is changed through its workflow (409 here).' })
  async updateWorkflowSchedule(
    @Arg('scheduleId', () => ID) scheduleId: string,
    @Arg('input', () => UpdateWorkflowScheduleInput) input: UpdateWorkflowScheduleInput,
  ): Promise<WorkflowSchedule> {
    return toSchedule(await this.schedules.update(scheduleId, input));
  }

  @Authorized('workflow:write', alsoOn('control-plane'))
  @Mutation(() => WorkflowScheduleDeletion)
  deleteWorkflowSchedule(@Arg('scheduleId', () => ID) scheduleId: string): Promise<WorkflowScheduleDeletion> {
    return this.schedules.delete(scheduleId);
  }
}
