import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { PageInfo } from '../../kernel/graphql-types';

@ObjectType({ description: 'A short link. Its password or PIN is never part of it (only a hash is stored).' })
export class Link {
  @Field(() => ID) id: string;
  @Field({ description: 'The short link is GET /links/{slug}.' }) slug: string;
  @Field({ description: 'The destination.' }) url: string;
  @Field({ description: 'The owner: the id of the key that created the link.' }) userId: string;
  @Field() isActive: boolean;
  @Field(() => Date, { nullable: true }) expiresAt: Date | null;
  @Field({ description: 'none, password or pin.' }) protectionType: string;
  @Field(() => String, { nullable: true, description: 'Shown on the gate page (HTML-escaped).' }) protectionHint: string | null;
  @Field({ description: 'general, personal, work or nsfw.' }) contentClassification: string;
  @Field(() => Int, { description: 'Visits counted so far.' }) visits: number;
  @Field() createdAt: Date;
  @Field() updatedAt: Date;
}

@ObjectType({ description: "A slug's public view for edge workers: the destination is empty for a protected link." })
export class LinkLookup {
  @Field(() => ID) id: string;
  @Field() slug: string;
  @Field() destination: string;
  @Field() userId: string;
  @Field() isActive: boolean;
  @Field(() => Date, { nullable: true }) expiresAt: Date | null;
  @Field() protectionType: string;
  @Field(() => String, { nullable: true }) protectionHint: string | null;
  @Field() contentClassification: string;
}

@ObjectType()
export class LinkPage {
  @Field(() => [Link]) links: Link[];
  @Field(() => PageInfo) pagination: PageInfo;
}

@ObjectType({ description: 'One visit of the short link.' })
export class LinkVisit {
  @Field() at: Date;
  @Field(() => String, { nullable: true }) referrer: string | null;
  @Field(() => String, { nullable: true }) userAgent: string | null;
  @Field(() => String, { nullable: true, description: 'From CF-IPCountry or X-Country-Code when a proxy sets it.' }) country: string | null;
}

@ObjectType()
export class LinkVisitPage {
  @Field(() => ID) linkId: string;
  @Field(() => [LinkVisit]) visits: LinkVisit[];
  @Field(() => PageInfo) pagination: PageInfo;
}

@ObjectType({ description: 'A successful verification: the destination, revealed only now.' })
export class LinkVerification {
  @Field(() => ID) id: string;
  @Field() slug: string;
  @Field() destination: string;
}

@ObjectType()
export class LinkDeletion {
  @Field(() => ID) id: string;
  @Field() deletedAt: Date;
}

@InputType()
export class CreateLinkInput {
  @Field({ description: 'http or https.' }) url: string;
  @Field(() => String, { nullable: true, description: '3 to 64 letters, digits, "-" or "_"; random when not given; "api" is reserved.' }) customSlug?:
    string | null;
  @Field(() => String, { nullable: true, description: '4 to 128 characters (not with pin).' }) password?: string | null;
  @Field(() => String, { nullable: true, description: 'Exactly 4 or 6 digits (not with password).' }) pin?: string | null;
  @Field(() => String, { nullable: true }) protectionHint?: string | null;
  @Field(() => String, { nullable: true, description: 'general (default), personal, work or nsfw.' }) contentClassification?: string | null;
  @Field(() => Date, { nullable: true }) expiresAt?: Date | null;
}

@InputType()
export class UpdateLinkInput {
  @Field(() => String, { nullable: true }) url?: string | null;
  @Field(() => String, { nullable: true, description: 'Sets password protection.' }) password?: string | null;
  @Field(() => String, { nullable: true, description: 'Sets PIN protection.' }) pin?: string | null;
  @Field(() => String, { nullable: true }) protectionHint?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'true: the link becomes public (protection none).' }) removeProtection?: boolean | null;
  @Field(() => String, { nullable: true }) contentClassification?: string | null;
  @Field(() => Date, { nullable: true }) expiresAt?: Date | null;
  @Field(() => Boolean, { nullable: true }) isActive?: boolean | null;
}
