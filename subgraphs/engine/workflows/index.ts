/** Workflow definitions and their versions: rules, rows, GraphQL, and the permissions a workflow's nodes need to run. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { checkRunAs, type KeyLookup, NODE_PERMISSIONS, runAsOf } from './authority';
export { WorkflowListArgs } from './inputs';
export { toWorkflow, WorkflowResolver } from './resolver';
export { type WorkflowHooks, workflowNotFound, WorkflowService, type WorkflowVersion } from './service';
export { WorkflowPage } from './types';
