import { LOGGED_ACTIONS } from '@app/payloads/actions';
import { EVENT_STATUSES } from '@app/payloads/admin-api.types';
import { useState } from 'preact/hooks';
import type { ApiError } from '../api/client';
import { ErrorMessage, Section } from '../components/bits';
import { PagedList } from '../components/data-table';
import { EventTable } from '../components/event-table';
import { type FilterField, FilterForm, type FilterValues, TIME_RANGE } from '../components/filter-form';
import { TaskProgress } from '../components/task-progress';
import { withSearchRange } from '../lib/event-log';
import { useFilteredPages } from '../lib/use-loader';
import { navigate } from '../router';
import { listEvents, redeliverMatching, redeliveryTask } from './portal-api';
import { portalLink, type PortalRoute } from './portal-router';

const FIELDS: FilterField[] = [
  { name: 'action', label: 'Action', kind: 'select', options: LOGGED_ACTIONS },
  { name: 'status', label: 'Status', kind: 'select', options: EVENT_STATUSES },
  ...TIME_RANGE,
  { name: 'q', label: 'Search', kind: 'text', placeholder: 'a value in the message, e.g. 12345', wide: true },
];
const FILTERS = ['action', 'status', 'since', 'until', 'q'] as const;

/** Redelivers the failed events of the current filter (action and time; search and status are not part of it). */
function RedeliverFailed({ filter, onFinished }: { filter: Record<string, string>; onFinished: () => void }) {
  const [started, setStarted] = useState<{ task_id: string; count: number }>();
  const [error, setError] = useState<ApiError>();
  const scope: Record<string, string> = {};
  for (const name of ['action', 'since', 'until']) if (filter[name]) scope[name] = filter[name];
  const start = (): void => {
    setError(undefined);
    redeliverMatching(scope).then(setStarted, setError);
  };
  return (
    <div class="bulk">
      {!started && (
        <button type="button" class="secondary" onClick={start}>
          Redeliver failed
        </button>
      )}
      {started && <TaskProgress taskId={started.task_id} count={started.count} onFinished={onFinished} load={redeliveryTask} />}
      <ErrorMessage error={error} />
    </div>
  );
}

export function DeliveriesPage({ route }: { route: PortalRoute }) {
  const { filter, key, page: events } = useFilteredPages(route.query, FILTERS, listEvents);
  const apply = (values: FilterValues): void => navigate(portalLink('deliveries', withSearchRange(values)));
  return (
    <>
      <h1>Deliveries</h1>
      <FilterForm fields={FIELDS} values={filter} onApply={apply} />
      <Section title="Events, newest first" actions={<RedeliverFailed key={key} filter={filter} onFinished={events.reload} />}>
        <PagedList page={events} empty="No event matches these filters.">
          <EventTable items={events.items} eventHref={(id) => portalLink('event', { id })} />
        </PagedList>
      </Section>
    </>
  );
}
