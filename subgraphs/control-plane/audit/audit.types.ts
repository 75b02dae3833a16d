import { Field, ID, ObjectType } from 'type-graphql';
import { PageInfo } from '../../../kernel/graphql-types';

@ObjectType({ description: 'Who made a change: a key (id, name, its service), a person (id, service), or an anonymous caller.' })
export class AuditActor {
  @Field({ description: 'apiKey, user or anonymous.' }) kind: string;
  @Field(() => ID, { nullable: true }) id: string | null;
  @Field(() => String, { nullable: true, description: "The key's name." }) name: string | null;
  @Field(() => String, { nullable: true, description: 'The service the key or person belongs to.' }) service: string | null;
}

@ObjectType({ description: 'One change made through any surface (REST or GraphQL), recorded once. Values are never kept: only the names of the fields given.' })
export class AuditEntry {
  @Field(() => ID) id: string;
  @Field(() => Date) at: Date;
  @Field(() => AuditActor) actor: AuditActor;
  @Field(() => String, { nullable: true, description: "The client's address." }) ip: string | null;
  @Field(() => String, { nullable: true }) userAgent: string | null;
  @Field(() => String, { nullable: true }) requestId: string | null;
  @Field({ description: 'The service that made the change.' }) service: string;
  @Field({ description: 'The GraphQL mutation (every REST change runs one).' }) operation: string;
  @Field({ description: 'What kind of thing changed (ApiKey, Workflow, Link …).' }) resourceType: string;
  @Field(() => String, { nullable: true }) resourceId: string | null;
  @Field(() => [String], { description: 'The names of the fields the caller gave (never their values).' }) changedFields: string[];
}

@ObjectType()
export class AuditEntryList {
  @Field(() => [AuditEntry]) entries: AuditEntry[];
  @Field(() => PageInfo) pagination: PageInfo;
}
