import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A file an agent task produced (control_plane.task_artifacts), listed in the task's result. */
export const ARTIFACT_KINDS = ['created', 'modified'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

@Entity({ schema: 'control_plane', name: 'task_artifacts' })
export class TaskArtifactEntity {
  @PrimaryColumn('uuid', { name: 'task_id' }) taskId: string;
  /** Relative path, unique within the task. */
  @PrimaryColumn('text') path: string;
  @Column('text') kind: ArtifactKind;
  @Column('text') content: string;
  @Column('int') lines: number;
  @Column('int') bytes: number;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}

export function toArtifact(r: any): TaskArtifactEntity {
  return Object.assign(new TaskArtifactEntity(), {
    taskId: r.task_id,
    path: r.path,
    kind: r.kind,
    content: r.content,
    lines: r.lines,
    bytes: r.bytes,
    createdAt: r.created_at,
  });
}
