/** The audit trail: every change through any surface, recorded once (audit.ts), kept in platform.audit_log (audit.store.ts). */
export {
  AuditTrail,
  anonymousAuditContext,
  auditResource,
  outsideAudit,
  recordMutations,
  resourceTypeOf,
  resourceIdOf,
  changedFields,
  SECRET_NAME,
} from './audit';
export type { AuditFilter, AuditRow } from './audit.store';
