import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A cron schedule of a workflow (engine.schedules); schedule.service.ts explains how it fires. */
@Entity({ schema: 'engine', name: 'schedules' })
export class ScheduleEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid', { name: 'workflow_id' }) workflowId: string;
  @Column('text', { name: 'node_name', nullable: true }) nodeName: string | null;
  @Column('text') cron: string;
  @Column('text') timezone: string;
  @Column('jsonb') payload: Record<string, unknown>;
  @Column('boolean') enabled: boolean;
  @Column('timestamptz', { name: 'next_run_at', nullable: true }) nextRunAt: Date | null;
  @Column('timestamptz', { name: 'last_run_at', nullable: true }) lastRunAt: Date | null;
  @Column('timestamptz', { name: 'last_scheduled_for', nullable: true }) lastScheduledFor: Date | null;
  @Column('uuid', { name: 'last_execution_id', nullable: true }) lastExecutionId: string | null;
  @Column('integer') runs: number;
  @Column('uuid', { name: 'created_by', nullable: true }) createdBy: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
