import { Module } from '@nestjs/common';
import { DeliveryQueueModule } from '@app/runtime';
import { PortalAccessModule } from '../portal/portal-access.module';
import { EventFeedService } from './event-feed.service';
import { SelfServiceController } from './self-service.controller';
import { TestEventService } from './test-event.service';
import { JsonBodyGuard } from './json-body.guard';
import { OpenApiAuthGuard } from './open-api-auth.guard';
import { OpenApiController } from './open-api.controller';
import { OpenApiRateLimiter } from './open-api-rate-limiter';
import { OpenApiService } from './open-api.service';

/** The signed Open API: set_url, set_push_content_type, set_permissions, push_settings (CONTRACT §2),
 * and the self-service feed and test events (§10). */
@Module({
  imports: [DeliveryQueueModule.register('producer'), PortalAccessModule],
  controllers: [OpenApiController, SelfServiceController],
  providers: [OpenApiService, OpenApiAuthGuard, OpenApiRateLimiter, JsonBodyGuard, EventFeedService, TestEventService],
  exports: [TestEventService, OpenApiService],
})
export class OpenApiModule {}
