/**
 * The trigger behind `/webhook/<path>` (the engine's inbound webhooks). The inbound surface is
 * the engine's own door, not a documented API route: when the engine runs in this process it
 * binds its receiver here and the surface hands requests straight to it; otherwise (the engine
 * in another process) the surface runs the engine's public `receiveWebhook` operation. Either way
 * the trigger's authentication, rate limit, request log and response modes are the engine's.
 */
export interface InboundRequest {
  path: string;
  method: string;
  /** Lower-case names, repeated headers joined with ", ". */
  headers: Record<string, string>;
  query: Record<string, unknown>;
  body: Buffer;
  bodyTooLarge?: boolean;
  /** The platform's address as the caller reached it (RequestContext.baseUrl). */
  baseUrl?: string;
}

export interface InboundReply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export type InboundReceiver = (request: InboundRequest, sourceIp: string | null) => Promise<InboundReply>;

export class InboundWebhooks {
  private bound?: InboundReceiver;

  /** Called by the engine's service module in the process that hosts it. */
  bind(receiver: InboundReceiver): void {
    this.bound = receiver;
  }

  get receiver(): InboundReceiver | undefined {
    return this.bound;
  }
}
