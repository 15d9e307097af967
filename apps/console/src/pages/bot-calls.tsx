import { listBotCalls } from '../api/admin';
import { BOT_CALL_OUTCOMES, BOT_WEBHOOK_TYPES, type BotCallView } from '@app/payloads/admin-api.types';
import { Json, Section, StatusBadge, Time } from '../components/bits';
import { type Column, DataTable, PagedList } from '../components/data-table';
import { type FilterField, FilterForm, TIME_RANGE } from '../components/filter-form';
import { AccountLink } from '../components/link';
import { formatMs } from '../lib/format';
import { useFilteredPages } from '../lib/use-loader';
import { type Route, setQuery } from '../router';

const FIELDS: FilterField[] = [
  { name: 'account_id', label: 'Account', kind: 'number', placeholder: 'id' },
  { name: 'type', label: 'Type', kind: 'select', options: BOT_WEBHOOK_TYPES },
  { name: 'outcome', label: 'Outcome', kind: 'select', options: BOT_CALL_OUTCOMES },
  { name: 'integration_name', label: 'Integration name', kind: 'text' },
  ...TIME_RANGE,
];
const FILTERS = FIELDS.map((field) => field.name);

const COLUMNS: Column<BotCallView>[] = [
  { head: 'ID', class: 'mono', cell: (call) => call.id },
  { head: 'Time', cell: (call) => <Time iso={call.created_at} /> },
  { head: 'Account', cell: (call) => <AccountLink id={call.account_id} /> },
  { head: 'Type', cell: (call) => call.type },
  { head: 'Integration', cell: (call) => call.integration_name },
  { head: 'Outcome', cell: (call) => <StatusBadge status={call.outcome} /> },
  { head: 'HTTP', num: true, cell: (call) => call.response_status ?? '—' },
  { head: 'Duration', num: true, cell: (call) => formatMs(call.duration_ms) },
  {
    head: 'Error / exchange',
    cell: (call) => (
      <>
        {call.error && <div class="clip">{call.error}</div>}
        <details>
          <summary>request and answer</summary>
          <div class="mono muted">{call.url ?? ''}</div>
          <h4>Request body</h4>
          <Json value={call.request_body} />
          <h4>Response body</h4>
          <Json value={call.response_body} />
        </details>
      </>
    ),
  },
];

export function BotCallsPage({ route }: { route: Route }) {
  const { filter, page: calls } = useFilteredPages(route.query, FILTERS, listBotCalls);
  return (
    <>
      <h1>Bot calls</h1>
      <FilterForm fields={FIELDS} values={filter} onApply={(values) => setQuery(values)} />
      <Section title="Bot calls, newest first">
        <PagedList page={calls} empty="No bot call matches these filters.">
          <DataTable columns={COLUMNS} items={calls.items} rowKey={(call) => call.id} idAttribute="data-bot-call-id" />
        </PagedList>
      </Section>
    </>
  );
}
