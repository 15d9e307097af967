import { queueState, series, stats, troubledEndpoints } from '../api/admin';
import { type EndpointItem, EVENT_STATUSES } from '@app/payloads/admin-api.types';
import { RANGES, RangeCharts, rangeOf } from '../charts/range-charts';
import { ErrorMessage, Fields, Section, StatusBadge, Time } from '../components/bits';
import { type Column, DataTable, ListOrEmpty } from '../components/data-table';
import { AccountLink, Link } from '../components/link';
import { formatAge, formatCount, formatMs } from '../lib/format';
import { useLoader } from '../lib/use-loader';
import { link, type Route, setQuery } from '../router';

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

const ENDPOINT_COLUMNS: Column<EndpointItem>[] = [
  {
    head: 'Account',
    class: 'nowrap',
    cell: (item) => (
      <>
        <AccountLink id={item.account_id} /> {item.email}
      </>
    ),
  },
  { head: 'Endpoint', class: 'mono', cell: (item) => item.push_url },
  { head: 'State', cell: (item) => <StatusBadge status={item.disabled_at ? 'disabled' : item.breaker} /> },
  { head: 'Failures', num: true, cell: (item) => item.consecutive_failures },
  { head: 'Retry at', cell: (item) => <Time iso={item.retry_at} /> },
  {
    head: 'Problem',
    cell: (item) =>
      item.disabled_at ? (
        <>
          disabled since <Time iso={item.disabled_at} />: {item.disabled_reason}
        </>
      ) : (
        (item.last_error ?? '—')
      ),
  },
];

function Endpoints() {
  const answer = useLoader(troubledEndpoints, []);
  const items = answer.data?.items ?? [];
  return (
    <Section title="Endpoints in trouble">
      <ErrorMessage error={answer.error} />
      <ListOrEmpty loaded={answer.data !== undefined} count={items.length} empty="Every endpoint is healthy: no open breaker, none disabled.">
        <DataTable columns={ENDPOINT_COLUMNS} items={items} rowKey={(item) => item.account_id} />
      </ListOrEmpty>
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
