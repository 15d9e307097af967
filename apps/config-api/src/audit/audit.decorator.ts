import { SetMetadata } from '@nestjs/common';

export const AUDIT_METADATA = 'audit:action';

/**
 * The action a write is recorded as in the audit log: a dotted word (`account.create`, `set_url`).
 * Every write of the admin API, the Open API and the portal declares one; admin-roles.e2e-spec.ts
 * walks the routes to keep it so. AuditInterceptor records the call before its answer leaves.
 */
export const Audit = (action: string): MethodDecorator => SetMetadata(AUDIT_METADATA, action);
