import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Directive, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { PageInfo } from '../../../kernel/graphql-types';

@ObjectType({
  description: 'A node of a workflow: its type (`engine.<name>` or an n8n core node), parameters (strings may hold {{ expressions }}) and per-node settings.',
})
export class WorkflowNode {
  @Field() name: string;
  @Field({
    description:
      'engine.<name> (e.g. engine.set), or one of n8n\'s core nodes under its own name (n8n-nodes-base.set at its typeVersion): README, "Workflow engine" and "Workflows from n8n".',
  })
  type: string;
  @Field(() => [Float], { description: '[x, y] in the editor.' }) position: number[];
  @Field(() => GraphQLJSONObject) parameters: Record<string, unknown>;
  @Field(() => String, { nullable: true }) id?: string;
  @Field(() => Float, { nullable: true }) typeVersion?: number;
  @Field(() => String, { nullable: true }) notes?: string;
  @Field(() => Boolean, { nullable: true, description: 'A disabled node passes its first input on unchanged.' }) disabled?: boolean;
  @Field(() => Boolean, { nullable: true, description: 'Run the node again when it fails (maxTries attempts, waitBetweenTries ms apart).' })
  retryOnFail?: boolean;
  @Field(() => Int, { nullable: true, description: 'Attempts with retryOnFail; default 3, at most 10.' }) maxTries?: number;
  @Field(() => Int, { nullable: true, description: 'Milliseconds between attempts; default 1000.' }) waitBetweenTries?: number;
  @Field(() => Boolean, { nullable: true, description: 'A failure becomes an item {error} and the execution goes on.' }) continueOnFail?: boolean;
  @Field(() => Float, { nullable: true, description: 'Seconds one attempt may take.' }) timeout?: number;
  @Field(() => String, {
    nullable: true,
    description:
      'n8n nodes: stopWorkflow (default), continueRegularOutput (a failure passes the input on), or continueErrorOutput (items that failed leave by an extra last output).',
  })
  onError?: string;
  @Field(() => Boolean, { nullable: true, description: 'n8n nodes: a node that outputs nothing passes one empty item on.' }) alwaysOutputData?: boolean;
  @Field(() => Boolean, { nullable: true, description: 'n8n nodes: run with the first item of each input only.' }) executeOnce?: boolean;
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'The stored credentials the node uses, by n8n credential type: {httpHeaderAuth: {id, name}} (never their secrets).',
  })
  credentials?: Record<string, { id: string; name: string }>;
}

@ObjectType({ description: "A sticky note of n8n's editor kept with an imported workflow: drawn with the graph, never run." })
export class WorkflowStickyNote {
  @Field() name: string;
  @Field({ description: 'Markdown.' }) content: string;
  @Field(() => [Float], { description: '[x, y] of its top left corner in the editor.' }) position: number[];
  @Field(() => Float) width: number;
  @Field(() => Float) height: number;
  @Field(() => Int, { description: "One of n8n's note colors, 1 (yellow, the default) to 7." }) color: number;
}

@ObjectType({ description: 'Computed from the executions that exist (old ones are pruned).' })
export class WorkflowStatistics {
  @Field(() => Int) executions: number;
  @Field(() => Float, { description: 'Percent of finished executions (success or error) that succeeded.' }) successRate: number;
  @Field(() => Float, { description: 'Milliseconds, over finished executions.' }) averageDuration: number;
}

@ObjectType({ description: 'A workflow definition (n8n format): nodes and the connections between their outputs and inputs.' })
@Directive('@key(fields: "workflowId")')
export class Workflow {
  @Field(() => ID) workflowId: string;
  @Field() name: string;
  @Field(() => String, { nullable: true }) description: string | null;
  @Field(() => [String]) tags: string[];
  @Field({ description: 'Webhook and schedule triggers start only active workflows.' }) active: boolean;
  @Field(() => Int, { description: 'Starts at 1; increases on every change.' }) version: number;
  @Field(() => [WorkflowNode]) nodes: WorkflowNode[];
  @Field(() => Int) nodeCount: number;
  @Field(() => GraphQLJSONObject, { description: 'Node name -> {main: [[{node, type, index}]]}: per output, the inputs it feeds.' })
  connections: Record<string, unknown>;
  @Field(() => GraphQLJSONObject, { description: 'timezone (IANA), errorWorkflow (workflow id), executionTimeout (seconds, default 3600).' })
  settings: Record<string, unknown>;
  @Field(() => [WorkflowStickyNote], {
    description: 'The sticky notes of an n8n export, kept beside the nodes; exports carry them back as n8n stickyNote nodes.',
  })
  stickyNotes: WorkflowStickyNote[];
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
}

@ObjectType()
export class WorkflowPage {
  @Field(() => [Workflow]) workflows: Workflow[];
  @Field(() => PageInfo) pagination: PageInfo;
}

@ObjectType()
export class WorkflowDeletion {
  @Field(() => ID) workflowId: string;
  @Field() deletedAt: Date;
}

@ObjectType()
export class WorkflowExport {
  @Field({ description: 'json or yaml.' }) format: string;
  @Field(() => GraphQLJSON, { description: '{name, nodes, connections, settings}: an object for json, a YAML text for yaml.' }) workflow: unknown;
}
