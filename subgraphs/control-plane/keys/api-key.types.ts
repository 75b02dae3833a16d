import { Directive, Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A platform API key. The key itself is only ever shown once, by createApiKey.' })
@Directive('@key(fields: "id")')
export class ApiKey {
  @Field(() => ID) id: string;
  @Field() name: string;
  @Field(() => String, { description: 'The surface that accepts the key: control-plane, promptlib, engine, links or infra.' })
  service: string;
  @Field({ description: 'live or test.' }) environment: string;
  @Field({ description: 'Rate-limit tier: free, starter, professional or enterprise.' }) tier: string;
  @Field(() => [String], { description: 'resource:action permissions; "*" grants everything.' }) permissions: string[];
  @Field({ description: 'The first characters of the key, to recognise it.' }) keyPrefix: string;
  @Field() createdAt: Date;
  @Field(() => Date, { nullable: true }) expiresAt: Date | null;
  @Field(() => Date, { nullable: true }) lastUsedAt: Date | null;
  @Field(() => Date, { nullable: true }) revokedAt: Date | null;
  @Field({ description: 'active, expired or revoked.' }) status: string;
}

@ObjectType({ description: 'A newly created key, with the key itself (never retrievable again).' })
export class CreatedApiKey {
  @Field({ description: 'The API key. Store it now: it is not shown again.' }) apiKey: string;
  @Field(() => ApiKey) key: ApiKey;
}

@ObjectType()
export class ApiKeyUsage {
  @Field(() => ID) keyId: string;
  @Field(() => Int, { description: 'Requests since 00:00 UTC.' }) requestsToday: number;
  @Field(() => Int, { description: 'Requests since the first of the month, UTC.' }) requestsThisMonth: number;
  @Field(() => Int) totalRequests: number;
  @Field(() => Date, { nullable: true }) lastUsedAt: Date | null;
  @Field(() => String, { nullable: true }) lastUsedIp: string | null;
}

@ObjectType()
export class RateLimitWindow {
  @Field(() => Int) limit: number;
  @Field(() => Int) remaining: number;
  @Field() resetAt: Date;
}

@ObjectType()
export class RateLimitWindows {
  @Field(() => RateLimitWindow) perMinute: RateLimitWindow;
  @Field(() => RateLimitWindow) perHour: RateLimitWindow;
  @Field(() => RateLimitWindow) perDay: RateLimitWindow;
}

@ObjectType()
export class BurstStatus {
  @Field(() => Int) limit: number;
  @Field(() => Int, { description: 'Requests that can still be sent right now (minute window plus burst pool).' })
  remaining: number;
}

@ObjectType({ description: "The calling key's standing against its tier's limits, this request included." })
export class RateLimitStatus {
  @Field() tier: string;
  @Field(() => RateLimitWindows) limits: RateLimitWindows;
  @Field(() => BurstStatus) burst: BurstStatus;
  @Field(() => Int, { description: 'Executions the tier may run at once.' }) concurrentExecutions: number;
}
