import { Module } from '@nestjs/common';
import { PortalAccessService } from './portal-access.service';
import { PortalSessionGuard } from './portal-session.guard';

/** Portal links and sessions, shared by the admin route, the signed Open API operation and the portal API. */
@Module({ providers: [PortalAccessService, PortalSessionGuard], exports: [PortalAccessService, PortalSessionGuard] })
export class PortalAccessModule {}
