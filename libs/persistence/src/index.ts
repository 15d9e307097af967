// Entities (TypeORM repositories of the rows config-api and ingest edit directly).
export { Account } from './entities/account.entity';
export { CallbackSettings, type PermissionMap } from './entities/callback-settings.entity';
export { DESTINATION_FORMATS, DESTINATION_TYPES, type DestinationAuthType, type DestinationFormat, type DestinationType } from './entities/destination.entity';
export * from './entities/bot-webhook.entity';
export * from './entities/bot-call.entity';
// Connection, migrations, plans.
export * from './data-source';
export * from './migrate';
export * from './persistence.module';
export { GenericPlanPool } from './generic-plan-pool';
export { defineStatement, type Statement } from './statements/statement';
export { Sql } from './statements/sql.service';
// The delivery model (docs/delivery-model.md).
export * from './deliveries/delivery-lifecycle';
export * from './deliveries/store-events.statement';
export * from './deliveries/delivery-steps.statements';
export * from './deliveries/open-deliveries.statements';
export * from './destinations/destination.statements';
// Books, partitions, secrets.
export * from './stats/books.statements';
export { ALL_ACCOUNTS, histogramPercentiles, LATENCY_BUCKETS, LATENCY_BOUNDS_MS } from './stats/delivery-rollup';
export * from './partitions/partition-layout';
export * from './partitions/partition-catalog';
export * from './partitions/partition-maintenance';
export * from './partitions/time-window';
export * from './partitions/audit-partitions';
export * from './audit/audit.statements';
export * from './secrets/reseal-secrets';
export * from './deliveries/restart-deliveries.statement';
export * from './deliveries/operational-events';
