import { Column, Entity, PrimaryColumn } from 'typeorm';

export const FRAGMENT_TYPES = ['role', 'constraints', 'examples', 'context', 'format'] as const;
export type FragmentType = (typeof FRAGMENT_TYPES)[number];

/** A fragment: its name (= fragmentId), its type, which version is the latest. */
@Entity({ schema: 'promptlib', name: 'fragments' })
export class FragmentEntity {
  @PrimaryColumn('text', { name: 'fragment_id' }) fragmentId: string;
  @Column('text') type: FragmentType;
  @Column('int', { name: 'latest_version' }) latestVersion: number;
  @Column('int', { name: 'version_seq' }) versionSeq: number;
  @Column('timestamptz', { name: 'created_at', default: () => 'now()' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' }) updatedAt: Date;
}

/** One version of a fragment; prompts pinning it (`{{fragment:id:version}}`) keep using it. */
@Entity({ schema: 'promptlib', name: 'fragment_versions' })
export class FragmentVersionEntity {
  @PrimaryColumn('text', { name: 'fragment_id' }) fragmentId: string;
  @PrimaryColumn('int') version: number;
  @Column('text') content: string;
  @Column('text') description: string;
  @Column('jsonb') metadata: Record<string, unknown>;
  @Column('text', { name: 'fragment_refs', array: true }) fragmentRefs: string[];
  @Column('timestamptz', { name: 'created_at', default: () => 'now()' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' }) updatedAt: Date;
}
