/** The audit trail's GraphQL face (`auditEntries`, permission `audit:read`): the trail itself is the kernel's (kernel/audit). */

// Its GraphQL classes' decorators need the polyfill, also where no server has loaded it (unit tests).
import 'reflect-metadata';

export { AuditResolver } from './audit.resolver';
