import { Directive, Field, Int, ObjectType } from 'type-graphql';

/**
 * Value types every subgraph shares. Federation composes a type defined in several subgraphs
 * only when it is identical and @shareable, so they are defined once, here.
 */
@ObjectType({ description: 'Where a page sits in a list.' })
@Directive('@shareable')
export class PageInfo {
  @Field(() => Int) total: number;
  @Field(() => Int) limit: number;
  @Field(() => Int) offset: number;
  @Field() hasMore: boolean;
}

export function pageInfo(total: number, limit: number, offset: number): PageInfo {
  return { total, limit, offset, hasMore: offset + limit < total };
}
