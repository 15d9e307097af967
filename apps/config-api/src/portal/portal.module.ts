import { Module } from '@nestjs/common';
import { AccountsModule } from '../admin/accounts/accounts.module';
import { AdminEventsModule } from '../admin/events/admin-events.module';
import { DestinationsModule } from '../destinations/destinations.module';
import { DestinationsPortalController } from './portal-destinations.controller';
import { RedeliveriesModule } from '../admin/redeliveries/redeliveries.module';
import { StatsModule } from '../admin/stats/stats.module';
import { OpenApiModule } from '../open-api/open-api.module';
import { PortalAccessModule } from '../portal-access/portal-access.module';
import { PortalEndpointController } from './portal-endpoint.controller';
import { PortalEventsController } from './portal-events.controller';
import { PortalLinksController, PortalSessionController } from './portal-links.controller';
import { PortalSettingsService } from './portal-settings.service';

/**
 * The account portal's API (`/portal/v1/*`) and its links (CONTRACT §10): the admin and Open API
 * services, each call scoped to the account PortalSessionGuard bound to the request.
 */
@Module({
  imports: [PortalAccessModule, AccountsModule, AdminEventsModule, RedeliveriesModule, StatsModule, OpenApiModule, DestinationsModule],
  controllers: [PortalLinksController, PortalSessionController, PortalEventsController, PortalEndpointController, DestinationsPortalController],
  providers: [PortalSettingsService],
})
export class PortalModule {}
