import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType } from 'type-graphql';

@InputType({ description: 'The body of POST /v1/control-plane/workflows/{workflowId}/schedule.' })
export class WorkflowScheduleInput {
  @Field(() => String, { nullable: true, description: 'Required: 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first.' })
  cron?: string;
  @Field(() => String, { nullable: true, description: 'IANA time zone, default UTC.' }) timezone?: string;
  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Merged into the start item of every run (at most 5 MB).' })
  payload?: Record<string, unknown>;
  @Field(() => Boolean, { nullable: true, description: 'Default true.' }) enabled?: boolean;
}

@InputType({ description: 'Every field optional; a new cron or time zone, or re-enabling, counts from now.' })
export class UpdateWorkflowScheduleInput {
  @Field(() => String, { nullable: true }) cron?: string;
  @Field(() => String, { nullable: true }) timezone?: string;
  @Field(() => GraphQLJSONObject, { nullable: true }) payload?: Record<string, unknown>;
  @Field(() => Boolean, { nullable: true }) enabled?: boolean;
}
