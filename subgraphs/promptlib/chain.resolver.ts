import { Arg, Args, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../kernel/subgraph';
import type { ChainService } from './chain.service';
import { ChainListArgs, CreateChainInput, ExecuteChainInput, UpdateChainInput } from './chain.inputs';
import { Chain, ChainDeletion, ChainExecution, ChainList } from './chain.types';

@Resolver(() => Chain)
export class ChainResolver {
  constructor(private readonly chainService: ChainService) {}

  @Authorized('prompt:read')
  @Query(() => Chain)
  chain(@Arg('chainId', () => ID) chainId: string, @Arg('version', () => Int, { nullable: true }) version?: number): Promise<Chain> {
    return this.chainService.get(chainId, version);
  }

  @Authorized('prompt:read')
  @Query(() => ChainList, { description: 'Chains (latest versions), newest first.' })
  chains(@Args() args: ChainListArgs): Promise<ChainList> {
    return this.chainService.list({ ...args, limit: args.limit ?? 20, offset: args.offset ?? 0 });
  }

  // Any caller of the surface; the service asks for prompt:read or chain:execute.
  @Authorized()
  @Query(() => ChainExecution, { description: 'An execution: running with completedSteps, then completed with result, or failed with error.' })
  chainExecution(@Arg('executionId', () => ID) executionId: string, @Ctx() ctx: RequestContext): Promise<ChainExecution> {
    return this.chainService.getExecution(ctx.principal, executionId);
  }

  @Authorized('prompt:write')
  @Mutation(() => Chain)
  createChain(@Arg('input') input: CreateChainInput): Promise<Chain> {
    return this.chainService.create(input);
  }

  @Authorized('prompt:write')
  @Mutation(() => Chain, { description: 'Changes the latest version in place, or stores a new version (createNewVersion).' })
  updateChain(@Arg('chainId', () => ID) chainId: string, @Arg('input') input: UpdateChainInput): Promise<Chain> {
    return this.chainService.update(chainId, input);
  }

  @Authorized('prompt:write')
  @Mutation(() => ChainDeletion, { description: 'Deletes the chain with every version and execution.' })
  deleteChain(@Arg('chainId', () => ID) chainId: string): Promise<ChainDeletion> {
    return this.chainService.delete(chainId);
  }

  @Authorized('chain:execute')
  @Mutation(() => ChainExecution, { description: 'Starts an execution of the latest version (asynchronous: poll chainExecution).' })
  executeChain(@Arg('chainId', () => ID) chainId: string, @Arg('input') input: ExecuteChainInput, @Ctx() ctx: RequestContext): Promise<ChainExecution> {
    return this.chainService.execute(ctx.principal, chainId, input);
  }
}
