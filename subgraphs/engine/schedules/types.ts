import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A cron schedule of a workflow: registered through the control plane, or a scheduleTrigger node’s (nodeName set).' })
export class WorkflowSchedule {
  @Field(() => ID) scheduleId: string;
  @Field(() => ID) workflowId: string;
  @Field({ description: '5 fields, or 6 with seconds first (cron-parser).' }) cron: string;
  @Field({ description: 'IANA time zone the cron is read in (default UTC).' }) timezone: string;
  @Field(() => String, { nullable: true, description: 'The next due time with the time zone’s offset, e.g. 2026-11-23T09:00:00+01:00; null when disabled.' })
  nextRunAt: string | null;
  @Field(() => Date, { nullable: true, description: 'The next due time in UTC.' }) nextRunAtUtc: Date | null;
  @Field() enabled: boolean;
  @Field(() => GraphQLJSONObject, { description: 'Merged into the start item of every run.' }) payload: Record<string, unknown>;
  @Field(() => String, { nullable: true, description: 'The scheduleTrigger node this schedule belongs to (changed through the workflow).' })
  nodeName: string | null;
  @Field(() => Date, { nullable: true, description: 'When it last started an execution.' }) lastRunAt: Date | null;
  @Field(() => Date, { nullable: true, description: 'The last due time handled (run, or passed over while the workflow was inactive).' })
  lastScheduledFor: Date | null;
  @Field(() => ID, { nullable: true }) lastExecutionId: string | null;
  @Field(() => Int, { description: 'Executions it started.' }) runs: number;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
}

@ObjectType()
export class WorkflowScheduleDeletion {
  @Field(() => ID) scheduleId: string;
  @Field() deletedAt: Date;
}
