import { createHistogram } from 'node:perf_hooks';
import { Client } from 'pg';
import type { BenchContext } from '../support/bench-context';

/** One event the load generator sent and the receiver saw arrive, both in ms since the epoch. */
export interface Arrival {
  id: string;
  sentAt: number;
  arrivedAt: number;
}

/** Where an event's time went between POST sent and callback arrived, from the rows the service wrote. */
export const STAGES = ['sent → arrived', 'sent → row written', 'row written → call started', 'call started → arrived', 'arrived → answer recorded'] as const;
export type Stage = (typeof STAGES)[number];
export type StageTimings = Record<Stage, { p50: number; p99: number }>;

interface Row {
  event_id: string;
  account_id: number;
  written: number;
  started: number;
  recorded: number | null;
}

/**
 * Splits each event's send → arrival at the service's own timestamps: `events.created_at` (the insert's
 * transaction start, so a little before the commit), the first attempt's `started_at`, and
 * the primary delivery's `delivered_at` (when the worker's batched write recorded the answer). One clock: every process runs
 * on this machine. The first attempt is the event's lowest attempt number, read from its own index entries
 * (event_seq, attempt): ordered by `started_at`, after the memory soak the planner walked the whole
 * `started_at` index once per event, and the noisy-neighbour scenario's query ran for over ten minutes.
 */
export async function stageTimings(bench: BenchContext, arrivals: Arrival[], ofAccount: (accountId: number) => boolean = () => true): Promise<StageTimings> {
  const db = new Client({ connectionString: bench.environment.databaseUrl });
  await db.connect();
  let rows: Row[];
  try {
    const result = await db.query<Row>(
      `SELECT e.event_id, e.account_id, extract(epoch FROM e.created_at) * 1000 AS written,
              extract(epoch FROM a.started_at) * 1000 AS started, extract(epoch FROM d.delivered_at) * 1000 AS recorded
         FROM events e
         JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'
         JOIN LATERAL (SELECT started_at FROM delivery_attempts WHERE event_seq = e.seq AND destination_id = 'primary' ORDER BY attempt LIMIT 1) a ON true
        WHERE e.event_id = ANY($1::varchar[])`,
      [arrivals.map((arrival) => arrival.id)],
    );
    rows = result.rows;
  } finally {
    await db.end();
  }
  const byId = new Map(rows.map((row) => [row.event_id, row]));
  const histograms = new Map(STAGES.map((stage) => [stage, createHistogram()]));
  // Microsecond buckets, at least 1 (a histogram takes no zero); clocks of separate processes can differ by a hair.
  const record = (stage: Stage, ms: number): void => histograms.get(stage)?.record(Math.max(1, Math.round(ms * 1000)));
  for (const arrival of arrivals) {
    const row = byId.get(arrival.id);
    if (!row || !ofAccount(row.account_id)) continue;
    record('sent → arrived', arrival.arrivedAt - arrival.sentAt);
    record('sent → row written', Number(row.written) - arrival.sentAt);
    record('row written → call started', Number(row.started) - Number(row.written));
    record('call started → arrived', arrival.arrivedAt - Number(row.started));
    if (row.recorded !== null) record('arrived → answer recorded', Number(row.recorded) - arrival.arrivedAt);
  }
  const timings = {} as StageTimings;
  for (const stage of STAGES) {
    const histogram = histograms.get(stage);
    const count = histogram?.count ?? 0;
    timings[stage] = { p50: count ? (histogram?.percentile(50) ?? 0) / 1000 : 0, p99: count ? (histogram?.percentile(99) ?? 0) / 1000 : 0 };
  }
  return timings;
}

/** `stage p50/p99 quiet → beside` per stage, for a scenario's notes. */
export function stageComparison(quiet: StageTimings, beside: StageTimings): string {
  const ms = (value: number): string => value.toFixed(1);
  return STAGES.map((stage) => `${stage} p50 ${ms(quiet[stage].p50)} → ${ms(beside[stage].p50)} ms, p99 ${ms(quiet[stage].p99)} → ${ms(beside[stage].p99)} ms`).join('; ');
}
