import { queueState, series, stats, troubledEndpoints } from '../api/admin';
import { EVENT_STATUSES, type SeriesBucket, type SeriesPoint } from '@app/payloads/admin-api.types';
import { type ChartLine, SeriesChart } from '../charts/series-chart';
import { ErrorMessage, Fields, Mono, Section, StatusBadge, Time } from '../components/bits';
import { Link } from '../components/link';
import { formatAge, formatCount, formatMs } from '../lib/format';
import { useLoader } from '../lib/use-loader';
import { link, type Route, segment, setQuery } from '../router';

const RANGES: Record<string, { label: string; hours: number; bucket: SeriesBucket }> = {
  hour: { label: 'Last hour', hours: 1, bucket: '1m' },
  day: { label: 'Last day', hours: 24, bucket: '1h' },
  week: { label: 'Last week', hours: 24 * 7, bucket: '1h' },
};

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

function Charts({ range }: { range: string }) {
  const { hours, bucket } = RANGES[range];
  const answer = useLoader(() => {
    const until = new Date();
    const since = new Date(until.getTime() - hours * 3_600_000);
    return series({ since: since.toISOString(), until: until.toISOString(), bucket });
  }, [range]);
  return (
    <Section title="Deliveries and latency">
      <nav class="tabs" aria-label="Time range">
        {Object.entries(RANGES).map(([key, value]) => (
          <button type="button" key={key} aria-pressed={key === range} onClick={() => setQuery({ range: key })}>
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

function StatusCounts({ range }: { range: string }) {
  const since = new Date(Date.now() - RANGES[range].hours * 3_600_000).toISOString();
  const answer = useLoader(() => stats({ since }), [range]);
  const data = answer.data;
  return (
    <Section title="Events by status">
      <ErrorMessage error={answer.error} />
      {data && (
        <table class="grid counts">
          <thead>
            <tr>
              {EVENT_STATUSES.map((status) => (
                <th key={status}>
                  <Link href={link('/events', { status })}>
                    <StatusBadge status={status} />
                  </Link>
                </th>
              ))}
              <th>total</th>
              <th>latency p50 / p95 / p99</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              {EVENT_STATUSES.map((status) => (
                <td key={status} class="num" data-status={status}>
                  {formatCount(data.counts[status] ?? 0)}
                </td>
              ))}
              <td class="num">{formatCount(data.total)}</td>
              <td class="num">
                {formatMs(data.delivery_latency_ms.p50)} / {formatMs(data.delivery_latency_ms.p95)} / {formatMs(data.delivery_latency_ms.p99)}
              </td>
            </tr>
          </tbody>
        </table>
      )}
    </Section>
  );
}

function Queue() {
  const answer = useLoader(queueState, []);
  const data = answer.data;
  return (
    <Section title="Delivery queue">
      <ErrorMessage error={answer.error} />
      {data && (
        <Fields
          rows={[
            ['Waiting', formatCount(data.waiting)],
            ['Active', formatCount(data.active)],
            ['Delayed (retries)', formatCount(data.delayed)],
            ['Failed jobs', formatCount(data.failed)],
            ['Oldest waiting job', data.oldest_waiting_at ? <><Time iso={data.oldest_waiting_at} /> ({formatAge(data.oldest_waiting_age_seconds)} ago)</> : 'none'],
          ]}
        />
      )}
    </Section>
  );
}

function Endpoints() {
  const answer = useLoader(troubledEndpoints, []);
  const items = answer.data?.items ?? [];
  return (
    <Section title="Endpoints in trouble">
      <ErrorMessage error={answer.error} />
      {answer.data && items.length === 0 && <p class="muted">Every endpoint is healthy: no open breaker, none disabled.</p>}
      {items.length > 0 && (
        <table class="grid">
          <thead>
            <tr>
              <th>Account</th>
              <th>Endpoint</th>
              <th>State</th>
              <th class="num">Failures</th>
              <th>Retry at</th>
              <th>Problem</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={`${item.account_id}`}>
                <td class="nowrap">
                  <Link href={link(`/accounts/${segment(item.account_id)}`)}>
                    <Mono>{item.account_id}</Mono>
                  </Link>{' '}
                  {item.email}
                </td>
                <td class="mono">{item.push_url}</td>
                <td>
                  <StatusBadge status={item.disabled_at ? 'disabled' : item.breaker} />
                </td>
                <td class="num">{item.consecutive_failures}</td>
                <td>
                  <Time iso={item.retry_at} />
                </td>
                <td>
                  {item.disabled_at ? (
                    <>
                      disabled since <Time iso={item.disabled_at} />: {item.disabled_reason}
                    </>
                  ) : (
                    (item.last_error ?? '—')
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

export function OverviewPage({ route }: { route: Route }) {
  const requested = route.query.get('range') ?? 'hour';
  const range = requested in RANGES ? requested : 'hour';
  return (
    <>
      <h1>Overview</h1>
      <Charts range={range} />
      <StatusCounts range={range} />
      <div class="columns">
        <Queue />
        <Endpoints />
      </div>
    </>
  );
}
