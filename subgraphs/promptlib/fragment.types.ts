import { Field, ID, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { PageInfo } from '../../kernel/graphql-types';

export const FRAGMENT_TYPES = ['role', 'constraints', 'examples', 'context', 'format'] as const;
export type FragmentType = (typeof FRAGMENT_TYPES)[number];

@ObjectType({ description: 'How many prompts and chains use a fragment (latest versions; through other fragments too).' })
export class FragmentUsage {
  @Field(() => Int) promptCount: number;
  @Field(() => Int) chainCount: number;
}

@ObjectType({ description: 'A reusable piece of prompt text, embedded with {{fragment:<id>}} or {{fragment:<id>:<version>}}.' })
export class Fragment {
  @Field(() => ID) fragmentId: string;
  @Field() name: string;
  @Field({ description: 'role, constraints, examples, context or format.' }) type: string;
  @Field() content: string;
  @Field() description: string;
  @Field(() => Int) version: number;
  @Field(() => Int) latestVersion: number;
  @Field(() => GraphQLJSONObject, { description: 'domain, tags, version (semver), and any other keys.' }) metadata: Record<string, unknown>;
  @Field(() => FragmentUsage) usage: FragmentUsage;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
}

@ObjectType()
export class FragmentListItem {
  @Field(() => ID) fragmentId: string;
  @Field() name: string;
  @Field() type: string;
  @Field(() => String, { nullable: true }) domain: string | null;
  @Field(() => [String]) tags: string[];
  @Field(() => Int) version: number;
  @Field(() => Int) usedInPrompts: number;
  @Field() createdAt: Date;
}

@ObjectType()
export class FragmentList {
  @Field(() => [FragmentListItem]) fragments: FragmentListItem[];
  @Field(() => PageInfo) pagination: PageInfo;
}

@ObjectType()
export class FragmentDeletion {
  @Field(() => ID) fragmentId: string;
  @Field() deletedAt: Date;
  @Field(() => [String], { description: 'Active prompts that used it (deleted with force).' }) activePrompts: string[];
}
