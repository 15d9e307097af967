import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { DeliveryQueueModule } from '@app/runtime';
import { DestinationsModule } from '../destinations/destinations.module';
import { DestinationsOpenApiController } from './destinations-open-api.controller';
import { PortalAccessModule } from '../portal-access/portal-access.module';
import { EventFeedService } from './event-feed.service';
import { SelfServiceController } from './self-service.controller';
import { TestEventService } from './test-event.service';
import { JsonBodyGuard } from './json-body.guard';
import { OpenApiAuthFailures } from './open-api-auth-failures';
import { OpenApiAuthGuard } from './open-api-auth.guard';
import { countOpenApiCalls } from './open-api-metrics.middleware';
import { OpenApiController } from './open-api.controller';
import { OpenApiRateLimiter } from './open-api-rate-limiter';
import { OpenApiService } from './open-api.service';
import { SetDeliveryOptionsController } from './set-delivery-options.controller';

/** The signed Open API: set_url, set_push_content_type, set_permissions, push_settings (CONTRACT §2),
 * set_delivery_options (§9), the self-service feed, portal links and test events (§10), and destinations (§11). */
@Module({
  imports: [DeliveryQueueModule.register('producer'), PortalAccessModule, DestinationsModule],
  controllers: [OpenApiController, SetDeliveryOptionsController, SelfServiceController, DestinationsOpenApiController],
  providers: [OpenApiService, OpenApiAuthGuard, OpenApiRateLimiter, OpenApiAuthFailures, JsonBodyGuard, EventFeedService, TestEventService],
  exports: [TestEventService, OpenApiService],
})
export class OpenApiModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(countOpenApiCalls).forRoutes({ path: 'open_api_v1/*path', method: RequestMethod.ALL });
  }
}
