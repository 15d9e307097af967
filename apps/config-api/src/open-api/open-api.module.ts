import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { JsonBodyGuard } from './json-body.guard';
import { OpenApiAuthFailures } from './open-api-auth-failures';
import { OpenApiAuthGuard } from './open-api-auth.guard';
import { countOpenApiCalls } from './open-api-metrics.middleware';
import { OpenApiController } from './open-api.controller';
import { OpenApiRateLimiter } from './open-api-rate-limiter';
import { OpenApiService } from './open-api.service';

/** The signed Open API: set_url, set_push_content_type, set_permissions, push_settings (CONTRACT §2). */
@Module({
  controllers: [OpenApiController],
  providers: [OpenApiService, OpenApiAuthGuard, OpenApiRateLimiter, OpenApiAuthFailures, JsonBodyGuard],
})
export class OpenApiModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(countOpenApiCalls).forRoutes({ path: 'open_api_v1/*path', method: RequestMethod.ALL });
  }
}
