import { listAudit } from '../api/admin';
import type { AuditEntryView } from '@app/payloads/admin-api.types';
import { Section, Time } from '../components/bits';
import { type Column, DataTable, PagedList } from '../components/data-table';
import { type FilterField, FilterForm } from '../components/filter-form';
import { AccountLink } from '../components/link';
import { useFilteredPages } from '../lib/use-loader';
import { type Route, setQuery } from '../router';

const FIELDS: FilterField[] = [
  { name: 'actor', label: 'Actor', kind: 'text' },
  { name: 'action', label: 'Action', kind: 'text', placeholder: 'account.create' },
  { name: 'account_id', label: 'Account', kind: 'number', placeholder: 'id' },
];
const FILTERS = FIELDS.map((field) => field.name);

const COLUMNS: Column<AuditEntryView>[] = [
  { head: 'Time', cell: (entry) => <Time iso={entry.at} /> },
  { head: 'Actor', cell: (entry) => entry.actor },
  { head: 'Role', cell: (entry) => entry.role ?? '—' },
  { head: 'Via', cell: (entry) => entry.via },
  { head: 'Action', class: 'mono', cell: (entry) => entry.action },
  { head: 'Account', cell: (entry) => (entry.account_id === null ? '—' : <AccountLink id={entry.account_id} />) },
  { head: 'Target', class: 'mono', cell: (entry) => entry.target ?? '—' },
  { head: 'Status', num: true, cell: (entry) => entry.status },
  { head: 'Address', class: 'mono', cell: (entry) => entry.ip ?? '—' },
  { head: 'Request', class: 'mono muted', cell: (entry) => entry.request_id ?? '—' },
];

/** The audit log (admins): who did what, newest first; every value is shown as text. */
export function AuditPage({ route }: { route: Route }) {
  const { filter, page: entries } = useFilteredPages(route.query, FILTERS, listAudit);
  return (
    <>
      <h1>Audit</h1>
      <FilterForm fields={FIELDS} values={filter} onApply={(values) => setQuery(values)} />
      <Section title="Audit log, newest first">
        <PagedList page={entries} empty="No entry matches these filters.">
          <DataTable columns={COLUMNS} items={entries.items} rowKey={(entry) => entry.id} idAttribute="data-audit-id" />
        </PagedList>
      </Section>
    </>
  );
}
