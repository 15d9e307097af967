/*
 * Every statement and helper of persistence by its own name, for tests and bench (`@app/persistence/testing`):
 * they seed and read rows with the statements the apps run, never with rewritten SQL text. Apps import
 * `@app/persistence`.
 */
export * from './entities/account.entity';
export * from './entities/callback-settings.entity';
export * from './entities/destination.entity';
export * from './entities/bot-webhook.entity';
export * from './entities/bot-call.entity';
export * from './data-source';
export * from './migrate';
export * from './persistence.module';
export * from './generic-plan-pool';
export * from './statements/statement';
export * from './statements/sql.service';
export * from './secrets/reseal-secrets';
export * from './deliveries/delivery-lifecycle';
export * from './deliveries/store-events.statement';
export * from './deliveries/delivery-steps.statements';
export * from './deliveries/open-deliveries.statements';
export * from './deliveries/restart-deliveries.statement';
export * from './deliveries/operational-events';
export * from './destinations/destination.statements';
export * from './stats/books.statements';
export * from './stats/delivery-rollup';
export * from './partitions';
export * from './audit/audit.statements';
export * from './queries/sql-conditions';
export * from './queries/event-filter';
export * from './queries/time-range';
export * from './queries/matching-deliveries';
