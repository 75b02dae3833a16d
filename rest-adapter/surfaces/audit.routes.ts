import { defineRoute, intParam, strParam } from '../route';
import { ListAuditEntriesDocument } from './generated';

/** `{base_url}/v1/audit`: the audit trail, newest first (permission `audit:read`). Operation: audit.graphql. */
export const auditRoutes = [
  defineRoute({
    method: 'GET',
    path: '/audit',
    operation: ListAuditEntriesDocument,
    refusals: [{ code: 'validation_error', when: 'until is before since, or limit is not 1 to 100' }],
    variables: ({ query }) => ({
      actor: strParam(query.actor),
      actorKind: strParam(query.actorKind),
      operation: strParam(query.operation),
      resourceType: strParam(query.resourceType),
      resourceId: strParam(query.resourceId),
      since: strParam(query.since),
      until: strParam(query.until),
      limit: intParam(query.limit),
      offset: intParam(query.offset),
    }),
    pick: ({ auditEntries }) => auditEntries,
  }),
];
