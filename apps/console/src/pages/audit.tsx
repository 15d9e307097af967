import { listAudit } from '../api/admin';
import { ErrorMessage, LoadMore, Mono, Section, Time } from '../components/bits';
import { type FilterField, FilterForm } from '../components/filter-form';
import { Link } from '../components/link';
import { usePaged } from '../lib/use-loader';
import { link, type Route, segment, setQuery } from '../router';

const FIELDS: FilterField[] = [
  { name: 'actor', label: 'Actor', kind: 'text' },
  { name: 'action', label: 'Action', kind: 'text', placeholder: 'account.create' },
  { name: 'account_id', label: 'Account', kind: 'number', placeholder: 'id' },
];

/** The audit log (admins): who did what, newest first; every value is shown as text. */
export function AuditPage({ route }: { route: Route }) {
  const filter: Record<string, string> = {};
  for (const field of FIELDS) {
    const value = route.query.get(field.name);
    if (value) filter[field.name] = value;
  }
  const key = JSON.stringify(filter);
  const entries = usePaged((cursor) => listAudit({ ...filter, cursor, limit: 50 }), [key]);
  return (
    <>
      <h1>Audit</h1>
      <FilterForm fields={FIELDS} values={filter} onApply={(values) => setQuery(values)} />
      <Section title="Audit log, newest first">
        <ErrorMessage error={entries.error} />
        <table class="grid">
          <thead>
            <tr>
              <th>Time</th>
              <th>Actor</th>
              <th>Role</th>
              <th>Via</th>
              <th>Action</th>
              <th>Account</th>
              <th>Target</th>
              <th class="num">Status</th>
              <th>Address</th>
              <th>Request</th>
            </tr>
          </thead>
          <tbody>
            {entries.items.map((entry) => (
              <tr key={entry.id} data-audit-id={entry.id}>
                <td>
                  <Time iso={entry.at} />
                </td>
                <td>{entry.actor}</td>
                <td>{entry.role ?? '—'}</td>
                <td>{entry.via}</td>
                <td class="mono">{entry.action}</td>
                <td>
                  {entry.account_id === null ? (
                    '—'
                  ) : (
                    <Link href={link(`/accounts/${segment(entry.account_id)}`)}>
                      <Mono>{entry.account_id}</Mono>
                    </Link>
                  )}
                </td>
                <td class="mono">{entry.target ?? '—'}</td>
                <td class="num">{entry.status}</td>
                <td class="mono">{entry.ip ?? '—'}</td>
                <td class="mono muted">{entry.request_id ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {!entries.loading && !entries.error && entries.items.length === 0 && <p class="muted">No entry matches these filters.</p>}
        <LoadMore hasMore={entries.hasMore} loading={entries.loading} onClick={entries.loadMore} />
      </Section>
    </>
  );
}
