import { queueState, series, stats, troubledEndpoints } from '../api/admin';
import { EVENT_STATUSES } from '@app/payloads/admin-api.types';
import { RANGES, RangeCharts, rangeOf } from '../charts/range-charts';
import { ErrorMessage, Fields, Mono, Section, StatusBadge, Time } from '../components/bits';
import { Link } from '../components/link';
import { formatAge, formatCount, formatMs } from '../lib/format';
import { useLoader } from '../lib/use-loader';
import { link, type Route, segment, setQuery } from '../router';

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
  const range = rangeOf(route.query);
  return (
    <>
      <h1>Overview</h1>
      <RangeCharts range={range} load={series} onRange={(key) => setQuery({ range: key })} />
      <StatusCounts range={range} />
      <div class="columns">
        <Queue />
        <Endpoints />
      </div>
    </>
  );
}
