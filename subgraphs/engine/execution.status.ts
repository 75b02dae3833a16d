import { EXECUTION_STATUSES, type ExecutionStatus } from './execution.entity';

/**
 * The two spellings of an execution's status, mapped in this one place: the engine's (spec 2:
 * running, success, error, waiting, canceled) and the control plane's (spec 1: running,
 * completed, failed, waiting, cancelled). Filters accept either spelling; they do not overlap.
 */

export const CONTROL_PLANE_STATUS: Record<ExecutionStatus, string> = {
  running: 'running',
  success: 'completed',
  error: 'failed',
  waiting: 'waiting',
  canceled: 'cancelled',
};

const FROM_CONTROL_PLANE: Record<string, ExecutionStatus> = Object.fromEntries(
  Object.entries(CONTROL_PLANE_STATUS).map(([engine, cp]) => [cp, engine as ExecutionStatus]),
);

export const CONTROL_PLANE_STATUSES = Object.values(CONTROL_PLANE_STATUS);
/** Every accepted status filter value, both spellings. */
export const ANY_STATUS = [...new Set([...EXECUTION_STATUSES, ...CONTROL_PLANE_STATUSES])];

export function controlPlaneStatus(status: string): string {
  return CONTROL_PLANE_STATUS[status as ExecutionStatus] ?? status;
}

/** The engine's status for a filter value in either spelling (undefined: not a status). */
export function engineStatus(status: string): ExecutionStatus | undefined {
  if ((EXECUTION_STATUSES as readonly string[]).includes(status)) return status as ExecutionStatus;
  return FROM_CONTROL_PLANE[status];
}

/** A node's run status in the control plane's spelling (success -> completed, error -> failed). */
export function controlPlaneNodeStatus(status: string): string {
  return status === 'success' ? 'completed' : status === 'error' ? 'failed' : status;
}

/** The engine's own address of an execution (relative to the platform, like the engine's other URLs). */
export function engineExecutionUrl(executionId: string): string {
  return `/v1/engine/executions/${executionId}`;
}
