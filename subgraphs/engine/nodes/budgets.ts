import type { Config } from '../../../kernel/config';

/**
 * What one execution may use (kernel/config.ts, ENGINE_EXECUTION_MAX_*): items per node output,
 * run data stored, runs of any one node (loop turns), and running time (waits not counted; a
 * workflow's `settings.executionTimeout` may lower it). Crossing one fails the execution
 * (EXECUTION_FAILED) with the budget's name, its limit and the value that crossed it in the
 * error's details, as soon as it is crossed: item counts as a node produces its output (before
 * anything is stored), run data before it is written.
 */
export type ExecutionBudgets = Config['engine']['budgets'];

export type BudgetName = keyof ExecutionBudgets;

/** The variable each budget is configured by: the name errors and the executionBudgets query give. */
export const BUDGET_VARIABLES: Readonly<Record<BudgetName, string>> = {
  maxItemsPerOutput: 'ENGINE_EXECUTION_MAX_ITEMS_PER_OUTPUT',
  maxRunDataBytes: 'ENGINE_EXECUTION_MAX_RUN_DATA_BYTES',
  maxLoopTurns: 'ENGINE_EXECUTION_MAX_LOOP_TURNS',
  maxDurationMs: 'ENGINE_EXECUTION_MAX_DURATION_MS',
  maxBinaryBytes: 'BINARY_DATA_MAX_BYTES',
  maxExecutionBinaryBytes: 'BINARY_DATA_MAX_EXECUTION_BYTES',
};

/** Each budget as a user reads it (the executionBudgets query). */
export const BUDGET_DESCRIPTIONS: Readonly<Record<BudgetName, { unit: string; description: string }>> = {
  maxItemsPerOutput: { unit: 'items', description: 'Items one run of a node may output, all its outputs together; checked as they are made.' },
  maxRunDataBytes: { unit: 'bytes', description: 'Run data one execution may keep: node outputs and the latest context of each node, as JSON.' },
  maxLoopTurns: { unit: 'runs of one node', description: 'Times any one node may run in one execution: a node in a loop runs once per turn.' },
  maxDurationMs: {
    unit: 'ms',
    description: "Time one execution may run, waits not counted; a workflow's settings.executionTimeout (seconds) may lower it.",
  },
  maxBinaryBytes: { unit: 'bytes', description: "One file of an item's binary data, checked when the node that made it ends." },
  maxExecutionBinaryBytes: { unit: 'bytes', description: 'All the binary data one execution keeps (each file counted once).' },
};

/** `details.reason` of each budget's error (the loop and time limits kept the reasons they had). */
const REASONS: Readonly<Record<BudgetName, string>> = {
  maxItemsPerOutput: 'output_limit',
  maxRunDataBytes: 'run_data_limit',
  maxLoopTurns: 'loop_limit',
  maxDurationMs: 'timeout',
  maxBinaryBytes: 'binary_limit',
  maxExecutionBinaryBytes: 'binary_limit',
};

/** No limits: what a run without configured budgets (a unit test's) gets. */
export const UNLIMITED: ExecutionBudgets = {
  maxItemsPerOutput: Number.POSITIVE_INFINITY,
  maxRunDataBytes: Number.POSITIVE_INFINITY,
  maxLoopTurns: Number.POSITIVE_INFINITY,
  maxDurationMs: Number.POSITIVE_INFINITY,
  maxBinaryBytes: Number.POSITIVE_INFINITY,
  maxExecutionBinaryBytes: Number.POSITIVE_INFINITY,
};

/**
 * A budget crossed: thrown where it is found (a node producing items, the executor counting a
 * node's runs, the runner measuring run data) and turned into the execution's error by the loop;
 * never retried, continued (continueOnFail, onError) or caught by a node.
 */
export class BudgetExceeded extends Error {
  constructor(
    readonly budget: BudgetName,
    readonly limit: number,
    readonly value: number,
    message: string,
    /** Another name for the limit that applied (`settings.executionTimeout`, lower than the platform's). */
    readonly setBy: string = BUDGET_VARIABLES[budget],
    readonly node?: { name: string; type: string },
  ) {
    super(message);
    this.name = 'BudgetExceeded';
  }

  /** The execution's error (an ExecutionErrorInfo; spelled out here so that types.ts may import this file). */
  info(): { code: 'EXECUTION_FAILED'; message: string; node?: string; nodeType?: string; details: Record<string, unknown> } {
    return {
      code: 'EXECUTION_FAILED',
      message: this.message,
      ...(this.node ? { node: this.node.name, nodeType: this.node.type } : {}),
      details: { reason: REASONS[this.budget], budget: this.setBy, limit: this.limit, value: this.value },
    };
  }
}

/** A node's output of `count` items (so far) against the budget. */
export function checkItems(node: { name: string; type: string }, count: number, budgets: ExecutionBudgets): void {
  const limit = budgets.maxItemsPerOutput;
  if (count <= limit) return;
  throw new BudgetExceeded(
    'maxItemsPerOutput',
    limit,
    count,
    `Node "${node.name}" produced more than ${limit} items in one run (${count} so far): the execution's budget ${BUDGET_VARIABLES.maxItemsPerOutput} is ${limit}`,
    undefined,
    node,
  );
}

/** Run data about to be kept, `total` bytes with it, against the budget. */
export function checkRunData(total: number, budgets: ExecutionBudgets, node: { name: string; type: string }): void {
  const limit = budgets.maxRunDataBytes;
  if (total <= limit) return;
  throw new BudgetExceeded(
    'maxRunDataBytes',
    limit,
    total,
    `The execution's run data would reach ${total} bytes with what node "${node.name}" keeps: its budget ${BUDGET_VARIABLES.maxRunDataBytes} is ${limit} bytes`,
    undefined,
    node,
  );
}

/** A file `bytes` long that node `node` made, `total` bytes of binary data with it, against the two binary budgets. */
export function checkBinary(bytes: number, total: number, budgets: ExecutionBudgets, node: { name: string; type: string }, key: string): void {
  if (bytes > budgets.maxBinaryBytes) {
    throw new BudgetExceeded(
      'maxBinaryBytes',
      budgets.maxBinaryBytes,
      bytes,
      `Node "${node.name}" made a file of ${bytes} bytes (binary field '${key}'): the limit ${BUDGET_VARIABLES.maxBinaryBytes} is ${budgets.maxBinaryBytes} bytes per file`,
      undefined,
      node,
    );
  }
  if (total > budgets.maxExecutionBinaryBytes) {
    throw new BudgetExceeded(
      'maxExecutionBinaryBytes',
      budgets.maxExecutionBinaryBytes,
      total,
      `The execution's binary data would reach ${total} bytes with the files node "${node.name}" made: the limit ${BUDGET_VARIABLES.maxExecutionBinaryBytes} is ${budgets.maxExecutionBinaryBytes} bytes`,
      undefined,
      node,
    );
  }
}

/**
 * The running time an execution gets: the platform's budget, or the workflow's n8n setting
 * `executionTimeout` (seconds) when that is lower; `limit` is in the unit of what set it.
 */
export function durationLimit(budgets: ExecutionBudgets, settings: { executionTimeout?: unknown }): { ms: number; setBy: string; limit: number } {
  const seconds = settings.executionTimeout;
  if (typeof seconds === 'number' && seconds > 0 && seconds * 1000 < budgets.maxDurationMs) {
    return { ms: seconds * 1000, setBy: 'settings.executionTimeout', limit: seconds };
  }
  return { ms: budgets.maxDurationMs, setBy: BUDGET_VARIABLES.maxDurationMs, limit: budgets.maxDurationMs };
}

const YIELD_AFTER_MS = 20;

/**
 * Lets the event loop run other work (HTTP requests, /health) when the caller has held it for
 * YIELD_AFTER_MS: loops over node runs call it between steps, since a chain of resolved promises
 * never gives timers and I/O a turn.
 */
export class Yielder {
  private since = performance.now();

  async maybe(): Promise<void> {
    if (performance.now() - this.since < YIELD_AFTER_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}
