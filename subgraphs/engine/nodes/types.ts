import type { GuardedRequestInit, GuardedResponse } from '../../../kernel/outbound';
import type { ExpressionData, Item } from '../expressions';
import type { CodeRunner } from '../sandbox';
import type { WorkflowNode } from './definition';
import type { WorkflowStaticData } from './static-data';

export type { Item } from '../expressions';

/** The answer a workflow gives to the webhook request that started it (respondToWebhook). */
export interface WebhookReply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** What a node may use besides its items: no node reaches the database or the network directly. */
export interface NodeServices {
  /** The sandbox for code nodes (expressions have their own). */
  codeSandbox: CodeRunner;
  /** The time a timer is counted from (the kernel's clock, kernel/clock.ts); the wall clock when absent. */
  now?(): Date;
  /** Outbound HTTP through the SSRF guard (kernel/outbound.ts) under the platform's policy. */
  fetch(url: string, init: GuardedRequestInit): Promise<GuardedResponse>;
  /** Runs another workflow with these items and returns the items of its last node. */
  runWorkflow(workflowId: string, items: Item[], signal: AbortSignal): Promise<Item[]>;
  /** Runs a workflow given as JSON (our format or an n8n export; checked as an import is) and returns the items of its last node. */
  runInline?(workflow: unknown, items: Item[], signal: AbortSignal): Promise<Item[]>;
  /** Runs a control-plane agent task to its end (the control plane's public executeTask). */
  runTask?(request: TaskRequest, signal: AbortSignal): Promise<Record<string, unknown>>;
  /** Runs a prompt-library test (the prompt library's public testPrompt). */
  testPrompt?(request: PromptTestRequest, signal: AbortSignal): Promise<Record<string, unknown>>;
  /** The one folder n8n's Read/Write Files from Disk may touch (FILES_DIR). */
  filesDir?: string;
  /** The largest file a node may make (BINARY_DATA_MAX_BYTES): nodes that decode files the user gives check it first. */
  maxBinaryBytes?: number;
  /** The stored credentials a node names in `node.credentials` (credentials/). */
  credentials?: NodeCredentials;
}

/** A node's reference to a stored credential: `node.credentials[<type>]`. */
export interface CredentialRef {
  id: string;
  name: string;
}

/**
 * A credential's data, decrypted for the call that asks: the node applies it to its request and
 * never puts it into items, logs or errors. Failures are NodeErrors naming the credential only.
 */
export interface NodeCredentials {
  /** The fields of the credential `ref` of `type` (a NodeError when it no longer exists or is of another type). */
  data(type: string, ref: CredentialRef): Promise<Record<string, string>>;
  /**
   * An OAuth2 credential's access token: the stored one while it is valid, else a new one (the
   * client-credentials grant, or the refresh token), stored for the next call. `renew` after the
   * server refused the token (401) gets a new one even if it has not expired.
   */
  accessToken(ref: CredentialRef, signal: AbortSignal, renew?: boolean): Promise<string>;
}

export interface TaskRequest {
  agentId: string;
  taskType: string;
  context: Record<string, unknown>;
  /** Seconds the task may run (5 to 3600; the control plane's default 300). */
  timeout?: number;
  priority?: string;
}

export interface PromptTestRequest {
  promptId: string;
  variables: Record<string, unknown>;
  model?: string;
  temperature?: number;
  maxTokens?: number;
  version?: number;
}

export interface NodeContext {
  node: WorkflowNode;
  /** Items by input index (most nodes have one input). */
  inputs: Item[][];
  /** inputs[0]. */
  items: Item[];
  /**
   * The node's parameters with expressions resolved, one copy per item of the main input
   * (or a single copy for `[0]` when there are none). Do not modify them.
   */
  parameters(itemIndexes?: number[]): Promise<Record<string, unknown>[]>;
  /** The data expressions see (code nodes pass it into their sandbox). */
  expressionData: ExpressionData;
  signal: AbortSignal;
  services: NodeServices;
  /**
   * Throws the execution's budget error once an output would hold more than the items it allows
   * (nodes/budgets.ts): nodes that multiply items (splitting a list, combining inputs) call it with the
   * count they are about to reach, before they build the items.
   */
  checkOutput(count: number): void;
  log(message: string, level?: 'debug' | 'info' | 'warn' | 'error'): void;
  /**
   * n8n nodes: the node goes on when an item fails (onError continueRegularOutput or
   * continueErrorOutput): that item becomes `{ json: { error: message }, pairedItem: { item: i } }`
   * in the output instead of failing the node, as n8n's nodes do.
   */
  continueOnFail: boolean;
  /**
   * n8n's node context (`getContext('node')`, executionOrder v1 only): data the node keeps across
   * its runs within one execution (Split In Batches' remaining items). JSON values only: it is
   * stored with each run, so that a resumed execution continues with it.
   */
  state?: Record<string, unknown>;
  /** Which node run fed each input (n8n's getInputSourceData; executionOrder v1 only). */
  inputSource?: readonly (SourceData | null)[];
  /** Paired items and run data of the current execution (executionOrder v1 only; executor/loop.ts `Lineage`). */
  lineage?: ItemLineage;
  /** n8n's workflow static data (`$getWorkflowStaticData`); absent where nothing keeps it. */
  staticData?: WorkflowStaticData;
}

/** Where a node run's input came from: n8n's ISourceData. */
export interface SourceData {
  previousNode: string;
  previousNodeOutput: number;
  previousNodeRun: number;
}

/**
 * n8n's paired item, as items may carry it: `item` (and `input`) index the input items of the
 * node run that produced it; `sourceOverwrite` names another node run whose output `item`
 * indexes (Split In Batches returns items it received in an earlier run).
 */
export interface PairedItemData {
  item: number;
  input?: number;
  sourceOverwrite?: SourceData;
}

/** What expressions need beyond ExpressionData to follow items back through the runs (v1 order). */
export interface ItemLineage {
  /** The run index of the node being run (n8n's `$runIndex`). */
  readonly runIndex: number;
  /**
   * The item of `node` that input item `itemIndex` of the running node came from (n8n's
   * `$('node').item`, `$node["node"].json`): follows the paired items back through the node
   * runs that fed this one; when the chain is broken, the item of `node`'s last run at the same
   * index. Undefined when `node` has not run.
   */
  pairedItem(node: string, itemIndex: number): Item | undefined;
  /** A node's context (`$node["Loop"].context["noItemsLeft"]`), or undefined when it has none. */
  context(node: string): Readonly<Record<string, unknown>> | undefined;
}

/** What of the last node's output a webhook answers in lastNode mode (n8n's `responseData`). */
export type LastNodeData = 'firstEntryJson' | 'firstEntryBinary' | 'allEntries' | 'noData';
/** When a webhook answers: at once, once the last node has run, or with a Respond to Webhook's answer. */
export type ResponseMode = 'onReceived' | 'lastNode' | 'responseNode';

/** A Webhook or Wait node's answer settings (nodes/webhook-answer.ts reads them from its parameters). */
export interface WebhookAnswerOptions {
  responseMode?: ResponseMode;
  responseCode?: number;
  /** onReceived: the answer's body, as text, instead of the default one. */
  responseData?: string;
  noResponseBody?: boolean;
  responseHeaders?: Record<string, string>;
  /** lastNode: what of the last node's output is answered (n8n's top-level `responseData`). */
  lastNodeData?: LastNodeData;
  /** lastNode, firstEntryJson: the field of the first item answered instead of the whole json (dot notation). */
  responsePropertyName?: string;
  /** lastNode, firstEntryJson: the answer's content type instead of JSON. */
  responseContentType?: string;
  /** lastNode, firstEntryBinary: the first item's binary field answered. */
  responseBinaryPropertyName?: string;
}

/**
 * How a waiting execution's resume URL takes its call (n8n's Wait webhook options, as the Webhook
 * node has them): kept with the waiting execution, applied by webhooks/inbound.ts.
 */
export interface ResumeWebhookOptions extends WebhookAnswerOptions {
  /** The one method the URL takes (any when absent). */
  httpMethod?: string;
  /** A path the URL must end with after the resume URL. */
  webhookSuffix?: string;
  ignoreBots?: boolean;
  /** The addresses (or CIDR ranges) calls may come from. */
  ipWhitelist?: string[];
  /** Files: the Webhook node's options (webhooks/files.ts). */
  rawBody?: boolean;
  binaryData?: boolean;
  binaryPropertyName?: string;
}

export interface NodeResult {
  /** Items by output index: an output left empty does not run its branch. */
  outputs: Item[][];
  /** Suspend the execution here (wait node): until a time, or until the resume webhook is called. */
  wait?: { until: Date | null; webhook: boolean; resume?: ResumeWebhookOptions };
  /** The answer to the triggering webhook (respondToWebhook). */
  reply?: WebhookReply;
}

export interface NodeDefinition {
  /** The name after `engine.`. */
  name: string;
  description: string;
  /** Start nodes: they receive the trigger's data and have no inputs. */
  trigger?: boolean;
  /**
   * Works on its items in this process only (no network, no waiting; expressions have their own
   * time limit): without a node `timeout` the executor runs it without a watchdog of its own.
   */
  inProcess?: boolean;
  inputs?(params: Record<string, unknown>, version: number): number;
  /**
   * executionOrder v1: the inputs that must have received data before a node with several inputs
   * runs with what it has once nothing else is left to run (n8n's `requiredInputs`): a count, or
   * the input indexes. Default: none (it runs with whatever arrived).
   */
  requiredInputs?(params: Record<string, unknown>, version: number): number | number[];
  outputs?(params: Record<string, unknown>, version: number): number;
  /** Names of required parameters that are missing. */
  missing?(params: Record<string, unknown>, version: number): string[];
  /** A problem with the parameters' shape (checked at save time, before any expression runs). */
  invalid?(params: Record<string, unknown>, version: number): { parameter: string; message: string; code?: 'SCHEDULE_INVALID' } | undefined;
  /**
   * An n8n node run natively under its n8n name (`n8n-nodes-base.<name>`, n8n/README.md): the
   * typeVersions it implements, and what it does not (an option or mode, checked at save time:
   * WORKFLOW_INVALID naming it and what would be needed). Its parameters follow n8n's expression
   * rule: a string is an expression only when it starts with `=`.
   */
  n8n?: {
    versions: readonly number[];
    unsupported?(params: Record<string, unknown>, version: number): { option: string; message: string } | undefined;
    /** Parameter paths whose text is a template even without the `=` (its `{{ … }}` resolved, the rest kept). */
    templates?: string[];
  };
  /** Parameter paths kept verbatim (not expressions). */
  raw?: string[];
  /** Parameter paths whose plain strings are expressions even without `{{ }}`. */
  bareExpressions?: string[];
  execute(ctx: NodeContext): Promise<NodeResult>;
}

/** A node failure with details for the execution's error. */
export class NodeError extends Error {
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'NodeError';
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A parameter read as an object: its fields when it is one, none otherwise (stored JSON has no guaranteed shape). */
export function objectOf(v: unknown): Record<string, unknown> {
  return isPlainObject(v) ? v : {};
}

/** Whether a stored parameter is one of a node's named choices. */
export function isOneOf<T>(choices: readonly T[], v: unknown): v is T {
  return (choices as readonly unknown[]).includes(v);
}

/** A parameter read as a list: its elements when it is one, none otherwise. */
export function listOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Anything a node produced, as items: `{json}` objects pass, plain objects are wrapped. */
export function toItems(values: unknown, what: string): Item[] {
  const list = Array.isArray(values) ? values : values === undefined || values === null ? [] : [values];
  return list.map((v, i) => {
    if (isPlainObject(v) && isPlainObject(v.json) && Object.keys(v).every((k) => k === 'json' || k === 'binary' || k === 'pairedItem')) {
      return isPlainObject(v.binary) ? { json: v.json, binary: v.binary as Item['binary'] } : { json: v.json };
    }
    if (isPlainObject(v)) return { json: v };
    throw new NodeError(`${what} must be objects or {json} items; item ${i} is ${v === null ? 'null' : typeof v}`);
  });
}

export function truthy(v: unknown): boolean {
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    return s !== '' && s !== 'false' && s !== '0';
  }
  return Boolean(v);
}
