import { Arg, Authorized, Ctx, Field, FieldResolver, ID, Int, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { PUBLIC, type Principal } from '../../kernel/auth/principal';
import { DeletedFlag, FirstStateLimit, pageInfo } from '../../kernel/graphql-types';
import { load } from '../../kernel/loaders';
import type { RequestContext } from '../../kernel/subgraph';
import { userOf, type FeedbackService } from './feedback.service';
import type { UserView } from './user.store';
import {
  CreateProjectInput,
  FeatureRequest,
  FeatureRequestInput,
  FeatureRequestPage,
  FeedbackComment,
  FeedbackDeletion,
  FeedbackProject,
  FeedbackProjectPage,
  FeedbackUser,
  UpdateProjectInput,
  VoteSummary,
} from './feedback.types';
import { TOPIC } from '../../kernel/topics';

@ObjectType({ description: 'A signed-in session: the token to send as Authorization: Bearer.' })
export class FeedbackSession {
  @Field() token: string;
  @Field(() => Int, { description: 'Seconds the token is valid.' }) expiresIn: number;
  @Field(() => FeedbackUser) user: FeedbackUser;
}

export const toUser = (u: UserView): FeedbackUser => ({ ...u, subscription: { tier: 'free', status: 'active' } });

/** The OAuth code exchange, built by index.ts from the kernel's config and tokens; the redirect flow there runs it too. */
export type SignIn = (provider: string, code: string, redirectUri: string) => Promise<FeedbackSession>;
/** A session minted by the platform admin key for a person named by email (index.ts). */
export type LocalSignIn = (principal: Principal, email: string | null | undefined, name: string | null | undefined) => Promise<FeedbackSession>;

@Resolver()
export class FeedbackResolver {
  constructor(
    private readonly service: FeedbackService,
    private readonly signIn: SignIn,
    private readonly localSignIn: LocalSignIn,
  ) {}

  // ---- sign-in ------------------------------------------------------------------------------

  /** PUBLIC: the OAuth callback's code exchange (the redirect flow runs it too). */
  @Authorized(PUBLIC)
  @Mutation(() => FeedbackSession, { description: 'Exchanges a GitHub or Google authorization code for a session token.' })
  signInWithProvider(@Arg('provider') provider: string, @Arg('code') code: string, @Arg('redirectUri') redirectUri: string): Promise<FeedbackSession> {
    return this.signIn(provider, code, redirectUri);
  }

  @Authorized()
  @Query(() => FeedbackUser, { description: 'The signed-in user (GET /auth/me).' })
  async feedbackMe(@Ctx() ctx: RequestContext): Promise<FeedbackUser> {
    return toUser(await this.service.user(userOf(ctx.principal)));
  }

  // ---- projects -----------------------------------------------------------------------------

  /** PUBLIC: the public projects are the service's front page. */
  @Authorized(PUBLIC)
  @Query(() => FeedbackProjectPage, { description: 'Public projects, newest first.' })
  async feedbackProjects(
    @Arg('limit', () => Int, { defaultValue: 20 }) limit: number,
    @Arg('offset', () => Int, { defaultValue: 0 }) offset: number,
  ): Promise<FeedbackProjectPage> {
    const { projects, total } = await this.service.publicProjects(limit, offset);
    return { projects, pagination: pageInfo(total, limit, offset) };
  }

  @Authorized()
  @Query(() => [FeedbackProject], { description: 'The projects the caller owns.' })
  myFeedbackProjects(@Ctx() ctx: RequestContext): Promise<FeedbackProject[]> {
    return this.service.myProjects(ctx.principal);
  }

  /** PUBLIC: a public project is readable by anyone; a private one by its owner and moderators. */
  @Authorized(PUBLIC)
  @Query(() => FeedbackProject)
  async feedbackProject(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<FeedbackProject> {
    return this.service.project(ctx.principal, id);
  }

  @Authorized()
  @Mutation(() => FeedbackSession, {
    description:
      'Sign-in without an identity provider, where FEEDBACK_LOCAL_SIGNIN enables it: the platform admin key (a control-plane key holding *) gets the session of the person with this email, created at first use.',
  })
  signInLocally(
    @Arg('email', () => String, { nullable: true }) email: string | null,
    @Arg('name', () => String, { nullable: true }) name: string | null,
    @Ctx() ctx: RequestContext,
  ): Promise<FeedbackSession> {
    return this.localSignIn(ctx.principal, email, name);
  }

  @Authorized()
  @Mutation(() => FeedbackProject)
  createFeedbackProject(
    @Arg('input', () => CreateProjectInput, { validate: false }) input: CreateProjectInput,
    @Ctx() ctx: RequestContext,
  ): Promise<FeedbackProject> {
    return this.service.createProject(ctx.principal, input);
  }

  @Authorized()
  @Mutation(() => FeedbackProject, { description: 'Owner only.' })
  updateFeedbackProject(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateProjectInput, { validate: false }) input: UpdateProjectInput,
    @Ctx() ctx: RequestContext,
  ): Promise<FeedbackProject> {
    return this.service.updateProject(ctx.principal, id, input);
  }

  @Authorized()
  @Mutation(() => FeedbackDeletion, { description: 'Owner only; the requests, votes and comments go with it.' })
  deleteFeedbackProject(@Arg('id', () => ID) id: string, @Ctx() ctx: RequestContext): Promise<FeedbackDeletion> {
    return this.service.deleteProject(ctx.principal, id);
  }

  @Authorized()
  @Mutation(() => FeedbackProject, { description: 'Owner only: the user may moderate the project’s requests.' })
  async addProjectModerator(
    @Arg('projectId', () => ID) projectId: string,
    @Arg('userId', () => ID) userId: string,
    @Ctx() ctx: RequestContext,
  ): Promise<FeedbackProject> {
    return this.service.addModerator(ctx.principal, projectId, userId);
  }

  // ---- requests -----------------------------------------------------------------------------

  /** PUBLIC: requests of public projects are readable by anyone. */
  @Authorized(PUBLIC)
  @Query(() => FeatureRequestPage)
  async featureRequests(
    @Arg('projectId', () => ID) projectId: string,
    @Ctx() ctx: RequestContext,
    @Arg('limit', () => Int, { defaultValue: 20 }) limit: number,
    @Arg('offset', () => Int, { defaultValue: 0 }) offset: number,
    @Arg('status', () => String, { nullable: true }) status?: string,
    @Arg('category', () => String, { nullable: true }) category?: string,
    @Arg('sort', () => String, { nullable: true, description: 'created_at (default), votes_count or title.' }) sort?: string,
    @Arg('order', () => String, { nullable: true, description: 'asc or desc.' }) order?: string,
  ): Promise<FeatureRequestPage> {
    const { requests, total } = await this.service.list(ctx.principal, projectId, { limit, offset, status, category, sort, order });
    return { requests, total, limit, offset };
  }

  /** PUBLIC: as featureRequests. */
  @Authorized(PUBLIC)
  @Query(() => FeatureRequest)
  featureRequest(@Arg('requestId', () => ID) requestId: string, @Ctx() ctx: RequestContext): Promise<FeatureRequest> {
    return this.service.request(ctx.principal, requestId);
  }

  /** PUBLIC: anonymous submissions where the project allows them (checked by the service). */
  @Authorized(PUBLIC)
  @Mutation(() => FeatureRequest, { description: 'pending when the project requires approval, else approved.' })
  submitFeatureRequest(
    @Arg('projectId', () => ID) projectId: string,
    @Arg('input', () => FeatureRequestInput, { validate: false }) input: FeatureRequestInput,
    @Ctx() ctx: RequestContext,
  ): Promise<FeatureRequest> {
    return this.service.submit(ctx.principal, projectId, input);
  }

  @Authorized()
  @Mutation(() => FeatureRequest, { description: 'The author, the project owner or a moderator.' })
  updateFeatureRequest(
    @Arg('requestId', () => ID) requestId: string,
    @Arg('input', () => FeatureRequestInput, { validate: false }) input: FeatureRequestInput,
    @Ctx() ctx: RequestContext,
  ): Promise<FeatureRequest> {
    return this.service.updateRequest(ctx.principal, requestId, input);
  }

  @Authorized()
  @Mutation(() => FeedbackDeletion)
  deleteFeatureRequest(@Arg('requestId', () => ID) requestId: string, @Ctx() ctx: RequestContext): Promise<FeedbackDeletion> {
    return this.service.deleteRequest(ctx.principal, requestId);
  }

  @Authorized()
  @Mutation(() => FeatureRequest, {
    description: 'Owner and moderators: pending → approved|rejected, approved → completed|rejected, rejected → approved, completed → approved.',
  })
  setFeatureRequestStatus(@Arg('requestId', () => ID) requestId: string, @Arg('status') status: string, @Ctx() ctx: RequestContext): Promise<FeatureRequest> {
    return this.service.setStatus(ctx.principal, requestId, status);
  }

  // ---- votes and comments -------------------------------------------------------------------

  @Authorized()
  @Mutation(() => VoteSummary)
  voteFeatureRequest(@Arg('requestId', () => ID) requestId: string, @Arg('type') type: string, @Ctx() ctx: RequestContext): Promise<VoteSummary> {
    return this.service.vote(ctx.principal, requestId, type);
  }

  @Authorized()
  @Mutation(() => VoteSummary)
  unvoteFeatureRequest(@Arg('requestId', () => ID) requestId: string, @Ctx() ctx: RequestContext): Promise<VoteSummary> {
    return this.service.unvote(ctx.principal, requestId);
  }

  /** PUBLIC: the counts are public; the caller's own vote shows when signed in. */
  @Authorized(PUBLIC)
  @Query(() => VoteSummary)
  featureRequestVotes(@Arg('requestId', () => ID) requestId: string, @Ctx() ctx: RequestContext): Promise<VoteSummary> {
    return this.service.summary(ctx.principal, requestId);
  }

  /** PUBLIC: comments of readable requests are readable. */
  @Authorized(PUBLIC)
  @Query(() => [FeedbackComment])
  featureRequestComments(@Arg('requestId', () => ID) requestId: string, @Ctx() ctx: RequestContext): Promise<FeedbackComment[]> {
    return this.service.comments(ctx.principal, requestId);
  }

  @Authorized()
  @Mutation(() => FeedbackComment)
  addFeatureRequestComment(@Arg('requestId', () => ID) requestId: string, @Arg('body') body: string, @Ctx() ctx: RequestContext): Promise<FeedbackComment> {
    return this.service.comment(ctx.principal, requestId, body);
  }

  @Authorized()
  @Mutation(() => FeedbackComment, { description: 'Its author only.' })
  updateFeatureRequestComment(@Arg('commentId', () => ID) commentId: string, @Arg('body') body: string, @Ctx() ctx: RequestContext): Promise<FeedbackComment> {
    return this.service.editComment(ctx.principal, commentId, body);
  }

  @Authorized()
  @Mutation(() => FeedbackDeletion, { description: 'Its author, the project owner or a moderator.' })
  deleteFeatureRequestComment(@Arg('commentId', () => ID) commentId: string, @Ctx() ctx: RequestContext): Promise<FeedbackDeletion> {
    return this.service.deleteComment(ctx.principal, commentId);
  }

  /** PUBLIC: the request is refetched with the subscriber's own rights. */
  @Authorized(PUBLIC)
  @Subscription(() => FeatureRequest, {
    topics: TOPIC.feedbackRequestUpdated,
    description:
      'Emits the request as it is at once, then on every vote, comment and change, never an older version than one sent; when the request is deleted, emits it once more as last sent with `deleted` true and completes (served by the gateway).',
  })
  requestUpdated(@Arg('requestId', () => ID) _requestId: string, @Root() request: FeatureRequest): FeatureRequest {
    return request;
  }

  /** PUBLIC: subscribed to as featureRequests of the project is read; each request is refetched with the subscriber's own rights. */
  @Authorized(PUBLIC)
  @Subscription(() => FeatureRequest, {
    topics: TOPIC.feedbackRequestUpdated,
    description:
      "Emits a request of the project when it is filed, changed, voted on, commented on or moved to another status, as requestUpdated does, and a deleted one once more as last sent with `deleted` true: a board's list kept live. First sends the `limit` requests with most votes (as the board lists them), fewest first, each with its version; an unknown project is an error (served by the gateway).",
  })
  requestsUpdated(@Arg('projectId', () => ID) _projectId: string, @FirstStateLimit() _limit: number, @Root() request: FeatureRequest): FeatureRequest {
    return request;
  }
}

/** A request's `deleted`: only a subscription's event of its deletion says true (the gateway sets it). */
@Resolver(() => FeatureRequest)
export class FeatureRequestResolver {
  @DeletedFlag()
  deleted(): boolean {
    return false;
  }
}

/** A project's fields that take a query of their own, batched over every project of the answer. */
@Resolver(() => FeedbackProject)
export class FeedbackProjectResolver {
  constructor(private readonly service: FeedbackService) {}

  @FieldResolver(() => [ID], { description: 'Users who moderate the project besides its owner.' })
  moderators(@Root() p: FeedbackProject, @Ctx() ctx: RequestContext): Promise<string[]> {
    return load(ctx, this.service.moderatorsByProject, p.id);
  }
}
