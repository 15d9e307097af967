import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { checkingQuery } from '@app/runtime';
import type { EventStats } from '@app/payloads';
import {
  COUNTED_SPAN_SQL,
  EVENT_STATUSES,
  type EventStatus,
  firstWhole,
  histogramPercentiles,
  HOUR_MS,
  mergeTallies,
  MINUTE_MS,
  type StatusTally,
  TALLIED_BUCKETS_SQL,
  type TallyGranularity,
} from '@app/persistence';
import type { StatsQueryDto } from './stats.dto';
import { requireAccount } from '../require-account';
import { Conditions } from '../sql-conditions';
import { timeRange } from '../timestamp';

type LatencySummary = EventStats['delivery_latency_ms'];

function zeroCounts(): Record<EventStatus, number> {
  return Object.fromEntries(EVENT_STATUSES.map((status) => [status, 0])) as Record<EventStatus, number>;
}

/**
 * Two ways to the same answer. For one account, exactly from its rows (its index bounds the scan to its
 * events), with continuous percentiles. For every account, from the event tallies: exact counts, kept by
 * triggers on every change, summed over whole hours and the whole minutes before the window's first
 * hour, plus the rows of the part before its first whole minute; percentiles from the tallies' latency
 * histogram, interpolated inside a bucket (the buckets of the stats series, so the two agree).
 */
@Injectable()
export class EventStatsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async stats(query: StatsQueryDto): Promise<EventStats> {
    const { since } = checkingQuery(() => timeRange(query.since, undefined));
    const base = { account_id: query.account_id ?? null, since: since ? since.toISOString() : null };
    if (query.account_id === undefined) return { ...base, ...(await this.allAccounts(since)) };
    await requireAccount(this.dataSource, query.account_id);
    return { ...base, ...(await this.oneAccount(query.account_id, since)) };
  }

  private async allAccounts(since: Date | null): Promise<Pick<EventStats, 'total' | 'counts' | 'delivery_latency_ms'>> {
    const tallied = (granularity: TallyGranularity, from: Date | null, to: Date | null): Promise<StatusTally[]> =>
      this.dataSource.query<StatusTally[]>(TALLIED_BUCKETS_SQL, [granularity, from ?? '-infinity', to]);
    const parts: Promise<StatusTally[]>[] = [];
    if (!since) {
      parts.push(tallied('hour', null, null));
    } else {
      // [since, first whole minute) from rows, then whole minutes up to the first whole hour, then hours.
      const minute = firstWhole(since, MINUTE_MS);
      const hour = firstWhole(since, HOUR_MS);
      if (since < minute) parts.push(this.dataSource.query<StatusTally[]>(COUNTED_SPAN_SQL, [since, minute]));
      if (minute < hour) parts.push(tallied('minute', minute, hour));
      parts.push(tallied('hour', hour, null));
    }
    const counts = zeroCounts();
    let total = 0;
    let latencyCounts: number[] = [];
    for (const [status, tally] of mergeTallies(...(await Promise.all(parts)))) {
      // A status no longer in the value set (none today) still counts towards the total.
      if (status in counts) counts[status as EventStatus] = tally.events;
      total += tally.events;
      if (status === 'delivered') latencyCounts = tally.latencyCounts;
    }
    const delivered = latencyCounts.reduce((sum, count) => sum + count, 0);
    return {
      total,
      counts,
      delivery_latency_ms: { count: delivered, ...histogramPercentiles(latencyCounts) },
    };
  }

  private async oneAccount(accountId: number, since: Date | null): Promise<Pick<EventStats, 'total' | 'counts' | 'delivery_latency_ms'>> {
    const conditions = new Conditions();
    conditions.add((p) => `account_id = ${p}`, accountId);
    if (since) conditions.add((p) => `created_at >= ${p}`, since);
    const where = conditions.where();
    // percentile_cont interpolates between neighbours, like Prometheus-style summaries operators know.
    const [countRows, [latency]] = await Promise.all([
      this.dataSource.query<{ status: EventStatus; count: number }[]>(
        `SELECT status, count(*)::int AS count FROM events ${where} GROUP BY status`,
        conditions.parameters,
      ),
      this.dataSource.query<{ count: number; p50: number | null; p95: number | null; p99: number | null }[]>(
        `SELECT count(*)::int AS count,
                percentile_cont(0.50) WITHIN GROUP (ORDER BY latency_ms) AS p50,
                percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms) AS p99
           FROM (SELECT (EXTRACT(EPOCH FROM delivered_at - created_at) * 1000)::float8 AS latency_ms
                   FROM events ${where} AND status = 'delivered' AND delivered_at IS NOT NULL) AS delivered`,
        conditions.parameters,
      ),
    ]);
    const counts = zeroCounts();
    for (const row of countRows) counts[row.status] = row.count;
    const round = (value: number | null): number | null => (value === null ? null : Math.round(value));
    const summary: LatencySummary = { count: latency.count, p50: round(latency.p50), p95: round(latency.p95), p99: round(latency.p99) };
    return { total: countRows.reduce((sum, row) => sum + row.count, 0), counts, delivery_latency_ms: summary };
  }
}
