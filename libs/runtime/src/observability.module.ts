import { Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { ENVIRONMENT, RuntimeConfigModule } from './config/config.module';
import type { Environment } from './config/environment';
import { HealthController } from './health/health.controller';
import { ReadinessService } from './health/readiness.service';
import { loggerParams } from './logging/logging';
import { MetricsController } from './metrics/metrics.controller';
import { RedisModule } from './redis/redis.module';
import { TracingShutdown } from './tracing/tracing-shutdown';

/** What every process shares: validated config, logging, Redis, `/health/*` and `/metrics` (global: the worker waits on readiness). */
@Global()
@Module({
  imports: [
    RuntimeConfigModule,
    RedisModule,
    LoggerModule.forRootAsync({ inject: [ENVIRONMENT], useFactory: (environment: Environment) => loggerParams(environment) }),
  ],
  controllers: [HealthController, MetricsController],
  providers: [ReadinessService, TracingShutdown],
  exports: [ReadinessService],
})
export class ObservabilityModule {}
