// Its GraphQL class's decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';
import { Field, ObjectType } from 'type-graphql';
import type { Task } from './task.types';

@ObjectType({ description: 'A line of a task’s log: when, how serious (info, warning or error), and what happened.' })
export class TaskLogEntry {
  @Field() at: Date;
  @Field({ description: 'info, warning or error.' }) level: 'info' | 'warning' | 'error';
  @Field() message: string;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/**
 * A task's log, read from what its row records: queued, started, the model's answer and the files
 * written, and how it ended (with the step it had reached). Nothing more is written while a task
 * runs, so the log costs the runtime nothing.
 */
export function taskLog(t: Task): TaskLogEntry[] {
  const log: TaskLogEntry[] = [];
  const add = (at: Date | null, message: string, level: TaskLogEntry['level'] = 'info') => {
    if (at) log.push({ at, level, message });
  };
  const stage = t.orchestrationId ? ` for the ${t.stage} stage of orchestration ${t.orchestrationId}` : '';
  add(t.createdAt, `Queued (${t.priority} priority, ${t.mode}, timeout ${t.timeout} s)${stage}`);
  add(t.startedAt, `Started on ${t.agentId}`);
  const r = t.result;
  if (r) {
    add(t.completedAt, `${r.model} answered prompt ${r.promptId} v${r.promptVersion} with ${plural(r.tokensUsed, 'token')}`);
    add(t.completedAt, `Wrote ${plural(r.filesCreated.length + r.filesModified.length, 'file')} (${r.linesWritten} lines)`);
    add(t.completedAt, `Completed in ${t.duration ?? 0} s`);
  }
  const step = t.progress
    ? ` at step ${Math.min(t.progress.stepsCompleted + 1, t.progress.stepsTotal)} of ${t.progress.stepsTotal} (${t.progress.currentStep})`
    : '';
  if (t.error) add(t.failedAt, `Failed${step}: ${t.error.code}: ${t.error.message}`, 'error');
  if (t.cancelledAt) add(t.cancelledAt, `Cancelled${step}${t.cancelReason ? `: ${t.cancelReason}` : ''}`, 'warning');
  return log.sort((a, b) => a.at.getTime() - b.at.getTime());
}
