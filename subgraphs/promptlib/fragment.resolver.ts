import { Arg, Args, Authorized, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { FragmentService } from './fragment.service';
import { CreateFragmentInput, FragmentListArgs, UpdateFragmentInput } from './fragment.inputs';
import { Fragment, FragmentDeletion, FragmentList } from './fragment.types';

@Resolver(() => Fragment)
export class FragmentResolver {
  constructor(private readonly fragmentService: FragmentService) {}

  @Authorized('prompt:read')
  @Query(() => Fragment)
  fragment(@Arg('fragmentId', () => ID) fragmentId: string, @Arg('version', () => Int, { nullable: true }) version?: number): Promise<Fragment> {
    return this.fragmentService.get(fragmentId, version);
  }

  @Authorized('prompt:read')
  @Query(() => FragmentList, { description: 'Fragments (latest versions), newest first.' })
  fragments(@Args() args: FragmentListArgs): Promise<FragmentList> {
    return this.fragmentService.list({ ...args, limit: args.limit ?? 20, offset: args.offset ?? 0 });
  }

  @Authorized('fragment:write')
  @Mutation(() => Fragment)
  createFragment(@Arg('input') input: CreateFragmentInput): Promise<Fragment> {
    return this.fragmentService.create(input);
  }

  @Authorized('fragment:write')
  @Mutation(() => Fragment, { description: 'Changes the latest version in place, or stores a new version (createNewVersion).' })
  updateFragment(@Arg('fragmentId', () => ID) fragmentId: string, @Arg('input') input: UpdateFragmentInput): Promise<Fragment> {
    return this.fragmentService.update(fragmentId, input);
  }

  @Authorized('fragment:write')
  @Mutation(() => FragmentDeletion, { description: 'Deletes every version; 409 while an active prompt uses it, unless force.' })
  deleteFragment(
    @Arg('fragmentId', () => ID) fragmentId: string,
    @Arg('force', () => Boolean, { nullable: true, defaultValue: false }) force: boolean,
  ): Promise<FragmentDeletion> {
    return this.fragmentService.delete(fragmentId, force);
  }
}
