import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ENVIRONMENT, type Environment } from '@app/runtime';
import { buildDataSourceOptions, ENTITIES } from './data-source';
import { GenericPlanPool } from './generic-plan-pool';
import { Sql } from './statements/sql.service';

/**
 * The app's DataSource (migrations are run by `npm run migrate`, never at start-up), and the
 * connections for statements kept under one generic plan (GenericPlanPool, opened on first use), and
 * the runner of the statement modules (Sql).
 */
@Module({})
export class PersistenceModule {
  static forRoot(applicationName: string): DynamicModule {
    return {
      module: PersistenceModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [ENVIRONMENT],
          useFactory: (environment: Environment) => ({
            ...buildDataSourceOptions(environment.database.url, {
              poolSize: environment.database.poolSize,
              connectTimeoutMs: environment.database.connectTimeoutMs,
              applicationName,
            }),
            retryAttempts: 3,
            retryDelay: 1000,
          }),
        }),
        TypeOrmModule.forFeature(ENTITIES),
      ],
      providers: [GenericPlanPool, Sql],
      exports: [TypeOrmModule, GenericPlanPool, Sql],
    };
  }
}
