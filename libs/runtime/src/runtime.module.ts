import { Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { ENVIRONMENT, RuntimeConfigModule } from './config/config.module';
import type { Environment } from './config/environment';
import { HealthController } from './health/health.controller';
import { ReadinessService } from './health/readiness.service';
import { loggerParams } from './logging/logging';
import { MetricsController } from './metrics/metrics.controller';
import { MetricsServer } from './metrics/metrics-server';
import { RedisModule } from './redis/redis.module';
import { TracingShutdown } from './tracing/tracing-shutdown';

/**
 * What every process of the service runs on: its settings (`ENVIRONMENT`, validated once), the shared
 * Redis connection (`REDIS`), logging, `/health/*` with the ReadinessService, and `/metrics` (on its own
 * port with METRICS_PORT). Global:
 * the worker waits on readiness, and every module reads the settings.
 */
@Global()
@Module({
  imports: [
    RuntimeConfigModule,
    RedisModule,
    LoggerModule.forRootAsync({ inject: [ENVIRONMENT], useFactory: (environment: Environment) => loggerParams(environment) }),
  ],
  controllers: [HealthController, MetricsController],
  providers: [ReadinessService, TracingShutdown, MetricsServer],
  exports: [ReadinessService, MetricsServer],
})
export class RuntimeModule {}
