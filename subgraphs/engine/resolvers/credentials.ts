import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { PUBLIC } from '../../../kernel/auth/principal';
import { pageInfo } from '../../../kernel/graphql-types';
import { absoluteUrl, type RequestContext } from '../../../kernel/subgraph';
import {
  CreateCredentialInput,
  Credential,
  CredentialAuthorization,
  CredentialConsentInput,
  CredentialDeletion,
  CredentialListArgs,
  CredentialPage,
  type CredentialService,
} from '../credentials';

/** Where the authorization server sends a person back after consent (the REST face of completeCredentialAuthorization). */
export const OAUTH2_CALLBACK_PATH = '/v1/engine/credentials/oauth2/callback';

@Resolver(() => Credential)
export class CredentialResolver {
  constructor(private readonly service: CredentialService) {}

  @Authorized('credential:write')
  @Mutation(() => Credential, { description: 'Stores a credential, its data encrypted; the answer never holds a secret.' })
  createCredential(@Arg('input') input: CreateCredentialInput): Promise<Credential> {
    return this.service.create(input);
  }

  @Authorized('credential:read')
  @Query(() => CredentialPage, { description: 'Credentials, newest first, without their secrets.' })
  async credentials(@Args() args: CredentialListArgs): Promise<CredentialPage> {
    const { credentials, total } = await this.service.list(args);
    return { credentials, pagination: pageInfo(total, args.limit, args.offset) };
  }

  @Authorized('credential:read')
  @Query(() => Credential)
  credential(@Arg('credentialId', () => ID) credentialId: string): Promise<Credential> {
    return this.service.get(credentialId);
  }

  @Authorized('credential:write')
  @Mutation(() => CredentialDeletion, { description: 'Workflows that use it fail at their next run, naming it.' })
  deleteCredential(@Arg('credentialId', () => ID) credentialId: string): Promise<CredentialDeletion> {
    return this.service.delete(credentialId);
  }

  @Authorized('credential:write')
  @Mutation(() => CredentialAuthorization, {
    description: 'oAuth2Api with the authorizationCode grant: the URL where a person consents once; the platform’s callback then stores the tokens.',
  })
  authorizeCredential(@Arg('credentialId', () => ID) credentialId: string, @Ctx() ctx: RequestContext): Promise<CredentialAuthorization> {
    return this.service.authorize(credentialId, absoluteUrl(ctx, OAUTH2_CALLBACK_PATH));
  }

  /**
   * PUBLIC on purpose: the authorization server sends the person's browser here without a
   * platform key. It can do nothing but finish a consent this platform started: the state is
   * random, kept as a digest, and used once.
   */
  @Authorized(PUBLIC)
  @Mutation(() => Credential, { description: 'PUBLIC: the OAuth2 callback; exchanges the code of a consent in progress for tokens.' })
  completeCredentialAuthorization(@Arg('input') input: CredentialConsentInput): Promise<Credential> {
    return this.service.completeAuthorization(input);
  }
}
