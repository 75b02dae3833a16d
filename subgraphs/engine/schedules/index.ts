/** Schedule triggers: the schedules of active workflows and the jobs that start their executions on time. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { UpdateWorkflowScheduleInput, WorkflowScheduleInput } from './inputs';
export { type ScheduleView, WorkflowSchedules } from './service';
export { WorkflowSchedule, WorkflowScheduleDeletion } from './types';
