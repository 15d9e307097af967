import { counter } from '@app/runtime';

export type IngestOutcome = 'accepted' | 'duplicate' | 'rejected';

/** One increment per event (a batch counts each item); requests refused before parsing (401, 413) are not events. */
export const ingestedEvents = counter('ingest_events_total', 'Events received by ingest, by outcome (accepted, duplicate, rejected)', ['outcome']);

