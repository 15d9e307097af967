import type { SeriesBucket, SeriesPoint, StatsSeries } from '@app/payloads/admin-api.types';
import { ErrorMessage, Section } from '../components/bits';
import { useLoader } from '../lib/use-loader';
import { type ChartLine, SeriesChart } from './series-chart';

export const RANGES: Record<string, { label: string; hours: number; bucket: SeriesBucket }> = {
  hour: { label: 'Last hour', hours: 1, bucket: '1m' },
  day: { label: 'Last day', hours: 24, bucket: '1h' },
  week: { label: 'Last week', hours: 24 * 7, bucket: '1h' },
};

/** The `range` query value, or the hour when it is missing or unknown. */
export function rangeOf(query: URLSearchParams): string {
  const requested = query.get('range') ?? 'hour';
  return requested in RANGES ? requested : 'hour';
}

const DELIVERY_LINES: ChartLine<SeriesPoint>[] = [
  { label: 'delivered', color: '#1a7f37', value: (point) => point.delivered },
  { label: 'failed', color: '#cf222e', value: (point) => point.failed },
  { label: 'failed attempts', color: '#bc4c00', value: (point) => point.failed_attempts, dash: [4, 3] },
];

const LATENCY_LINES: ChartLine<SeriesPoint>[] = [
  { label: 'p50', color: '#0969da', value: (point) => point.p50 },
  { label: 'p95', color: '#8250df', value: (point) => point.p95 },
  { label: 'p99', color: '#bf3989', value: (point) => point.p99 },
];

export type SeriesLoader = (query: { since: string; until: string; bucket: SeriesBucket }) => Promise<StatsSeries>;

/**
 * Deliveries, failures and latency p50/p95/p99 for the last hour, day or week, with the range buttons.
 * The console's overview reads every account's series, the portal its own account's.
 */
export function RangeCharts({ range, load, onRange }: { range: string; load: SeriesLoader; onRange: (range: string) => void }) {
  const { hours, bucket } = RANGES[range];
  const answer = useLoader(() => {
    const until = new Date();
    const since = new Date(until.getTime() - hours * 3_600_000);
    return load({ since: since.toISOString(), until: until.toISOString(), bucket });
  }, [range]);
  return (
    <Section title="Deliveries and latency">
      <nav class="tabs" aria-label="Time range">
        {Object.entries(RANGES).map(([key, value]) => (
          <button type="button" key={key} aria-pressed={key === range} onClick={() => onRange(key)}>
            {value.label}
          </button>
        ))}
      </nav>
      <ErrorMessage error={answer.error} />
      {answer.data && (
        <div class="charts">
          <SeriesChart name="deliveries" title={`Events per ${answer.data.bucket} bucket`} unit="events" points={answer.data.points} lines={DELIVERY_LINES} />
          <SeriesChart name="latency" title="Delivery latency (ms)" unit="ms" points={answer.data.points} lines={LATENCY_LINES} markers />
        </div>
      )}
    </Section>
  );
}
