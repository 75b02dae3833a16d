import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { PUBLIC } from '../../kernel/auth/principal';
import { errors } from '../../kernel/errors';
import { pageInfo } from '../../kernel/graphql-types';
import type { RequestContext } from '../../kernel/subgraph';
import type { LinkService } from './link.service';
import { CreateLinkInput, Link, LinkDeletion, LinkLookup, LinkPage, LinkVerification, LinkVisitPage, UpdateLinkInput } from './link.types';

@Resolver(() => Link)
export class LinkResolver {
  constructor(private readonly service: LinkService) {}

  @Authorized('link:read')
  @Query(() => Link, { description: 'One of the caller’s links.' })
  link(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<Link> {
    return this.service.get(ctx.principal, id);
  }

  @Authorized('link:read')
  @Query(() => LinkPage, { description: 'The caller’s links, newest first.' })
  async links(
    @Ctx() ctx: RequestContext,
    @Arg('limit', () => Int, { defaultValue: 20 }) limit: number,
    @Arg('offset', () => Int, { defaultValue: 0 }) offset: number,
  ): Promise<LinkPage> {
    const { links, total } = await this.service.list(ctx.principal, limit, offset);
    return { links, pagination: pageInfo(total, limit, offset) };
  }

  @Authorized('link:read')
  @Query(() => LinkVisitPage, { description: 'Visits of one of the caller’s links, newest first.' })
  async linkVisits(
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: RequestContext,
    @Arg('limit', () => Int, { defaultValue: 50 }) limit: number,
    @Arg('offset', () => Int, { defaultValue: 0 }) offset: number,
  ): Promise<LinkVisitPage> {
    const { visits, total } = await this.service.visits(ctx.principal, id, limit, offset);
    return { linkId: id, visits, pagination: pageInfo(total, limit, offset) };
  }

  /** PUBLIC: edge workers look slugs up; a protected link's destination is not in the answer. */
  @Authorized(PUBLIC)
  @Query(() => LinkLookup, { description: 'The public view of a slug (edge workers): destination "" when the link is protected.' })
  async linkBySlug(@Arg('slug') slug: string): Promise<LinkLookup> {
    const r = await this.service.bySlugCached(slug);
    if (!r) throw errors.notFound('link', slug);
    // The link's fields less its url, visits and times; the destination only when unprotected.
    const { url, visits: _visits, createdAt: _createdAt, updatedAt: _updatedAt, ...lookup } = r;
    return { ...lookup, destination: r.protectionType === 'none' ? url : '' };
  }

  @Authorized('link:write')
  @Mutation(() => Link)
  createLink(@Arg('input', () => CreateLinkInput, { validate: false }) input: CreateLinkInput, @Ctx() ctx: RequestContext): Promise<Link> {
    return this.service.create(ctx.principal, input);
  }

  @Authorized('link:write')
  @Mutation(() => Link, { description: 'Protection changes: password or pin sets it, removeProtection clears it.' })
  updateLink(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateLinkInput, { validate: false }) input: UpdateLinkInput,
    @Ctx() ctx: RequestContext,
  ): Promise<Link> {
    return this.service.update(ctx.principal, id, input);
  }

  @Authorized('link:write')
  @Mutation(() => LinkDeletion)
  deleteLink(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<LinkDeletion> {
    return this.service.delete(ctx.principal, id);
  }

  /** PUBLIC: visitors verify without a key; limited per address and link (5 failures in 15 minutes). */
  @Authorized(PUBLIC)
  @Mutation(() => LinkVerification, { description: 'Checks a protected link’s password or PIN; the destination on success.' })
  async verifyLink(
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: RequestContext,
    @Arg('password', () => String, { nullable: true }) password?: string,
    @Arg('pin', () => String, { nullable: true }) pin?: string,
  ): Promise<LinkVerification> {
    const link = await this.service.verify(id, { password, pin }, ctx.ip ?? 'unknown');
    return { id: link.id, slug: link.slug, destination: link.url };
  }
}
