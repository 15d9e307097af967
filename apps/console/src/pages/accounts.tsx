import { useState } from 'preact/hooks';
import { createAccount, listAccounts } from '../api/admin';
import type { ApiError } from '../api/client';
import type { AccountView, CreatedAccount } from '@app/payloads/admin-api.types';
import { ErrorMessage, Fields, LoadMore, Mono, Section, StatusBadge, Time } from '../components/bits';
import { FilterForm } from '../components/filter-form';
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
        <div class="field buttons">
          <button type="submit">Create account</button>
        </div>
      </form>
      <ErrorMessage error={error} />
      {created && <CreatedSecrets account={created} />}
    </Section>
  );
}

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
        <ErrorMessage error={accounts.error} />
        <table class="grid">
          <thead>
            <tr>
              <th>ID</th>
              <th>Email</th>
              <th>Name</th>
              <th>Push URL</th>
              <th>Endpoint</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {accounts.items.map((account) => (
              <tr key={account.id} data-account-id={account.id}>
                <td>
                  <Link class="mono" href={link(`/accounts/${segment(account.id)}`)}>
                    {account.id}
                  </Link>
                </td>
                <td>{account.email}</td>
                <td>{account.name ?? ''}</td>
                <td class="mono clip">{account.push_url ?? '—'}</td>
                <td>
                  <StatusBadge status={endpointSummary(account)} />
                </td>
                <td>
                  <Time iso={account.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {!accounts.loading && !accounts.error && accounts.items.length === 0 && <p class="muted">No account matches.</p>}
        <LoadMore hasMore={accounts.hasMore} loading={accounts.loading} onClick={accounts.loadMore} />
      </Section>
      {roleAllows('admin') && <CreateAccount onCreated={() => setCreated((value) => value + 1)} />}
    </>
  );
}
