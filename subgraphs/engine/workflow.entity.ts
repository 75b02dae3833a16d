import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import type { Connections, WorkflowNode, WorkflowSettings } from './definition';

/** A workflow definition, as it is now (engine.workflows). */
@Entity({ schema: 'engine', name: 'workflows' })
export class WorkflowEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text', { array: true }) tags: string[];
  @Column('boolean') active: boolean;
  @Column('integer') version: number;
  @Column('jsonb') nodes: WorkflowNode[];
  @Column('jsonb') connections: Connections;
  @Column('jsonb') settings: WorkflowSettings;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}

/** Every version of a definition, immutable: an execution runs (and resumes) the version it started with. */
@Entity({ schema: 'engine', name: 'workflow_versions' })
export class WorkflowVersionEntity {
  @PrimaryColumn('uuid', { name: 'workflow_id' }) workflowId: string;
  @PrimaryColumn('integer') version: number;
  @Column('text') name: string;
  @Column('boolean') active: boolean;
  @Column('jsonb') nodes: WorkflowNode[];
  @Column('jsonb') connections: Connections;
  @Column('jsonb') settings: WorkflowSettings;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}
