import { Arg, Authorized, ID, Query, Resolver } from 'type-graphql';
import type { AgentService, AgentView } from './agent.service';
import { primaryTaskType } from './agent.service';
import { Agent } from './agent.types';

export function toAgent(v: AgentView): Agent {
  const s = v.spec;
  const primary = primaryTaskType(s);
  return {
    agentId: s.agentId,
    name: s.name,
    domain: s.domain,
    forgeStage: s.forgeStage,
    version: s.version,
    description: s.description,
    capabilities: s.taskTypes.map((t) => t.taskType),
    inputs: { required: primary.required, optional: primary.optional },
    outputs: s.outputs,
    taskTypes: s.taskTypes.map((t) => ({
      taskType: t.taskType,
      title: t.title,
      description: t.description,
      inputs: { required: t.required, optional: t.optional },
      artifactFormat: t.artifact.format,
      expectedSections: t.sections ?? [],
      typicalDuration: t.typicalSeconds,
    })),
    averageDuration: v.averageDuration,
    successRate: v.successRate,
    totalExecutions: v.totalExecutions,
  };
}

@Resolver(() => Agent)
export class AgentResolver {
  constructor(private readonly agentService: AgentService) {}

  @Authorized('agent:read')
  @Query(() => Agent, { description: 'One agent of the catalogue; unknown id: 404 AGENT_NOT_FOUND.' })
  async agent(@Arg('agentId', () => ID) agentId: string): Promise<Agent> {
    return toAgent(await this.agentService.get(agentId));
  }

  @Authorized('agent:read')
  @Query(() => [Agent], { description: 'The 20 agents, optionally of one domain.' })
  async agents(@Arg('domain', () => String, { nullable: true }) domain?: string): Promise<Agent[]> {
    return (await this.agentService.list(domain)).map(toAgent);
  }
}
