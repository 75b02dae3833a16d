/** Schedule triggers: the schedules of active workflows and the jobs that start their executions on time. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { ScheduleResolver } from './resolver';
export { WorkflowSchedules } from './service';
