import { Injectable } from '@nestjs/common';
import { checkingQuery } from '@app/runtime';
import type { EventStats } from '@app/payloads';
import { books, EVENT_STATUSES, type EventStatus, rollups, Sql, timeRange } from '@app/persistence';
import type { StatsQueryDto } from './stats.dto';
import { ACCOUNT_LATENCY, ACCOUNT_STATUS_COUNTS } from './stats.statements';
import { type BookGranularity, firstWhole, HOUR_MS, mergeTallies, MINUTE_MS } from './tally-windows';
import { requireAccount } from '../require-account';

type LatencySummary = EventStats['delivery_latency_ms'];

function zeroCounts(): Record<EventStatus, number> {
  return Object.fromEntries(EVENT_STATUSES.map((status) => [status, 0])) as Record<EventStatus, number>;
}

/**
 * Two ways to the same answer, an event's status being its primary delivery's. For one account, exactly
 * from its rows (its events by (account_id, seq), each with its primary delivery by key), with continuous
 * percentiles. For every account, from the event tallies: exact counts (the folded books plus the book
 * entries not folded yet, books.TALLIED_BUCKETS) summed over whole hours and the whole minutes before the
 * window's first hour, plus the rows of the part before its first whole minute (books.COUNTED_SPAN);
 * percentiles from the tallies' latency histogram, interpolated inside a bucket (the buckets of the
 * stats series, so the two agree).
 */
@Injectable()
export class EventStatsService {
  constructor(private readonly sql: Sql) {}

  async stats(query: StatsQueryDto): Promise<EventStats> {
    const { since } = checkingQuery(() => timeRange(query.since, undefined));
    const base = { account_id: query.account_id ?? null, since: since ? since.toISOString() : null };
    if (query.account_id === undefined) return { ...base, ...(await this.allAccounts(since)) };
    await requireAccount(this.sql, query.account_id);
    return { ...base, ...(await this.oneAccount(query.account_id, since)) };
  }

  private async allAccounts(since: Date | null): Promise<Pick<EventStats, 'total' | 'counts' | 'delivery_latency_ms'>> {
    const tallied = (granularity: BookGranularity, from: Date | null, to: Date | null): Promise<books.StatusTally[]> =>
      this.sql.rows(books.TALLIED_BUCKETS, { granularity, since: from ?? '-infinity', until: to });
    const parts: Promise<books.StatusTally[]>[] = [];
    if (!since) {
      parts.push(tallied('hour', null, null));
    } else {
      // [since, first whole minute) from rows, then whole minutes up to the first whole hour, then hours.
      const minute = firstWhole(since, MINUTE_MS);
      const hour = firstWhole(since, HOUR_MS);
      if (since < minute) parts.push(this.sql.rows(books.COUNTED_SPAN, { since, until: minute }));
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
      delivery_latency_ms: { count: delivered, ...rollups.histogramPercentiles(latencyCounts) },
    };
  }

  private async oneAccount(accountId: number, since: Date | null): Promise<Pick<EventStats, 'total' | 'counts' | 'delivery_latency_ms'>> {
    const [countRows, [latency]] = await Promise.all([
      this.sql.rows(ACCOUNT_STATUS_COUNTS, { accountId, since }),
      this.sql.rows(ACCOUNT_LATENCY, { accountId, since }),
    ]);
    const counts = zeroCounts();
    for (const row of countRows) counts[row.status] = row.count;
    const round = (value: number | null): number | null => (value === null ? null : Math.round(value));
    const summary: LatencySummary = { count: latency.count, p50: round(latency.p50), p95: round(latency.p95), p99: round(latency.p99) };
    return { total: countRows.reduce((sum, row) => sum + row.count, 0), counts, delivery_latency_ms: summary };
  }
}
