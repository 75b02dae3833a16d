import { ownEntry } from '../../../kernel/names';
import type { ExecutionStatus } from './writes.store';

/**
 * The two spellings of an execution's status, mapped in this one place: the engine's (running,
 * success, error, waiting, canceled) and the control plane's (running, completed, failed,
 * waiting, cancelled). Each surface takes and gives its own spelling.
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

export function controlPlaneStatus(status: string): string {
  return CONTROL_PLANE_STATUS[status as ExecutionStatus] ?? status;
}

/** The engine's status for a control-plane status (undefined: not one). */
export function fromControlPlaneStatus(status: string): ExecutionStatus | undefined {
  return ownEntry(FROM_CONTROL_PLANE, status);
}

/** The engine's own address of an execution (relative to the platform, like the engine's other URLs). */
export function engineExecutionUrl(executionId: string): string {
  return `/v1/engine/executions/${executionId}`;
}
