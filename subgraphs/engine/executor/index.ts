/** The engine loop with no database: a definition checked and compiled, every node type by name, the budgets of a run, and the walk over the graph. */

export {
  BUDGET_DESCRIPTIONS,
  BUDGET_VARIABLES,
  BudgetExceeded,
  type BudgetName,
  checkBinary,
  checkRunData,
  durationLimit,
  type ExecutionBudgets,
  Yielder,
} from '../nodes';
export { compile, descendants, validateDefinition } from './compile';
export { chooseStart, WorkflowExecutor } from './loop';
export { type ExecutionErrorInfo, type LogEntry, type NodeRun, type Progress, type RunOutcome, type StoredRun } from './types';
