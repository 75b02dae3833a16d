import { Column, Entity, PrimaryColumn } from 'typeorm';

export const PROMPT_STATUSES = ['draft', 'active', 'archived'] as const;
export type PromptStatus = (typeof PROMPT_STATUSES)[number];

/** A prompt: its name (= promptId), which version is the latest, and the version counter. */
@Entity({ schema: 'promptlib', name: 'prompts' })
export class PromptEntity {
  @PrimaryColumn('text', { name: 'prompt_id' }) promptId: string;
  @Column('int', { name: 'latest_version' }) latestVersion: number;
  /** The highest version number ever given: numbers are never reused after a delete. */
  @Column('int', { name: 'version_seq' }) versionSeq: number;
  @Column('timestamptz', { name: 'created_at', default: () => 'now()' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' }) updatedAt: Date;
}

/** One version of a prompt. Only the latest version's content may change (a trigger enforces it). */
@Entity({ schema: 'promptlib', name: 'prompt_versions' })
export class PromptVersionEntity {
  @PrimaryColumn('text', { name: 'prompt_id' }) promptId: string;
  @PrimaryColumn('int') version: number;
  @Column('text') template: string;
  @Column('text') description: string;
  @Column('text', { array: true }) variables: string[];
  @Column('jsonb') metadata: Record<string, unknown>;
  @Column('text') status: PromptStatus;
  /** Ids of the fragments the template references directly (usage counts, fast rendering). */
  @Column('text', { name: 'fragment_refs', array: true }) fragmentRefs: string[];
  @Column('timestamptz', { name: 'created_at', default: () => 'now()' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' }) updatedAt: Date;
}

/** The version of a prompt served to an environment (set by promote). */
@Entity({ schema: 'promptlib', name: 'prompt_pins' })
export class PromptPinEntity {
  @PrimaryColumn('text', { name: 'prompt_id' }) promptId: string;
  @PrimaryColumn('text') environment: string;
  @Column('int') version: number;
  @Column('timestamptz', { name: 'promoted_at', default: () => 'now()' }) promotedAt: Date;
}

/** One model run of a prompt version: a test, one arm of an A/B test case, or a chain step. */
@Entity({ schema: 'promptlib', name: 'prompt_tests' })
export class PromptTestEntity {
  @PrimaryColumn('uuid', { name: 'test_id' }) testId: string;
  @Column('text', { name: 'prompt_id' }) promptId: string;
  @Column('int') version: number;
  @Column('text') source: 'test' | 'ab' | 'chain';
  @Column('uuid', { name: 'ab_test_id', nullable: true }) abTestId: string | null;
  @Column('uuid', { name: 'execution_id', nullable: true }) executionId: string | null;
  @Column('jsonb') variables: Record<string, unknown>;
  @Column('text') model: string;
  @Column('real') temperature: number;
  @Column('int', { name: 'max_tokens' }) maxTokens: number;
  @Column('text', { nullable: true }) output: string | null;
  @Column('int', { name: 'tokens_used' }) tokensUsed: number;
  @Column('int', { name: 'latency_ms' }) latencyMs: number;
  @Column('boolean') success: boolean;
  @Column('jsonb', { nullable: true }) error: Record<string, unknown> | null;
  @Column('uuid', { name: 'key_id', nullable: true }) keyId: string | null;
  @Column('timestamptz', { name: 'created_at', default: () => 'now()' }) createdAt: Date;
}

/** A stored A/B test: both arms, the test cases, the per-arm results and the recommendation. */
@Entity({ schema: 'promptlib', name: 'ab_tests' })
export class PromptAbTestEntity {
  @PrimaryColumn('uuid', { name: 'test_id' }) testId: string;
  @Column('jsonb', { name: 'prompt_a' }) promptA: Record<string, unknown>;
  @Column('jsonb', { name: 'prompt_b' }) promptB: Record<string, unknown>;
  @Column('jsonb', { name: 'test_cases' }) testCases: Record<string, unknown>[];
  @Column('text') model: string;
  @Column('real') temperature: number;
  @Column('int', { name: 'max_tokens' }) maxTokens: number;
  @Column('jsonb') results: Record<string, unknown>;
  @Column('text') recommendation: 'promptA' | 'promptB';
  @Column('text') reason: string;
  @Column('uuid', { name: 'key_id', nullable: true }) keyId: string | null;
  @Column('timestamptz', { name: 'created_at', default: () => 'now()' }) createdAt: Date;
}
