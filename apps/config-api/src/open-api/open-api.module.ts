import { Module } from '@nestjs/common';
import { DeliveryOptionsModule } from '../delivery-options/delivery-options.module';
import { JsonBodyGuard } from './json-body.guard';
import { OpenApiAuthGuard } from './open-api-auth.guard';
import { OpenApiController } from './open-api.controller';
import { OpenApiRateLimiter } from './open-api-rate-limiter';
import { OpenApiService } from './open-api.service';
import { SetDeliveryOptionsController } from './set-delivery-options.controller';

/** The signed Open API: set_url, set_push_content_type, set_permissions, push_settings (CONTRACT §2), set_delivery_options (§9). */
@Module({
  imports: [DeliveryOptionsModule],
  controllers: [OpenApiController, SetDeliveryOptionsController],
  providers: [OpenApiService, OpenApiAuthGuard, OpenApiRateLimiter, JsonBodyGuard],
})
export class OpenApiModule {}
