import { LOGGED_ACTIONS } from '@app/payloads/actions';
import { useState } from 'preact/hooks';
import { listEvents, redeliverMatching } from '../api/admin';
import type { ApiError } from '../api/client';
import { EVENT_STATUSES, type RedeliveryStarted } from '@app/payloads/admin-api.types';
import { ErrorMessage, Section } from '../components/bits';
import { PagedList } from '../components/data-table';
import { EventTable } from '../components/event-table';
import { type FilterField, FilterForm, type FilterValues, TIME_RANGE } from '../components/filter-form';
import { TaskProgress } from '../components/task-progress';
import { withSearchRange } from '../lib/event-log';
import { useFilteredPages } from '../lib/use-loader';
import { link, navigate, type Route, segment, setQuery } from '../router';
import { roleAllows } from '../api/session';

const FIELDS: FilterField[] = [
  { name: 'account_id', label: 'Account', kind: 'number', placeholder: 'id' },
  { name: 'action', label: 'Action', kind: 'select', options: LOGGED_ACTIONS },
  { name: 'status', label: 'Status', kind: 'select', options: EVENT_STATUSES },
  ...TIME_RANGE,
  { name: 'q', label: 'Message contains', kind: 'text', placeholder: 'a value, e.g. 12345', wide: true },
  { name: 'event_id', label: 'Event ID', kind: 'text', placeholder: 'opens the event', wide: true },
];
const FILTERS = ['account_id', 'action', 'status', 'since', 'until', 'q'] as const;

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
      {!confirming && !started && roleAllows('operator') && (
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
  const { filter, key, page: events } = useFilteredPages(route.query, FILTERS, listEvents);

  const apply = (values: FilterValues): void => {
    if (values.event_id) {
      navigate(link(`/events/${segment(values.event_id)}`));
      return;
    }
    setQuery(withSearchRange({ ...values, event_id: '' }));
  };

  return (
    <>
      <h1>Events</h1>
      <FilterForm fields={FIELDS} values={filter} onApply={apply} />
      <Section title="Events, newest first" actions={<RedeliverMatching key={key} filter={filter} onFinished={events.reload} />}>
        <PagedList page={events} empty="No event matches these filters.">
          <EventTable
            items={events.items}
            eventHref={(eventId) => link(`/events/${segment(eventId)}`)}
            accountHref={(accountId) => link(`/accounts/${segment(accountId)}`)}
          />
        </PagedList>
      </Section>
    </>
  );
}
