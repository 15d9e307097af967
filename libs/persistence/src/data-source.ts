import { DataSource, type DataSourceOptions } from 'typeorm';
import { Account } from './entities/account.entity';
import { BotCall } from './entities/bot-call.entity';
import { BotWebhook } from './entities/bot-webhook.entity';
import { CallbackSettings } from './entities/callback-settings.entity';
import { Destination } from './entities/destination.entity';
import { InitialSchema1763700000000 } from './migrations/1763700000000-initial-schema';
import { EndpointDisabling1763761200000 } from './migrations/1763761200000-endpoint-disabling';
import { AdminRollupsAndSearch1764000000000 } from './migrations/1764000000000-admin-rollups-and-search';
import { TimePartitionedEvents1764200000000 } from './migrations/1764200000000-time-partitioned-events';
import { RollupRetentionIndex1764300000000 } from './migrations/1764300000000-rollup-retention-index';
import { EventStatusTallies1764400000000 } from './migrations/1764400000000-event-status-tallies';
import { EventKeysPerStatement1764500000000 } from './migrations/1764500000000-event-keys-per-statement';
import { DeliveryOptions1764550000000 } from './migrations/1764550000000-delivery-options';
import { EventSubjects1764600000000 } from './migrations/1764600000000-event-subjects';
import { SealedSecrets1764700000000 } from './migrations/1764700000000-sealed-secrets';
import { EventFeed1764800000000 } from './migrations/1764800000000-event-feed';
import { PortalSessions1764810000000 } from './migrations/1764810000000-portal-sessions';
import { DataProtection1764900000000 } from './migrations/1764900000000-data-protection';
import { LeanEventIndexes1765000000000 } from './migrations/1765000000000-lean-event-indexes';
import { Destinations1765100000000 } from './migrations/1765100000000-destinations';
import { BulkRedeliveryDestinations1765200000000 } from './migrations/1765200000000-bulk-redelivery-destinations';
import { DestinationDeliveryStatuses1765300000000 } from './migrations/1765300000000-destination-delivery-statuses';
import { StatementsKeepEventBooks1765400000000 } from './migrations/1765400000000-statements-keep-event-books';
import { OneDeliveryModel1765500000000 } from './migrations/1765500000000-one-delivery-model';
import { PortalGeneration1765600000000 } from './migrations/1765600000000-portal-generation';
import { DeletedDestinationCredentials1765700000000 } from './migrations/1765700000000-deleted-destination-credentials';
import { AuditLog1765900000000 } from './migrations/1765900000000-audit-log';
import { MessageScalarsSearch1766000000000 } from './migrations/1766000000000-message-scalars-search';
import { EventKeysWithoutSeqIndex1766100000000 } from './migrations/1766100000000-event-keys-without-seq-index';
import { EventsCreatedAtOffDailyPartitions1766200000000 } from './migrations/1766200000000-events-created-at-off-daily-partitions';
import { EventsWithoutAccountForeignKey1766300000000 } from './migrations/1766300000000-events-without-account-foreign-key';
import { AcceptedEventsCountedFromRows1766400000000 } from './migrations/1766400000000-accepted-events-counted-from-rows';

export const ENTITIES = [Account, CallbackSettings, BotWebhook, BotCall, Destination];
export const MIGRATIONS = [
  InitialSchema1763700000000,
  EndpointDisabling1763761200000,
  AdminRollupsAndSearch1764000000000,
  TimePartitionedEvents1764200000000,
  RollupRetentionIndex1764300000000,
  EventStatusTallies1764400000000,
  EventKeysPerStatement1764500000000,
  DeliveryOptions1764550000000,
  EventSubjects1764600000000,
  SealedSecrets1764700000000,
  EventFeed1764800000000,
  PortalSessions1764810000000,
  DataProtection1764900000000,
  LeanEventIndexes1765000000000,
  Destinations1765100000000,
  BulkRedeliveryDestinations1765200000000,
  DestinationDeliveryStatuses1765300000000,
  StatementsKeepEventBooks1765400000000,
  OneDeliveryModel1765500000000,
  PortalGeneration1765600000000,
  DeletedDestinationCredentials1765700000000,
  AuditLog1765900000000,
  MessageScalarsSearch1766000000000,
  EventKeysWithoutSeqIndex1766100000000,
  EventsCreatedAtOffDailyPartitions1766200000000,
  EventsWithoutAccountForeignKey1766300000000,
  AcceptedEventsCountedFromRows1766400000000,
];

export interface DataSourceTuning {
  /** Connections in this process's pool. */
  poolSize?: number;
  applicationName?: string;
  /**
   * Bound on one query, enforced by the server and by the client (which also catches a server that
   * hangs instead of refusing); 0 for none, as migrations may legitimately run long. Default 15 s.
   */
  queryTimeoutMs?: number;
  /**
   * Bound on getting a connection: opening one (TCP, start-up, authentication) or, with every
   * connection busy, waiting for one to come free. Default 10 s.
   */
  connectTimeoutMs?: number;
}

/** The one definition of the connection, used by every app and by the migrate CLI. */
export function buildDataSourceOptions(databaseUrl: string, tuning: DataSourceTuning = {}): DataSourceOptions {
  const queryTimeout = tuning.queryTimeoutMs ?? 15_000;
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    synchronize: false,
    migrationsRun: false,
    migrationsTableName: 'schema_migrations',
    applicationName: tuning.applicationName ?? 'event-callbacks',
    extra: {
      max: tuning.poolSize ?? 10,
      // An unreachable database still fails within this bound (ingest answers 503 instead of hanging;
      // a refused connection fails at once anyway), while a busy one that takes seconds to accept a
      // connection or free a pooled one is waited for: failing there turns a slow moment into errors
      // and retries, which only add load. 3 s was too tight for a loaded machine.
      connectionTimeoutMillis: tuning.connectTimeoutMs ?? 10_000,
      ...(queryTimeout > 0 ? { statement_timeout: queryTimeout, query_timeout: queryTimeout + 1000 } : {}),
    },
  };
}

export function createDataSource(databaseUrl: string, tuning?: DataSourceTuning): DataSource {
  return new DataSource(buildDataSourceOptions(databaseUrl, tuning));
}
