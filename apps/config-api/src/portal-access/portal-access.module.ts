import { Module } from '@nestjs/common';
import { PortalAccessService } from './portal-access.service';
import { PortalLimits } from './portal-limits';
import { PortalSessionGuard } from './portal-session.guard';

/** Portal links and sessions, shared by the admin route, the signed Open API operation and the portal API. */
@Module({ providers: [PortalAccessService, PortalLimits, PortalSessionGuard], exports: [PortalAccessService, PortalLimits, PortalSessionGuard] })
export class PortalAccessModule {}
