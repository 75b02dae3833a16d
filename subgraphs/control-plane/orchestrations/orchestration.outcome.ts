import { gateCriteria, hasValue, type GateValidationResult, type StageName } from '../gates';
import { ownEntry, setOwn } from '../../../kernel/names';
import type { OrchestrationFailure, OrchestrationTaskRecord } from './orchestration.store';

/**
 * What the stages of an orchestration yield: a stage's outputs merged from its tasks' results,
 * the orchestration's from its stages', and the failure recorded when a task fails or an exit
 * gate does not pass.
 */

/** A task's contribution to its stage's outputs: result.output, plus the files it touched. */
export function taskOutputs(t: { result: Record<string, unknown> | null }): Record<string, unknown> {
  const r = (t.result ?? {}) as { output?: unknown; filesCreated?: unknown; filesModified?: unknown };
  const out: Record<string, unknown> = r.output && typeof r.output === 'object' && !Array.isArray(r.output) ? { ...(r.output as object) } : {};
  if (Array.isArray(r.filesCreated) && r.filesCreated.length) out.filesCreated = r.filesCreated;
  if (Array.isArray(r.filesModified) && r.filesModified.length) out.filesModified = r.filesModified;
  return out;
}

/** Later maps win, except that file lists are concatenated and empty values never hide a value. */
export function mergeOutputs(maps: Record<string, unknown>[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const map of maps) {
    for (const [k, v] of Object.entries(map)) {
      // Output names come from the model's answer: each is an entry of its own, `__proto__` too.
      if ((k === 'filesCreated' || k === 'filesModified') && Array.isArray(v)) {
        merged[k] = [...new Set([...((merged[k] as unknown[]) ?? []), ...v])];
      } else if (hasValue(v) || !Object.hasOwn(merged, k)) setOwn(merged, k, v);
    }
  }
  return merged;
}

export function gateFailure(gate: GateValidationResult, outputs: Record<string, unknown>): OrchestrationFailure {
  return {
    code: 'forge_gate_failure',
    message: `The exit gate of ${gate.stage} failed: missing ${gate.missingCriteria?.join(', ')}`,
    details: {
      gate: { stage: gate.stage, gateType: gate.gateType },
      // `actual`: what the outputs hold under the criterion's name or its evidence names (empty), else null.
      failed_criteria: (gate.missingCriteria ?? []).map((criterion) => {
        const evidence = gateCriteria(gate.stage as StageName, 'exit').find((k) => k.name === criterion)?.evidence ?? [];
        const actual = [criterion, ...evidence].map((n) => ownEntry(outputs, n)).find((v) => v !== undefined) ?? null;
        return { criterion, required: true, actual };
      }),
      validation: gate,
    },
  };
}

export function taskFailure(stage: string, t: OrchestrationTaskRecord): OrchestrationFailure {
  const e = (t.error ?? {}) as { code?: string; message?: string };
  return {
    code: 'agent_execution_failed',
    message: `Task ${t.taskKey} (${t.agentId}) of stage ${stage} ${t.status === 'cancelled' ? 'was cancelled' : `failed: ${e.message ?? 'unknown error'}`}`,
    details: {
      agent_id: t.agentId,
      execution_id: t.taskId,
      reason: e.code ?? t.status,
      retryable: false,
      stage,
      task: t.taskKey,
      error: t.error,
    },
  };
}
