import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { ENVIRONMENT, RuntimeConfigModule } from './config/config.module';
import type { Environment } from './config/environment';
import { HealthController } from './health/health.controller';
import { loggerParams } from './logging/logging';
import { MetricsController } from './metrics/metrics.controller';
import { RedisModule } from './redis/redis.module';

/** What every process shares: validated config, logging, Redis, `/health/*` and `/metrics`. */
@Module({
  imports: [
    RuntimeConfigModule,
    RedisModule,
    LoggerModule.forRootAsync({ inject: [ENVIRONMENT], useFactory: (environment: Environment) => loggerParams(environment) }),
  ],
  controllers: [HealthController, MetricsController],
})
export class ObservabilityModule {}
