// Daily partitions of the event tables and monthly ones of the audit log: layout, catalog, upkeep, reads by time.
export * from './partition-layout';
export * from './partition-catalog';
export * from './partition-maintenance';
export * from './time-window';
export * from './audit-partitions';
