/** n8n's variables: text values by key, read by workflows as `$vars`. */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { VariableService, type VariableFields } from './service';
export { type VariableView } from './store';
export { UpdateWorkflowVariableInput, WorkflowVariable, WorkflowVariableDeletion, WorkflowVariableInput } from './types';
