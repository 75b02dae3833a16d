/** Agent tasks: their rules and rows, the runtime that runs them in the agent pool, and the answer read into files. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { TaskResolver } from './task.resolver';
export { TaskRuntime } from './task.runtime';
export { AGENT_CONCURRENCY, TaskService, present } from './task.service';
export { TASK_TALLY, taskStore, type NewTask } from './task.store';
export { safePath } from './task.files';
export { buildResult } from './task.results';
