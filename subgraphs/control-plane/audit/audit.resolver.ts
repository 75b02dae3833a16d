import { Arg, Authorized, Int, Query, Resolver } from 'type-graphql';
import type { AuditRow, AuditTrail } from '../../../kernel/audit';
import { checkWindow } from '../../../kernel/db/page';
import { errors } from '../../../kernel/errors';
import { pageInfo } from '../../../kernel/graphql-types';
import { AuditEntry, AuditEntryList } from './audit.types';

export function toAuditEntry(r: AuditRow): AuditEntry {
  return {
    id: r.id,
    at: r.at,
    actor: { kind: r.actor_kind, id: r.actor_id, name: r.actor_name, service: r.actor_service },
    ip: r.ip,
    userAgent: r.user_agent,
    requestId: r.request_id,
    service: r.subgraph,
    operation: r.operation,
    resourceType: r.resource_type,
    resourceId: r.resource_id,
    changedFields: r.changed_fields,
  };
}

@Resolver(() => AuditEntry)
export class AuditResolver {
  constructor(private readonly trail: AuditTrail) {}

  @Authorized('audit:read')
  @Query(() => AuditEntryList, {
    description:
      'The audit trail, newest first: every change made through any surface, filtered by actor (key or person id, or key name), operation, resource and time, and paged.',
  })
  async auditEntries(
    @Arg('actor', () => String, { nullable: true, description: "A key's or person's id, or a key's name." }) actor: string | null,
    @Arg('actorKind', () => String, { nullable: true, description: 'apiKey, user or anonymous.' }) actorKind: string | null,
    @Arg('operation', () => String, { nullable: true }) operation: string | null,
    @Arg('resourceType', () => String, { nullable: true }) resourceType: string | null,
    @Arg('resourceId', () => String, { nullable: true }) resourceId: string | null,
    @Arg('since', () => Date, { nullable: true, description: 'Entries at or after this time.' }) since: Date | null,
    @Arg('until', () => Date, { nullable: true, description: 'Entries before this time.' }) until: Date | null,
    @Arg('limit', () => Int, { nullable: true, description: '1 to 100; 20 when not given.' }) limit: number | null,
    @Arg('offset', () => Int, { nullable: true }) offset: number | null,
  ): Promise<AuditEntryList> {
    const window = { limit: limit ?? 20, offset: offset ?? 0 };
    checkWindow(window);
    if (since && until && since > until) throw errors.field('until', 'must not be before since');
    const page = await this.trail.list({ actor, actorKind, operation, resourceType, resourceId, since, until }, window);
    return { entries: page.rows.map(toAuditEntry), pagination: pageInfo(page.total, window.limit, window.offset) };
  }
}
