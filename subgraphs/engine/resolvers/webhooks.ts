import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { PUBLIC } from '../../../kernel/auth/principal';
import { errors } from '../../../kernel/errors';
import { pageInfo } from '../../../kernel/graphql-types';
import { load } from '../../../kernel/loaders';
import { absoluteUrl, type RequestContext } from '../../../kernel/subgraph';
import {
  CreateWorkflowWebhookInput,
  TestWorkflowWebhookInput,
  UpdateWorkflowWebhookInput,
  WorkflowWebhookListArgs,
  WorkflowWebhookLogArgs,
  WorkflowWebhookRequestInput,
  type WebhookInbound,
  type TriggerView,
  type WebhookTriggerService,
  WorkflowWebhook,
  WorkflowWebhookDeletion,
  WorkflowWebhookLogPage,
  WorkflowWebhookPage,
  WorkflowWebhookReply,
  WorkflowWebhookStatistics,
  WorkflowWebhookTest,
} from '../webhooks';

export function toWebhook(v: TriggerView): WorkflowWebhook {
  return { webhookId: v.id, ...v };
}

@Resolver(() => WorkflowWebhook)
export class WebhookTriggerResolver {
  constructor(
    private readonly triggers: WebhookTriggerService,
    private readonly inbound: WebhookInbound,
  ) {}

  @Authorized('workflow:write')
  @Mutation(() => WorkflowWebhook, { description: 'Registers /webhook/<path> for a workflow (by id or slug; 10 registrations a minute per key).' })
  async createWorkflowWebhook(@Arg('input') input: CreateWorkflowWebhookInput, @Ctx() ctx: RequestContext): Promise<WorkflowWebhook> {
    return toWebhook(await this.triggers.create(ctx.principal, input));
  }

  @Authorized('workflow:read')
  @Query(() => WorkflowWebhook)
  async workflowWebhook(@Arg('webhookId', () => ID) webhookId: string): Promise<WorkflowWebhook> {
    return toWebhook(await this.triggers.get(webhookId));
  }

  @Authorized('workflow:read')
  @Query(() => WorkflowWebhookPage, { description: 'Webhook triggers, newest first.' })
  async workflowWebhooks(@Args() args: WorkflowWebhookListArgs): Promise<WorkflowWebhookPage> {
    const { webhooks, total } = await this.triggers.list(args);
    return { webhooks: webhooks.map(toWebhook), pagination: pageInfo(total, args.limit, args.offset) };
  }

  @Authorized('workflow:write')
  @Mutation(() => WorkflowWebhook)
  async updateWorkflowWebhook(@Arg('webhookId', () => ID) webhookId: string, @Arg('input') input: UpdateWorkflowWebhookInput): Promise<WorkflowWebhook> {
    return toWebhook(await this.triggers.update(webhookId, input));
  }

  @Authorized('workflow:write')
  @Mutation(() => WorkflowWebhookDeletion)
  deleteWorkflowWebhook(@Arg('webhookId', () => ID) webhookId: string): Promise<WorkflowWebhookDeletion> {
    return this.triggers.delete(webhookId);
  }

  @Authorized('workflow:write')
  @Mutation(() => WorkflowWebhookTest, {
    description:
      'Sends a made-up request (data as the JSON body, the given headers) through the trigger, authentication included, and waits for the workflow (up to 60 s). Runs even when the workflow is inactive.',
  })
  testWorkflowWebhook(
    @Arg('webhookId', () => ID) webhookId: string,
    @Arg('input', () => TestWorkflowWebhookInput, { nullable: true }) input: TestWorkflowWebhookInput | undefined,
  ): Promise<WorkflowWebhookTest> {
    return this.inbound.test(webhookId, input ?? {});
  }

  @Authorized('workflow:read')
  @Query(() => WorkflowWebhookLogPage, { description: 'Inbound requests of a trigger, newest first.' })
  async workflowWebhookLogs(@Args() args: WorkflowWebhookLogArgs): Promise<WorkflowWebhookLogPage> {
    const { logs, total } = await this.triggers.logs(args.webhookId, args);
    return { webhookId: args.webhookId, logs, pagination: pageInfo(total, args.limit, args.offset) };
  }

  @FieldResolver(() => String, { description: 'Where callers send requests: an absolute URL (PUBLIC_URL, else the address the caller used), /webhook/<path>.' })
  url(@Root() w: WorkflowWebhook, @Ctx() ctx: RequestContext): string {
    return absoluteUrl(ctx, w.url);
  }

  @FieldResolver(() => WorkflowWebhookStatistics)
  statistics(@Root() w: WorkflowWebhook, @Ctx() ctx: RequestContext): Promise<WorkflowWebhookStatistics> {
    return load(ctx, this.triggers.statisticsByWebhook, w.webhookId);
  }

  /**
   * PUBLIC on purpose: inbound webhooks come from other systems without a platform key. The
   * trigger's own authentication (none, apiKey, hmac, basic, oauth) is checked inside, and this
   * operation can do nothing but what a registered trigger allows: start its workflow, or
   * resume a waiting execution through its signed resume URL.
   */
  @Authorized(PUBLIC)
  @Mutation(() => WorkflowWebhookReply, {
    description:
      'PUBLIC: an inbound request on /webhook/<path> (the webhook surface calls it). Authenticated by the trigger’s own settings, not by a platform key; answers with the HTTP status, headers and body to send back.',
  })
  async receiveWebhook(
    // Checked by the inbound handler itself (class-validator has nothing to add on every request).
    @Arg('request', () => WorkflowWebhookRequestInput, { validate: false }) request: WorkflowWebhookRequestInput,
    @Ctx() ctx: RequestContext,
  ): Promise<WorkflowWebhookReply> {
    const encoding = request.bodyEncoding ?? 'base64';
    if (encoding !== 'base64' && encoding !== 'utf8') throw errors.field('request.bodyEncoding', 'must be base64 or utf8');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(request.headers ?? {}))
      if (v !== undefined && v !== null) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
    return this.inbound.receiveWhole(
      {
        path: request.path,
        method: request.method,
        headers,
        query: request.query ?? {},
        body: Buffer.from(request.body ?? '', encoding),
        bodyTooLarge: request.bodyTooLarge ?? false,
        baseUrl: ctx.baseUrl,
      },
      ctx.ip ?? null,
    );
  }
}
