import { Injectable } from '@nestjs/common';
import { books, rollups, Sql, timeRange } from '@app/persistence';
import { checkingQuery, invalidQuery } from '@app/runtime';
import type { SeriesBucket, StatsSeries } from '@app/payloads';
import type { StatsSeriesQueryDto } from './stats.dto';
import { requireAccount } from '../require-account';
import { type BookGranularity, HOUR_MS } from './tally-windows';

/** Bound on one answer, so a mistyped range cannot make the server build millions of empty points. */
export const MAX_SERIES_POINTS = 1500;

interface BucketSpec {
  stepMs: number;
  /** Default span before `until` when `since` is not given. */
  defaultSpanMs: number;
  /** The rollup rows a point is summed from (one row per point for 1m and 1h, 24 for 1d). */
  granularity: BookGranularity;
}

const BUCKETS: Record<SeriesBucket, BucketSpec> = {
  '1m': { stepMs: 60_000, defaultSpanMs: HOUR_MS, granularity: 'minute' },
  '1h': { stepMs: HOUR_MS, defaultSpanMs: 24 * HOUR_MS, granularity: 'hour' },
  '1d': { stepMs: 24 * HOUR_MS, defaultSpanMs: 7 * 24 * HOUR_MS, granularity: 'hour' },
};

interface Accumulator {
  delivered: number;
  failed: number;
  attempts: number;
  failedAttempts: number;
  latency: number[];
}

function emptyAccumulator(): Accumulator {
  return { delivered: 0, failed: 0, attempts: 0, failedAttempts: 0, latency: new Array<number>(rollups.LATENCY_BUCKETS).fill(0) };
}

/**
 * `GET /admin/v1/stats/series`, read from the delivery rollups and the book entries not folded into them
 * yet (books.ROLLED_UP_BUCKETS; never from events or attempts): a point per bucket (UTC-aligned) from the
 * bucket holding `since` up to `until`, empty ones included.
 */
@Injectable()
export class StatsSeriesService {
  constructor(private readonly sql: Sql) {}

  async series(query: StatsSeriesQueryDto): Promise<StatsSeries> {
    const bucket = query.bucket ?? '1m';
    const spec = BUCKETS[bucket];
    const range = checkingQuery(() => timeRange(query.since, query.until));
    const until = range.until ?? new Date();
    const since = range.since ?? new Date(until.getTime() - spec.defaultSpanMs);
    if (until.getTime() <= since.getTime()) throw invalidQuery([{ path: 'since', problem: 'since must be earlier than until' }]);
    const first = Math.floor(since.getTime() / spec.stepMs) * spec.stepMs;
    const count = Math.ceil((until.getTime() - first) / spec.stepMs);
    if (count > MAX_SERIES_POINTS) {
      throw invalidQuery([
        { path: 'since', problem: `the range holds ${count} ${bucket} buckets; at most ${MAX_SERIES_POINTS} per answer (move since closer to until or use a larger bucket)` },
      ]);
    }
    if (query.account_id !== undefined) await requireAccount(this.sql, query.account_id);

    const rows = await this.sql.rows(books.ROLLED_UP_BUCKETS, {
      granularity: spec.granularity,
      accountId: query.account_id ?? rollups.ALL_ACCOUNTS,
      since: new Date(first),
      until,
    });
    const points = Array.from({ length: count }, emptyAccumulator);
    for (const row of rows) {
      const index = Math.floor((row.bucket_start.getTime() - first) / spec.stepMs);
      const point = points[index];
      if (!point) continue;
      point.delivered += row.delivered;
      point.failed += row.failed;
      point.attempts += row.attempts;
      point.failedAttempts += row.failed_attempts;
      row.latency_counts.forEach((value, at) => (point.latency[at] += value));
    }
    return {
      bucket,
      points: points.map((point, index) => ({
        t: new Date(first + index * spec.stepMs).toISOString(),
        delivered: point.delivered,
        failed: point.failed,
        attempts: point.attempts,
        failed_attempts: point.failedAttempts,
        ...rollups.histogramPercentiles(point.latency),
      })),
    };
  }
}
