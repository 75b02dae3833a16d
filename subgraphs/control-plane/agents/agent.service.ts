import type { DataSource } from 'typeorm';
import { AppError, errors } from '../../../kernel/errors';
import { AGENTS, DOMAINS, findAgent, type AgentSpec, type TaskTypeSpec } from './agent.catalog';
import { agentStore } from './agent.store';

/**
 * The agent catalogue with figures from real task history: averageDuration (seconds, completed
 * tasks) and successRate (percent of finished tasks that completed; cancelled ones do not count),
 * over each agent's last 1,000 finished tasks; both 0 until the agent has finished one
 * (they are numbers; totalExecutions 0 says there is no history).
 */

export const STATS_WINDOW = 1000;

export interface AgentStats {
  totalExecutions: number;
  averageDuration: number;
  successRate: number;
}

export interface AgentView extends AgentStats {
  spec: AgentSpec;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export class AgentService {
  constructor(private readonly db: DataSource) {}

  async get(agentId: string): Promise<AgentView> {
    const spec = findAgent(agentId);
    if (!spec) throw new AppError('AGENT_NOT_FOUND', `Agent ${agentId} not found`, { agentId });
    const stats = await this.stats([agentId]);
    return { spec, ...stats.get(agentId)! };
  }

  async list(domain?: string | null): Promise<AgentView[]> {
    if (domain != null && !(DOMAINS as readonly string[]).includes(domain)) {
      throw errors.field('domain', `must be one of ${DOMAINS.join(', ')}`);
    }
    const specs = AGENTS.filter((a) => domain == null || a.domain === domain);
    const stats = await this.stats(specs.map((a) => a.agentId));
    return specs.map((spec) => ({ spec, ...stats.get(spec.agentId)! }));
  }

  private async stats(agentIds: string[]): Promise<Map<string, AgentStats>> {
    const rows = await agentStore.stats(this.db, agentIds, STATS_WINDOW);
    const out = new Map<string, AgentStats>(agentIds.map((id) => [id, { totalExecutions: 0, averageDuration: 0, successRate: 0 }]));
    for (const r of rows) {
      const finished = r.completed + r.failed;
      out.set(r.agent_id, {
        totalExecutions: finished,
        averageDuration: r.avg_ms === null ? 0 : Math.round(r.avg_ms) / 1000,
        successRate: finished ? round2((r.completed / finished) * 100) : 0,
      });
    }
    return out;
  }
}

/** The agent-level inputs: those of the agent's primary (first) task type. */
export function primaryTaskType(spec: AgentSpec): TaskTypeSpec {
  return spec.taskTypes[0]!;
}
