/*
 * What the apps use of persistence (docs/delivery-model.md). Statements are grouped by the tables they
 * work on, one namespace each (`openDeliveries.CLAIM_DUE_OPEN_DELIVERIES`); the delivery vocabulary,
 * entities and connection pieces are flat. Tests and bench reach every statement and helper through
 * `@app/persistence/testing`.
 */
// Entities (TypeORM repositories of the rows config-api and ingest edit directly).
export { Account } from './entities/account.entity';
export { CallbackSettings } from './entities/callback-settings.entity';
export { BOT_WEBHOOK_TYPES, BotWebhook, type BotWebhookType } from './entities/bot-webhook.entity';
export { BOT_CALL_OUTCOMES, BotCall, type BotCallOutcome } from './entities/bot-call.entity';
// Connection, migrations, statements.
export { createDataSource } from './data-source';
export { MIGRATION_LOCK_KEY, runMigrations } from './migrate';
export { PersistenceModule } from './persistence.module';
export { GenericPlanPool } from './generic-plan-pool';
export { defineStatement } from './statements/statement';
export { Sql } from './statements/sql.service';
export { resealSecrets } from './secrets/reseal-secrets';
// The delivery model's words.
export {
  DESTINATION_DELETED_ERROR,
  EVENT_STATUSES,
  type EventStatus,
  FINAL_EVENT_STATUSES,
  type HoldReason,
  isAtStep,
  isFinalStatus,
  PENDING_STATUS_LIST,
  PRIMARY_DESTINATION_ID,
} from './deliveries/delivery-lifecycle';
export type { DeliveryStepRow } from './deliveries/open-deliveries.statements';
export { RESTART_DELIVERIES } from './deliveries/restart-deliveries.statement';
export { OperationalEvents } from './deliveries/operational-events';
// Query builders: the event filter of the admin API and portal, and the deliveries a bulk redelivery takes (config-api counts them, the worker's task walks them).
export { Conditions } from './queries/sql-conditions';
export { addEventFilter, type FilterColumns, MAX_SEARCH_RANGE_MS } from './queries/event-filter';
export { boundedTimestamp, EARLIEST_QUERY_TIME, LATEST_QUERY_TIME, parseTimestamp, timeRange } from './queries/time-range';
export { countMatching, type DeliveryCursor, nextMatching, REDELIVERY_CHUNK } from './queries/matching-deliveries';
// Statements by the tables they work on.
export * as storeEvents from './deliveries/store-events.statement';
export * as deliverySteps from './deliveries/delivery-steps.statements';
export * as openDeliveries from './deliveries/open-deliveries.statements';
export * as destinationStatements from './destinations/destination.statements';
export * as books from './stats/books.statements';
export * as rollups from './stats/delivery-rollup';
export * as partitions from './partitions';
export * as audit from './audit/audit.statements';
