import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { PageInfo } from '../../kernel/graphql-types';

@ObjectType()
export class FeedbackSubscription {
  @Field() tier: string;
  @Field() status: string;
}

@ObjectType({ description: 'A person signed in through GitHub or Google.' })
export class FeedbackUser {
  @Field(() => ID) id: string;
  @Field() email: string;
  @Field() username: string;
  @Field() name: string;
  @Field(() => String, { nullable: true }) avatar: string | null;
  @Field(() => FeedbackSubscription) subscription: FeedbackSubscription;
  @Field() createdAt: Date;
}

@ObjectType()
export class ProjectSettings {
  @Field() isPublic: boolean;
  @Field() allowAnonymous: boolean;
  @Field() requireApproval: boolean;
}

@ObjectType()
export class ProjectStats {
  @Field(() => Int) totalRequests: number;
  @Field(() => Int) totalVotes: number;
  @Field(() => Int) totalComments: number;
}

@ObjectType({ description: 'A product collecting feature requests.' })
export class FeedbackProject {
  @Field(() => ID) id: string;
  @Field() name: string;
  @Field() description: string;
  @Field() slug: string;
  @Field(() => ID) ownerId: string;
  @Field(() => ProjectSettings) settings: ProjectSettings;
  @Field(() => ProjectStats) stats: ProjectStats;
  @Field(() => [ID], { description: 'Users who moderate the project besides its owner.' }) moderators?: string[];
  @Field() createdAt: Date;
}

@ObjectType()
export class FeedbackProjectPage {
  @Field(() => [FeedbackProject]) projects: FeedbackProject[];
  @Field(() => PageInfo) pagination: PageInfo;
}

@ObjectType({ description: 'A feature request. votesCount is up-votes minus down-votes.' })
export class FeatureRequest {
  @Field(() => ID) id: string;
  @Field(() => ID) projectId: string;
  @Field(() => ID, { nullable: true, description: 'Null for an anonymous submission.' }) authorId: string | null;
  @Field() title: string;
  @Field() description: string;
  @Field({ description: 'pending, approved, rejected or completed.' }) status: string;
  @Field(() => String, { nullable: true }) category: string | null;
  @Field(() => [String]) tags: string[];
  @Field({ description: 'low, medium, high or critical.' }) priority: string;
  @Field(() => Int) votesCount: number;
  @Field(() => Int) commentsCount: number;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
  @Field(() => Int, { description: 'Raised by every change of the request (a vote, a comment, an edit): of two states, the higher version is the newer.' })
  version: number;
}

@ObjectType()
export class FeatureRequestPage {
  @Field(() => [FeatureRequest]) requests: FeatureRequest[];
  @Field(() => Int) total: number;
  @Field(() => Int) limit: number;
  @Field(() => Int) offset: number;
}

@ObjectType({ description: 'Votes of a request; userVote and userVoteId are "" without a signed-in caller or vote.' })
export class VoteSummary {
  @Field(() => Int) totalVotes: number;
  @Field(() => Int) upVotes: number;
  @Field(() => Int) downVotes: number;
  @Field() userVote: string;
  @Field() userVoteId: string;
}

@ObjectType()
export class FeedbackComment {
  @Field(() => ID) id: string;
  @Field(() => ID) requestId: string;
  @Field(() => ID) authorId: string;
  @Field() body: string;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
}

@ObjectType()
export class FeedbackDeletion {
  @Field(() => ID) id: string;
}

@InputType()
export class CreateProjectInput {
  @Field(() => String, { nullable: true }) name?: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => String, { nullable: true, description: 'Unique: lowercase letters, digits and "-".' }) slug?: string;
}

@InputType()
export class ProjectSettingsInput {
  @Field(() => Boolean, { nullable: true }) isPublic?: boolean;
  @Field(() => Boolean, { nullable: true }) allowAnonymous?: boolean;
  @Field(() => Boolean, { nullable: true }) requireApproval?: boolean;
}

@InputType()
export class UpdateProjectInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => ProjectSettingsInput, { nullable: true }) settings?: ProjectSettingsInput | null;
}

@InputType()
export class FeatureRequestInput {
  @Field(() => String, { nullable: true }) title?: string;
  @Field(() => String, { nullable: true }) description?: string;
  @Field(() => String, { nullable: true }) category?: string | null;
  @Field(() => [String], { nullable: true }) tags?: string[] | null;
  @Field(() => String, { nullable: true }) priority?: string | null;
}
