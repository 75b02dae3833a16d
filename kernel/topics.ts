/**
 * Every job name (Queue.register/enqueue) and every event topic (EventBus.publish/subscribe) of
 * the platform, with its payload. A name is a contract between processes of possibly different
 * versions (jobs wait in platform.jobs, events cross LISTEN/NOTIFY or Redis), so they are declared
 * in one place: a name not declared here, or a payload of the wrong shape, does not compile.
 * Payloads are small ids and states (subscribers and handlers refetch what they need), declared
 * here rather than imported from the services so that the kernel depends on no subgraph; a
 * status is therefore a plain string.
 */

/** Job name → the `data` it is enqueued with and its handler receives. */
export interface Jobs {
  'control-plane.task': { taskId: string; notifyStart: boolean };
  'control-plane.orchestration.advance': { orchestrationId: string };
  'engine.execute': { executionId: string };
  'engine.resume': { executionId: string };
  'engine.maintenance': Record<string, never>;
  'engine.schedule.fire': { scheduleId: string; /** ISO time this job claims. */ due: string };
  /** Jobs of an older version still queued: handled (as done) so they do not wait forever; never enqueued. */
  'engine.schedule': unknown;
  'promptlib.chain': { executionId: string };
  'webhook.deliver': { deliveryId: string };
}

/** A task's progress as its events carry it (the control plane's TaskProgress). */
export interface TaskStep {
  /** 0 to 100. */
  percentage: number;
  currentStep: string;
  stepsCompleted: number;
  stepsTotal: number;
}

/** What a SharedReadCache publishes when a group (none: every group) changed. */
export interface CacheChanged {
  group?: string;
}

/**
 * Topic → its payload. An entity's `version`, where given, is its row's version after the change
 * (a subscriber already past it need not read the entity again).
 */
export interface Topics {
  /** A job was committed (published by the queue alone): idle workers of `name` claim at once. */
  'queue.wakeup': { name: string };
  /** A running job was cancelled: its holder aborts it. */
  'queue.cancel': { id: string; reason: string };
  /**
   * A running task's event carries the step it is on and when it started (ISO 8601): a short step,
   * the start among them, is announced, not stored (control-plane task.runtime.ts), so readers
   * take it from here.
   */
  'control-plane.task.updated': {
    taskId: string;
    status: string;
    orchestrationId: string | null;
    agentId?: string;
    version?: number;
    progress?: TaskStep | null;
    startedAt?: string;
  };
  'control-plane.orchestration.updated': { orchestrationId: string; status: string; version?: number };
  /** `deleted`: the execution was deleted (its list subscribers take it off their lists). */
  'engine.execution.updated': { executionId: string; status: string; workflowId?: string; version?: number; deleted?: true };
  'engine.execution.cancel': { executionId: string };
  'engine.webhook-triggers.changed': CacheChanged;
  'promptlib.prompt.changed': CacheChanged;
  'links.changed': { slug: string };
  'infra.deployment.updated': { deploymentId: string; serviceId: string; version?: number };
  /**
   * What an infrastructure person may read changed: they were deleted, their roles changed or they
   * left a project (`userId`); none, anyone's may have (a project's visibility). Open streams and
   * subscriptions of persons re-check what they read.
   */
  'infra.access.changed': { userId?: string };
  /** `deleted`: the request was deleted, `version` then one above its last. */
  'feedback.request.updated': { requestId: string; projectId: string; version?: number; deleted?: true };
  'apiKey.changed': { id: string };
}

export type JobName = keyof Jobs;
export type TopicName = keyof Topics;

/** The names as values, for code (services use these, never a string of their own). */
export const JOB = {
  task: 'control-plane.task',
  orchestrationAdvance: 'control-plane.orchestration.advance',
  execute: 'engine.execute',
  resume: 'engine.resume',
  maintenance: 'engine.maintenance',
  scheduleFire: 'engine.schedule.fire',
  legacySchedule: 'engine.schedule',
  chain: 'promptlib.chain',
  webhookDeliver: 'webhook.deliver',
} as const satisfies Record<string, JobName>;

export const TOPIC = {
  queueWakeup: 'queue.wakeup',
  queueCancel: 'queue.cancel',
  taskUpdated: 'control-plane.task.updated',
  orchestrationUpdated: 'control-plane.orchestration.updated',
  executionUpdated: 'engine.execution.updated',
  executionCancel: 'engine.execution.cancel',
  webhookTriggersChanged: 'engine.webhook-triggers.changed',
  promptChanged: 'promptlib.prompt.changed',
  linksChanged: 'links.changed',
  deploymentUpdated: 'infra.deployment.updated',
  infraAccessChanged: 'infra.access.changed',
  feedbackRequestUpdated: 'feedback.request.updated',
  apiKeyChanged: 'apiKey.changed',
} as const satisfies Record<string, TopicName>;

/** The topics a SharedReadCache may use: those whose payload is a CacheChanged. */
export type CacheTopic = { [K in TopicName]: Topics[K] extends CacheChanged ? (CacheChanged extends Topics[K] ? K : never) : never }[TopicName];

// Every declared name has its value above (a name added to an interface only fails here, at once).
type Unlisted<Declared, Listed> = [Exclude<Declared, Listed>] extends [never] ? true : Exclude<Declared, Listed>;
const jobsListed: Unlisted<JobName, (typeof JOB)[keyof typeof JOB]> = true;
const topicsListed: Unlisted<TopicName, (typeof TOPIC)[keyof typeof TOPIC]> = true;
void jobsListed;
void topicsListed;

/** Every registered name, for checks at run time (topics.test.ts). */
export const JOB_NAMES: readonly JobName[] = Object.values(JOB);
export const TOPIC_NAMES: readonly TopicName[] = Object.values(TOPIC);

/**
 * A registry shape: the production ones are the defaults of Queue and EventBus; kernel tests and
 * benches that make up their own names give theirs explicitly (`new Queue<AnyJobs>`).
 */
export type Registry = object;
/** Any name, any payload: for kernel tests and benches of the queue and the bus themselves, never for services. */
export type AnyNames = Record<string, unknown>;
