/** The engine loop with no database: a definition checked and compiled, every node type by name, and the walk over the graph. */

export { compile, descendants, validateDefinition } from './compile';
export { chooseStart, WorkflowExecutor } from './loop';
export { type ExecutionErrorInfo, type LogEntry, type NodeRun, type Progress, type RunOutcome, type StoredRun } from './types';
