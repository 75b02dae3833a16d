import { GraphQLJSONObject } from 'graphql-scalars';
import { ArgsType, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { IsOptional, Length, Max, Min } from 'class-validator';
import { PageInfo } from '../../../kernel/graphql-types';

@ObjectType({ description: 'A stored credential of n8n workflows: its name, type and shown settings; its secrets are never answered.' })
export class Credential {
  @Field(() => ID) credentialId: string;
  @Field() name: string;
  @Field({ description: 'n8n’s credential type: httpHeaderAuth, httpQueryAuth, httpBasicAuth, httpBearerAuth, httpCustomAuth, oAuth2Api, crypto.' })
  type: string;
  @Field(() => GraphQLJSONObject, { description: 'The fields that are not secret (a header’s name, an OAuth2 client id and URLs, …).' })
  settings: Record<string, string>;
  @Field(() => Date, { nullable: true, description: 'oAuth2Api: when it last received tokens (null until then).' }) connectedAt: Date | null;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
}

@ObjectType()
export class CredentialPage {
  @Field(() => [Credential]) credentials: Credential[];
  @Field(() => PageInfo) pagination: PageInfo;
}

@ObjectType()
export class CredentialDeletion {
  @Field(() => ID) credentialId: string;
  @Field() deletedAt: Date;
}

@ObjectType()
export class CredentialAuthorization {
  @Field(() => ID) credentialId: string;
  @Field({ description: 'Where a person consents; the authorization server then sends them to the platform’s callback, which stores the tokens.' })
  authorizationUrl: string;
}

@InputType()
export class CreateCredentialInput {
  @Field() name: string;
  @Field() type: string;
  @Field(() => GraphQLJSONObject, { description: 'The type’s fields, secrets included (docs/n8n.md, "Credentials").' }) data: Record<string, unknown>;
}

@ArgsType()
export class CredentialListArgs {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 100) type?: string;
  @Field(() => Int, { defaultValue: 20, description: '1 to 100.' }) @Min(1) @Max(100) limit: number;
  @Field(() => Int, { defaultValue: 0 }) @Min(0) offset: number;
}

@InputType({ description: 'What the authorization server sends to the callback: the state, and the code or an error.' })
export class CredentialConsentInput {
  @Field(() => String, { nullable: true }) state?: string;
  @Field(() => String, { nullable: true }) code?: string;
  @Field(() => String, { nullable: true }) error?: string;
}
