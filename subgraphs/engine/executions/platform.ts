import { AppError } from '../../../kernel/errors';
import type { EventBus } from '../../../kernel/events';
import { TOPIC } from '../../../kernel/topics';
import { NodeError, type PromptTestRequest, type TaskRequest } from '../nodes';

/**
 * What the `agent` and `prompt` nodes ask of the other services, through their public GraphQL
 * operations run as the platform (kernel/operations.ts); the engine never reads their tables.
 */

export interface OperationsLike {
  execute<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>): Promise<T>;
}

const TASK_FIELDS = `taskId status agentId taskType duration
  result { output filesCreated filesModified linesWritten model tokensUsed promptId promptVersion }
  error { code message details }`;

/** A task as TASK_FIELDS selects it. */
interface SelectedTask {
  taskId: string;
  status: string;
  agentId: string;
  taskType: string;
  duration: number | null;
  result: Record<string, unknown> | null;
  error: { code: string; message: string; details: unknown } | null;
}

const EXECUTE_TASK = /* GraphQL */ `
  mutation EngineAgentNode($input: ExecuteTaskInput!) { executeTask(input: $input) { ${TASK_FIELDS} } }`;
const GET_TASK = /* GraphQL */ `query EngineAgentNodeTask($taskId: ID!) { task(taskId: $taskId) { ${TASK_FIELDS} } }`;
const CANCEL_TASK = /* GraphQL */ `
  mutation EngineAgentNodeCancel($taskId: ID!, $reason: String) {
    cancelTask(taskId: $taskId, reason: $reason) {
      taskId
      status
    }
  }
`;
/** A prompt test as TEST_PROMPT selects it. */
interface SelectedPromptTest {
  testId: string;
  promptId: string;
  version: number;
  output: string;
  metadata: Record<string, unknown>;
}

const TEST_PROMPT = /* GraphQL */ `
  mutation EnginePromptNode($promptId: ID!, $input: TestPromptInput!) {
    testPrompt(promptId: $promptId, input: $input) {
      testId
      promptId
      version
      output
      metadata {
        model
        tokensUsed
        latency
        temperature
      }
    }
  }
`;

/**
 * A task is followed through the control plane's taskUpdated events: it is read again when one
 * says it has ended, and — should an event be lost between processes — after RECHECK_MS without one.
 */
export const TASK_RECHECK_MS = 10_000;
const ENDED = new Set(['completed', 'failed', 'cancelled']);

export type TaskEvents = Pick<EventBus, 'subscribe'>;

/** A failure of the other service, as the node's failure (its code and details kept). */
function asNodeError(err: unknown, what: string): unknown {
  if (err instanceof AppError) return new NodeError(`${what}: ${err.message}`, { code: err.code, ...err.details });
  return err;
}

/**
 * Starts the task (async, so that its id is known at once), then waits for its end event and
 * reads it. When the execution is canceled (or its time runs out) the task is cancelled too. A
 * failed or cancelled task fails the node with the task's error.
 */
export async function runTask(ops: OperationsLike, events: TaskEvents, req: TaskRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
  let task: SelectedTask;
  try {
    const input = {
      agentId: req.agentId,
      taskType: req.taskType,
      context: req.context,
      execution: { mode: 'async', ...(req.timeout !== undefined ? { timeout: req.timeout } : {}), ...(req.priority ? { priority: req.priority } : {}) },
    };
    task = (await ops.execute<{ executeTask: SelectedTask }>(EXECUTE_TASK, { input })).executeTask;
  } catch (err) {
    throw asNodeError(err, `The agent task could not start`);
  }
  // It may have ended between the start's answer and the subscription: read once after subscribing.
  let ended = true;
  let wake: (() => void) | undefined;
  const unsubscribe = events.subscribe(TOPIC.taskUpdated, (event) => {
    if (event.taskId !== task.taskId || !ENDED.has(event.status)) return;
    ended = true;
    wake?.();
  });
  try {
    while (task.status === 'queued' || task.status === 'running') {
      if (!ended) await new Promise<void>((resolve) => (wake = untilAbortOr(TASK_RECHECK_MS, signal, resolve)));
      wake = undefined;
      ended = false;
      if (signal.aborted) {
        await ops.execute(CANCEL_TASK, { taskId: task.taskId, reason: 'the workflow execution stopped' }).catch(() => undefined);
        throw signal.reason ?? new Error('aborted');
      }
      try {
        task = (await ops.execute<{ task: SelectedTask }>(GET_TASK, { taskId: task.taskId })).task;
      } catch (err) {
        throw asNodeError(err, `Task ${task.taskId} could not be read`);
      }
    }
  } finally {
    unsubscribe();
  }
  if (task.status !== 'completed') {
    const error = task.error ?? { code: 'agent_execution_failed', message: `The task was ${task.status}`, details: {} };
    throw new NodeError(`Task ${task.taskId} (${task.agentId} ${task.taskType}) ${task.status}: ${error.message}`, {
      taskId: task.taskId,
      status: task.status,
      code: error.code,
      taskError: error,
    });
  }
  return { taskId: task.taskId, agentId: task.agentId, taskType: task.taskType, status: task.status, result: task.result, duration: task.duration };
}

/** Calls `done` once: after `ms`, on abort, or when the returned function is called. */
function untilAbortOr(ms: number, signal: AbortSignal, done: () => void): () => void {
  const timer = setTimeout(finish, ms);
  signal.addEventListener('abort', finish, { once: true });
  if (signal.aborted) finish();
  function finish() {
    clearTimeout(timer);
    signal.removeEventListener('abort', finish);
    done();
  }
  return finish;
}

/** One test run of a stored prompt; the item is `{output, metadata}` (metadata adds promptId, version, testId). */
export async function runPromptTest(ops: OperationsLike, req: PromptTestRequest, signal: AbortSignal): Promise<Record<string, unknown>> {
  const input: Record<string, unknown> = { variables: req.variables };
  for (const k of ['model', 'temperature', 'maxTokens', 'version'] as const) if (req[k] !== undefined) input[k] = req[k];
  let run: SelectedPromptTest;
  try {
    // The model call cannot be aborted from here: a canceled execution stops waiting for it.
    let onAbort!: () => void;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason ?? new Error('aborted'));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      run = await Promise.race([
        ops.execute<{ testPrompt: SelectedPromptTest }>(TEST_PROMPT, { promptId: req.promptId, input }).then((d) => d.testPrompt),
        aborted,
      ]);
    } finally {
      signal.removeEventListener('abort', onAbort);
      aborted.catch(() => undefined);
    }
  } catch (err) {
    if (signal.aborted) throw err;
    throw asNodeError(err, `The prompt ${req.promptId} test failed`);
  }
  return { output: run.output, metadata: { ...run.metadata, promptId: run.promptId, version: run.version, testId: run.testId } };
}
