import { listBotCalls } from '../api/admin';
import { BOT_CALL_OUTCOMES, BOT_WEBHOOK_TYPES } from '@app/payloads/admin-api.types';
import { ErrorMessage, Json, LoadMore, Mono, Section, StatusBadge, Time } from '../components/bits';
import { type FilterField, FilterForm } from '../components/filter-form';
import { Link } from '../components/link';
import { formatMs } from '../lib/format';
import { usePaged } from '../lib/use-loader';
import { link, type Route, segment, setQuery } from '../router';

const FIELDS: FilterField[] = [
  { name: 'account_id', label: 'Account', kind: 'number', placeholder: 'id' },
  { name: 'type', label: 'Type', kind: 'select', options: BOT_WEBHOOK_TYPES },
  { name: 'outcome', label: 'Outcome', kind: 'select', options: BOT_CALL_OUTCOMES },
  { name: 'integration_name', label: 'Integration name', kind: 'text' },
  { name: 'since', label: 'Since', kind: 'time' },
  { name: 'until', label: 'Until', kind: 'time' },
];

export function BotCallsPage({ route }: { route: Route }) {
  const filter: Record<string, string> = {};
  for (const field of FIELDS) {
    const value = route.query.get(field.name);
    if (value) filter[field.name] = value;
  }
  const key = JSON.stringify(filter);
  const calls = usePaged((cursor) => listBotCalls({ ...filter, cursor, limit: 50 }), [key]);
  return (
    <>
      <h1>Bot calls</h1>
      <FilterForm fields={FIELDS} values={filter} onApply={(values) => setQuery(values)} />
      <Section title="Bot calls, newest first">
        <ErrorMessage error={calls.error} />
        <table class="grid">
          <thead>
            <tr>
              <th>ID</th>
              <th>Time</th>
              <th>Account</th>
              <th>Type</th>
              <th>Integration</th>
              <th>Outcome</th>
              <th class="num">HTTP</th>
              <th class="num">Duration</th>
              <th>Error / exchange</th>
            </tr>
          </thead>
          <tbody>
            {calls.items.map((call) => (
              <tr key={call.id} data-bot-call-id={call.id}>
                <td class="mono">{call.id}</td>
                <td>
                  <Time iso={call.created_at} />
                </td>
                <td>
                  <Link href={link(`/accounts/${segment(call.account_id)}`)}>
                    <Mono>{call.account_id}</Mono>
                  </Link>
                </td>
                <td>{call.type}</td>
                <td>{call.integration_name}</td>
                <td>
                  <StatusBadge status={call.outcome} />
                </td>
                <td class="num">{call.response_status ?? '—'}</td>
                <td class="num">{formatMs(call.duration_ms)}</td>
                <td>
                  {call.error && <div class="clip">{call.error}</div>}
                  <details>
                    <summary>request and answer</summary>
                    <div class="mono muted">{call.url ?? ''}</div>
                    <h4>Request body</h4>
                    <Json value={call.request_body} />
                    <h4>Response body</h4>
                    <Json value={call.response_body} />
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {!calls.loading && !calls.error && calls.items.length === 0 && <p class="muted">No bot call matches these filters.</p>}
        <LoadMore hasMore={calls.hasMore} loading={calls.loading} onClick={calls.loadMore} />
      </Section>
    </>
  );
}
