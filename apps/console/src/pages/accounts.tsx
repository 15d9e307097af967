import { useState } from 'preact/hooks';
import { createAccount, listAccounts } from '../api/admin';
import type { ApiError } from '../api/client';
import type { AccountView, CreatedAccount } from '@app/payloads/admin-api.types';
import { ErrorMessage, Fields, Mono, Section, StatusBadge, Time } from '../components/bits';
import { type Column, DataTable, PagedList } from '../components/data-table';
import { FilterForm } from '../components/filter-form';
import { SubmitRow } from '../components/form-fields';
import { Link } from '../components/link';
import { usePaged } from '../lib/use-loader';
import { link, type Route, segment, setQuery } from '../router';
import { roleAllows } from '../api/session';

export function endpointSummary(account: Pick<AccountView, 'push_url' | 'endpoint' | 'disabled_at'>): string {
  if (!account.push_url) return 'no push_url';
  if (account.disabled_at) return 'disabled';
  return account.endpoint?.state ?? 'closed';
}

/** The secrets of a new account, shown this once: the API never returns them again. */
function CreatedSecrets({ account }: { account: CreatedAccount }) {
  return (
    <div class="secrets" role="status">
      <p>
        <strong>Account {account.id} created.</strong> Copy these now: they are shown only once.
      </p>
      <Fields
        rows={[
          ['Email', account.email],
          ['open_api_token', <Mono>{account.open_api_token}</Mono>],
          ['signing_secret', <Mono>{account.signing_secret}</Mono>],
        ]}
      />
      <Link href={link(`/accounts/${segment(account.id)}`)}>Open account {account.id}</Link>
    </div>
  );
}

function CreateAccount({ onCreated }: { onCreated: () => void }) {
  const [fields, setFields] = useState({ email: '', name: '', id: '' });
  const [created, setCreated] = useState<CreatedAccount>();
  const [error, setError] = useState<ApiError>();
  const set = (name: keyof typeof fields) => (event: Event) => setFields({ ...fields, [name]: (event.currentTarget as HTMLInputElement).value });
  const submit = (event: Event): void => {
    event.preventDefault();
    setError(undefined);
    setCreated(undefined);
    const body = { email: fields.email.trim(), ...(fields.name.trim() ? { name: fields.name.trim() } : {}), ...(fields.id ? { id: Number(fields.id) } : {}) };
    createAccount(body).then((account) => {
      setCreated(account);
      setFields({ email: '', name: '', id: '' });
      onCreated();
    }, setError);
  };
  return (
    <Section title="Create an account">
      <form class="filters" onSubmit={submit}>
        <div class="field wide">
          <label for="new-email">Email</label>
          <input id="new-email" type="email" required value={fields.email} onInput={set('email')} autocomplete="off" />
        </div>
        <div class="field wide">
          <label for="new-name">Name</label>
          <input id="new-name" type="text" value={fields.name} onInput={set('name')} autocomplete="off" />
        </div>
        <div class="field">
          <label for="new-id">ID (optional)</label>
          <input id="new-id" type="number" min={1} value={fields.id} onInput={set('id')} />
        </div>
        <SubmitRow label="Create account" />
      </form>
      <ErrorMessage error={error} />
      {created && <CreatedSecrets account={created} />}
    </Section>
  );
}

const COLUMNS: Column<AccountView>[] = [
  {
    head: 'ID',
    cell: (account) => (
      <Link class="mono" href={link(`/accounts/${segment(account.id)}`)}>
        {account.id}
      </Link>
    ),
  },
  { head: 'Email', cell: (account) => account.email },
  { head: 'Name', cell: (account) => account.name ?? '' },
  { head: 'Push URL', class: 'mono clip', cell: (account) => account.push_url ?? '—' },
  { head: 'Endpoint', cell: (account) => <StatusBadge status={endpointSummary(account)} /> },
  { head: 'Created', cell: (account) => <Time iso={account.created_at} /> },
];

export function AccountsPage({ route }: { route: Route }) {
  const search = route.query.get('search') ?? '';
  const [created, setCreated] = useState(0);
  const accounts = usePaged((cursor) => listAccounts({ search, cursor, limit: 50 }), [search, created]);
  return (
    <>
      <h1>Accounts</h1>
      <FilterForm
        fields={[{ name: 'search', label: 'Search', kind: 'text', placeholder: 'id, part of the email or name', wide: true }]}
        values={{ search }}
        onApply={(values) => setQuery(values)}
      />
      <Section title="Accounts, newest first">
        <PagedList page={accounts} empty="No account matches.">
          <DataTable columns={COLUMNS} items={accounts.items} rowKey={(account) => account.id} idAttribute="data-account-id" />
        </PagedList>
      </Section>
      {roleAllows('admin') && <CreateAccount onCreated={() => setCreated((value) => value + 1)} />}
    </>
  );
}
