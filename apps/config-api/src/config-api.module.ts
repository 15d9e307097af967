import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { PersistenceModule } from '@app/persistence';
import { RequestSpanInterceptor, RuntimeModule } from '@app/runtime';
import { AccountsModule } from './admin/accounts/accounts.module';
import { AdminBotWebhooksModule } from './admin/bot-webhooks/admin-bot-webhooks.module';
import { AdminEventsModule } from './admin/events/admin-events.module';
import { DataProtectionModule } from './admin/data-protection/data-protection.module';
import { AdminDestinationsModule } from './admin/destinations/admin-destinations.module';
import { AuditLogModule } from './admin/audit-log/audit-log.module';
import { AuditModule } from './audit/audit.module';
import { IdentityModule } from './admin/identity/identity.module';
import { EndpointsModule } from './admin/endpoints/endpoints.module';
import { QueueModule } from './admin/queue/queue.module';
import { RedeliveriesModule } from './admin/redeliveries/redeliveries.module';
import { StatsModule } from './admin/stats/stats.module';
import { ConsoleModule } from './console/console.module';
import { OpenApiModule } from './open-api/open-api.module';
import { PortalModule } from './portal/portal.module';
import { PortalPageModule } from './portal/portal-page.module';

/** The Open API (`/open_api_v1/*`) for API users and the admin API (`/admin/v1/*`) for operators. */
@Module({
  imports: [
    RuntimeModule,
    PersistenceModule.forRoot('config-api'),
    AuditModule,
    IdentityModule,
    AuditLogModule,
    OpenApiModule,
    AccountsModule,
    AdminDestinationsModule,
    AdminEventsModule,
    RedeliveriesModule,
    StatsModule,
    AdminBotWebhooksModule,
    QueueModule,
    EndpointsModule,
    DataProtectionModule,
    PortalModule,
    ConsoleModule,
    PortalPageModule,
  ],
  // A span per Open API and admin call when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT).
  providers: [{ provide: APP_INTERCEPTOR, useClass: RequestSpanInterceptor }],
})
export class ConfigApiModule {}
