import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver, Subscription, Root } from 'type-graphql';
import type { ApiKeyService } from '../../../kernel/auth/api-key.service';
import type { ApiKeyRecord } from '../../../kernel/auth/api-key.store';
import { ANY_CALLER } from '../../../kernel/auth/principal';
import { TIER_LIMITS } from '../../../kernel/rate-limit';
import { errors } from '../../../kernel/errors';
import type { RequestContext } from '../../../kernel/subgraph';
import { ApiKey, ApiKeyUsage, CreatedApiKey, RateLimitStatus } from './api-key.types';
import { CreateApiKeyInput, UpdateApiKeyInput } from './api-key.inputs';
import { TOPIC } from '../../../kernel/topics';

export function toApiKey(row: ApiKeyRecord): ApiKey {
  const status = row.revokedAt ? 'revoked' : row.expiresAt && row.expiresAt <= new Date() ? 'expired' : 'active';
  return { ...row, status };
}

@Resolver(() => ApiKey)
export class ApiKeyResolver {
  constructor(private readonly keys: ApiKeyService) {}

  @Authorized('keys:manage')
  @Query(() => [ApiKey], { description: 'Keys the caller manages (every key for a platform admin).' })
  async apiKeys(@Ctx() ctx: RequestContext): Promise<ApiKey[]> {
    return (await this.keys.list(ctx.principal)).map(toApiKey);
  }

  @Authorized('keys:manage')
  @Query(() => ApiKey)
  async apiKey(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<ApiKey> {
    return toApiKey(await this.keys.get(ctx.principal, id));
  }

  @Authorized('keys:manage')
  @Query(() => ApiKeyUsage)
  apiKeyUsage(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<ApiKeyUsage> {
    return this.keys.usageOf(ctx.principal, id);
  }

  @Authorized('keys:manage')
  @Mutation(() => CreatedApiKey)
  async createApiKey(@Arg('input') input: CreateApiKeyInput, @Ctx() ctx: RequestContext): Promise<CreatedApiKey> {
    const { key, plain } = await this.keys.create(ctx.principal, input);
    return { apiKey: plain, key: toApiKey(key) };
  }

  @Authorized('keys:manage')
  @Mutation(() => ApiKey)
  async updateApiKey(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateApiKeyInput, @Ctx() ctx: RequestContext): Promise<ApiKey> {
    return toApiKey(await this.keys.update(ctx.principal, id, input));
  }

  @Authorized('keys:manage')
  @Mutation(() => ApiKey, { description: 'Revokes the key: every later use answers 401 invalid_api_key.' })
  async revokeApiKey(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<ApiKey> {
    return toApiKey(await this.keys.revoke(ctx.principal, id));
  }

  @Authorized('keys:manage')
  @Subscription(() => ApiKey, {
    topics: TOPIC.apiKeyChanged,
    description: 'Emits the whole key whenever it is changed or revoked (served by the gateway).',
  })
  apiKeyUpdated(@Arg('id', () => ID) _id: string, @Root() key: ApiKey): ApiKey {
    return key;
  }

  @Authorized(ANY_CALLER)
  @Query(() => RateLimitStatus, { description: "The calling key's rate-limit standing, this request included." })
  rateLimitStatus(@Ctx() ctx: RequestContext): RateLimitStatus {
    if (!ctx.rateLimit || ctx.principal.kind !== 'apiKey') throw errors.missingAuthorization();
    return { ...ctx.rateLimit, concurrentExecutions: TIER_LIMITS[ctx.rateLimit.tier].concurrentExecutions };
  }
}
