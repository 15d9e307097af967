import { SetMetadata } from '@nestjs/common';
import type { AdminRole } from '@app/runtime';

/**
 * What an admin route lets its caller do, declared on every route handler (CONTRACT §15):
 *   read        every GET (viewer and up)
 *   operate     redeliver, enable an endpoint, pause or resume a destination, send a test event (operator and up)
 *   administer  everything else: accounts, secrets and tokens, erasures, redaction, offboarding, audit (admin)
 * AdminAccessGuard reads it; a route without one is refused, and admin-routes.e2e-spec.ts walks every route.
 */
export type AdminPermission = 'read' | 'operate' | 'administer';

export const PERMISSION_ROLE: Record<AdminPermission, AdminRole> = { read: 'viewer', operate: 'operator', administer: 'admin' };

export const PERMISSION_METADATA = 'admin:permission';

export const Permission = (permission: AdminPermission): MethodDecorator => SetMetadata(PERMISSION_METADATA, permission);
