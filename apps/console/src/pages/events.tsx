import { EVENT_ACTIONS } from '@app/payloads/actions';
import { useState } from 'preact/hooks';
import { listEvents, redeliverMatching } from '../api/admin';
import type { ApiError } from '../api/client';
import { EVENT_STATUSES, type RedeliveryStarted } from '@app/payloads/admin-api.types';
import { ErrorMessage, LoadMore, Mono, Section, StatusBadge, Time } from '../components/bits';
import { type FilterField, FilterForm, type FilterValues } from '../components/filter-form';
import { Link } from '../components/link';
import { TaskProgress } from '../components/task-progress';
import { usePaged } from '../lib/use-loader';
import { link, navigate, type Route, segment, setQuery } from '../router';

const FIELDS: FilterField[] = [
  { name: 'account_id', label: 'Account', kind: 'number', placeholder: 'id' },
  { name: 'action', label: 'Action', kind: 'select', options: EVENT_ACTIONS },
  { name: 'status', label: 'Status', kind: 'select', options: EVENT_STATUSES },
  { name: 'since', label: 'Since', kind: 'time' },
  { name: 'until', label: 'Until', kind: 'time' },
  { name: 'q', label: 'Message contains', kind: 'text', placeholder: 'a value, e.g. 12345', wide: true },
  { name: 'event_id', label: 'Event ID', kind: 'text', placeholder: 'opens the event', wide: true },
];
const FILTERS = ['account_id', 'action', 'status', 'since', 'until', 'q'] as const;
/** Message search needs a bounded range (at most 31 days); without a Since it looks back this far. */
const SEARCH_DAYS = 30;

function RedeliverMatching({ filter, onFinished }: { filter: Record<string, string>; onFinished: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [started, setStarted] = useState<RedeliveryStarted>();
  const [error, setError] = useState<ApiError>();
  const start = (): void => {
    setConfirming(false);
    setError(undefined);
    redeliverMatching(filter).then(setStarted, setError);
  };
  const described = Object.entries(filter).map(([name, value]) => `${name}=${value}`).join(', ');
  return (
    <div class="bulk">
      {!confirming && !started && (
        <button type="button" class="secondary" onClick={() => setConfirming(true)}>
          Redeliver all matching
        </button>
      )}
      {confirming && (
        <p class="confirm">
          Redeliver every event matching {described || 'no filter'}
          {filter.status ? '' : ' (status failed)'}, not only this page?{' '}
          <button type="button" onClick={start}>
            Start redelivery
          </button>{' '}
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </p>
      )}
      {started && <TaskProgress taskId={started.task_id} count={started.count} onFinished={onFinished} />}
      <ErrorMessage error={error} />
    </div>
  );
}

export function EventsPage({ route }: { route: Route }) {
  const filter: Record<string, string> = {};
  for (const name of FILTERS) {
    const value = route.query.get(name);
    if (value) filter[name] = value;
  }
  const key = JSON.stringify(filter);
  const events = usePaged((cursor) => listEvents({ ...filter, cursor, limit: 50 }), [key]);

  const apply = (values: FilterValues): void => {
    if (values.event_id) {
      navigate(link(`/events/${segment(values.event_id)}`));
      return;
    }
    const next: FilterValues = { ...values, event_id: '' };
    if (next.q && !next.since) next.since = new Date(Date.now() - SEARCH_DAYS * 86_400_000).toISOString();
    setQuery(next);
  };

  return (
    <>
      <h1>Events</h1>
      <FilterForm fields={FIELDS} values={filter} onApply={apply} />
      <Section title="Events, newest first" actions={<RedeliverMatching key={key} filter={filter} onFinished={events.reload} />}>
        <ErrorMessage error={events.error} />
        <table class="grid">
          <thead>
            <tr>
              <th>Event ID</th>
              <th>Account</th>
              <th>Action</th>
              <th>Status</th>
              <th class="num">Attempts</th>
              <th>Created</th>
              <th>Delivered</th>
              <th>Last error</th>
            </tr>
          </thead>
          <tbody>
            {events.items.map((event) => (
              <tr key={event.event_id} data-event-id={event.event_id}>
                <td>
                  <Link class="mono" href={link(`/events/${segment(event.event_id)}`)}>
                    {event.event_id}
                  </Link>
                </td>
                <td>
                  <Link href={link(`/accounts/${segment(event.account_id)}`)}>
                    <Mono>{event.account_id}</Mono>
                  </Link>
                </td>
                <td>{event.action}</td>
                <td>
                  <StatusBadge status={event.status} />
                </td>
                <td class="num">{event.attempts}</td>
                <td>
                  <Time iso={event.created_at} />
                </td>
                <td>
                  <Time iso={event.delivered_at} />
                </td>
                <td class="clip" title={event.last_error ?? undefined}>
                  {event.last_error ?? ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {!events.loading && !events.error && events.items.length === 0 && <p class="muted">No event matches these filters.</p>}
        <LoadMore hasMore={events.hasMore} loading={events.loading} onClick={events.loadMore} />
      </Section>
    </>
  );
}
