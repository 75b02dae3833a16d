import { ArrayMaxSize, IsIn, IsOptional, Length } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { KEY_SERVICES, TIERS } from '../../../kernel/auth/principal';

@InputType()
export class CreateApiKeyInput {
  @Field({ nullable: true }) @IsOptional() @Length(1, 200) name?: string;
  @Field(() => [String], { nullable: true, description: 'Defaults to ["*"] (full access); never more than the caller holds.' })
  @IsOptional()
  @ArrayMaxSize(100)
  permissions?: string[];
  @Field({ nullable: true }) expiresAt?: Date;
  @Field(() => String, { nullable: true, description: 'control-plane (default), promptlib, engine, links or infra.' })
  @IsOptional()
  @IsIn(KEY_SERVICES)
  service?: (typeof KEY_SERVICES)[number];
  @Field(() => String, { nullable: true, description: "live or test; defaults to the calling key's." })
  @IsOptional()
  @IsIn(['live', 'test'])
  environment?: 'live' | 'test';
  @Field(() => String, { nullable: true, description: 'free, starter, professional (default) or enterprise.' })
  @IsOptional()
  @IsIn(TIERS)
  tier?: (typeof TIERS)[number];
}

@InputType()
export class UpdateApiKeyInput {
  @Field({ nullable: true }) @IsOptional() @Length(1, 200) name?: string;
  @Field(() => Date, { nullable: true, description: 'null removes the expiry.' }) expiresAt?: Date | null;
}
