import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { FirstStateLimit, pageInfo } from '../../../kernel/graphql-types';
import { load } from '../../../kernel/loaders';
import type { RequestContext } from '../../../kernel/subgraph';
import type { TaskRecord } from './task.store';
import { ExecuteTaskInputType, TaskListArgs } from './task.inputs';
import { type ExecuteTaskInput, type TaskService } from './task.service';
import { Task, TaskArtifact, TaskList } from './task.types';
import { TaskLogEntry, taskLog } from './task.log';
import { TOPIC } from '../../../kernel/topics';

export function toTask(t: TaskRecord): Task {
  const unfinished = t.status === 'queued' || t.status === 'running';
  const from = t.startedAt ?? t.createdAt;
  return {
    taskId: t.id,
    status: t.status,
    agentId: t.agentId,
    taskType: t.taskType,
    priority: t.priority,
    mode: t.mode,
    timeout: t.timeoutSeconds,
    context: t.context,
    forge: (t.forge as Record<string, unknown> | null) ?? null,
    progress: t.progress,
    result: t.result,
    // details is always an object for clients, also on rows written before it was (or by hand).
    error: t.error ? { ...t.error, details: t.error.details ?? {} } : null,
    createdAt: t.createdAt,
    startedAt: t.startedAt,
    completedAt: t.completedAt,
    failedAt: t.failedAt,
    cancelledAt: t.cancelledAt,
    cancelReason: t.cancelReason,
    estimatedDuration: t.estimatedDuration,
    estimatedCompletionAt: unfinished ? new Date(from.getTime() + t.estimatedDuration * 1000) : null,
    duration: t.durationMs === null ? null : t.durationMs / 1000,
    orchestrationId: t.orchestrationId,
    stage: t.stage,
    traceId: t.traceId,
    version: t.version,
  };
}

@Resolver(() => Task)
export class TaskResolver {
  constructor(private readonly taskService: TaskService) {}

  @Authorized('agent:execute')
  @Mutation(() => Task, {
    description: 'Runs an agent task: async answers at once (queued), sync waits for the end (at most 300 s, then the task as it is).',
  })
  async executeTask(@Arg('input', () => ExecuteTaskInputType) input: ExecuteTaskInputType, @Ctx() ctx: RequestContext): Promise<Task> {
    return toTask(await this.taskService.execute(ctx.principal, input as ExecuteTaskInput));
  }

  @Authorized('agent:execute')
  @Mutation(() => Task, { description: 'Cancels a queued or running task (its model call is aborted); a finished task is a 409.' })
  async cancelTask(
    @Arg('taskId', () => ID) taskId: string,
    @Arg('reason', () => String, { nullable: true }) reason: string | undefined,
    @Ctx() ctx: RequestContext,
  ): Promise<Task> {
    return toTask(await this.taskService.cancel(ctx.principal, taskId, reason));
  }

  @Authorized('agent:read')
  @Query(() => Task, { description: 'A task in any state (a failed task is a result, not an error).' })
  async task(@Arg('taskId', () => ID) taskId: string, @Ctx() ctx: RequestContext): Promise<Task> {
    return toTask(await this.taskService.get(ctx.principal, taskId));
  }

  @Authorized('agent:read')
  @Query(() => TaskList, { description: 'Tasks, filtered, sorted (createdAt, completedAt or duration) and paged.' })
  async tasks(@Args() args: TaskListArgs, @Ctx() ctx: RequestContext): Promise<TaskList> {
    const page = await this.taskService.list(ctx.principal, args);
    return { tasks: page.tasks.map(toTask), pagination: pageInfo(page.total, page.limit, page.offset) };
  }

  @Authorized('agent:read')
  @Subscription(() => Task, {
    topics: TOPIC.taskUpdated,
    description:
      'Emits the task as it is at once (a finished one: its final state), then on every state and progress change, never an older version than one sent (served by the gateway).',
  })
  taskUpdated(@Arg('taskId', () => ID) _taskId: string, @Root() task: Task): Task {
    return task;
  }

  @Authorized('agent:read')
  @Subscription(() => Task, {
    topics: TOPIC.taskUpdated,
    description:
      'Emits a task of the agent (of any agent, when none is given) on every state and progress change, as taskUpdated does. First sends the latest `limit` tasks (as tasks lists them, newest first), oldest first, each with its version; an unknown agent is an error (served by the gateway).',
  })
  tasksUpdated(@Arg('agentId', () => ID, { nullable: true }) _agentId: string | null, @FirstStateLimit() _limit: number, @Root() task: Task): Task {
    return task;
  }

  @FieldResolver(() => [TaskArtifact], { description: 'The files the task wrote, with their content.' })
  artifacts(@Root() task: Task, @Ctx() ctx: RequestContext): Promise<TaskArtifact[]> {
    return load(ctx, this.taskService.artifactsByTask, task.taskId);
  }

  @FieldResolver(() => [TaskLogEntry], { description: 'What happened to the task, oldest first: queued, started, its step, the model’s answer, its end.' })
  logs(@Root() task: Task): TaskLogEntry[] {
    return taskLog(task);
  }
}
