/** Workflow definitions and their versions: rules, rows, GraphQL, and the permissions a workflow's nodes need to run. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { checkRunAs, type KeyLookup, NODE_PERMISSIONS, runAsOf } from './authority';
export { CreateWorkflowInput, UpdateWorkflowInput, WorkflowExportArgs, WorkflowListArgs } from './inputs';
export { type WorkflowHooks, workflowNotFound, type WorkflowRecord, WorkflowService, type WorkflowVersion } from './service';
export { Workflow, WorkflowDeletion, WorkflowExport, WorkflowPage, WorkflowStatistics } from './types';
