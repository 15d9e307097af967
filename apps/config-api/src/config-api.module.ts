import { Module } from '@nestjs/common';
import { PersistenceModule } from '@app/persistence';
import { ObservabilityModule } from '@app/runtime';
import { AccountsModule } from './admin/accounts/accounts.module';
import { AdminBotWebhooksModule } from './admin/bot-webhooks/admin-bot-webhooks.module';
import { AdminEventsModule } from './admin/events/admin-events.module';
import { EndpointsModule } from './admin/endpoints/endpoints.module';
import { QueueModule } from './admin/queue/queue.module';
import { ConsoleModule } from './console/console.module';
import { OpenApiModule } from './open-api/open-api.module';
import { PortalModule } from './portal/portal.module';
import { PortalPageModule } from './portal/portal-page.module';

/** The Open API (`/open_api_v1/*`) for API users and the admin API (`/admin/v1/*`) for operators. */
@Module({
  imports: [
    ObservabilityModule,
    PersistenceModule.forRoot('config-api'),
    OpenApiModule,
    AccountsModule,
    AdminEventsModule,
    AdminBotWebhooksModule,
    QueueModule,
    EndpointsModule,
    PortalModule,
    ConsoleModule,
    PortalPageModule,
  ],
})
export class ConfigApiModule {}
