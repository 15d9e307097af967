import { useState } from 'preact/hooks';
import { accountDestinations, accountDetail, botWebhooks, enableEndpoint, portalLink, redeliverAccount, setDeliveryOptions } from '../api/admin';
import type { ApiError } from '../api/client';
import type { AccountView, BotWebhookView, RedeliveryStarted } from '@app/payloads/admin-api.types';
import { ErrorMessage, Fields, Mono, Section, StatusBadge, Time } from '../components/bits';
import { type Column, DataTable, ListOrEmpty } from '../components/data-table';
import { DeliveryOptionsPanel } from '../components/delivery-options-panel';
import { DestinationsPanel } from '../components/destinations-panel';
import { Link } from '../components/link';
import { TaskProgress } from '../components/task-progress';
import { useLoader } from '../lib/use-loader';
import { link } from '../router';
import { endpointSummary } from './accounts';
import { AccountCredentials } from './account-credentials';
import { AccountDataProtection } from './account-data-protection';
import { roleAllows } from '../api/session';

function EndpointState({ account, onChanged }: { account: AccountView; onChanged: () => void }) {
  const [error, setError] = useState<ApiError>();
  const enable = (): void => {
    setError(undefined);
    enableEndpoint(account.id).then(onChanged, setError);
  };
  const breaker = account.endpoint;
  return (
    <Section
      title="Endpoint"
      actions={
        account.disabled_at &&
        roleAllows('operator') && (
          <button type="button" onClick={enable}>
            Enable endpoint
          </button>
        )
      }
    >
      <ErrorMessage error={error} />
      <Fields
        rows={[
          ['State', <span data-field="endpoint-state"><StatusBadge status={endpointSummary(account)} /></span>],
          ['Disabled at', <Time iso={account.disabled_at} />],
          ['Disabled because', account.disabled_reason],
          ['Breaker', breaker ? breaker.state : '—'],
          ['Consecutive failures', breaker ? String(breaker.consecutive_failures) : '—'],
          ['Opened at', <Time iso={breaker?.opened_at} />],
          ['Retry at', <Time iso={breaker?.retry_at} />],
          ['Last error', breaker?.last_error],
          ['Events waiting', <span data-field="lane-waiting">{String(account.lane.waiting)}</span>],
          ['Pace', <span data-field="lane-pace">{account.lane.pace_per_second === null ? 'no limit' : `${account.lane.pace_per_second} calls/s`}</span>],
        ]}
      />
    </Section>
  );
}

const WEBHOOK_COLUMNS: Column<BotWebhookView>[] = [
  { head: 'ID', class: 'mono', cell: (webhook) => webhook.id },
  { head: 'Name', cell: (webhook) => webhook.name },
  { head: 'Type', cell: (webhook) => webhook.type },
  { head: 'URL', class: 'mono', cell: (webhook) => webhook.url },
  { head: 'Time-out', num: true, cell: (webhook) => `${webhook.timeout_ms} ms` },
  { head: 'Created', cell: (webhook) => <Time iso={webhook.created_at} /> },
];

function BotWebhooks({ accountId }: { accountId: number }) {
  const answer = useLoader(() => botWebhooks(accountId), [accountId]);
  const items = answer.data?.items ?? [];
  return (
    <Section title="Bot webhooks" actions={<Link href={link('/bot-calls', { account_id: accountId })}>Bot calls of this account</Link>}>
      <ErrorMessage error={answer.error} />
      <ListOrEmpty loaded={answer.data !== undefined} count={items.length} empty="No bot webhook.">
        <DataTable columns={WEBHOOK_COLUMNS} items={items} rowKey={(webhook) => webhook.id} />
      </ListOrEmpty>
    </Section>
  );
}

function BulkRedelivery({ accountId, onFinished }: { accountId: number; onFinished: () => void }) {
  const [started, setStarted] = useState<RedeliveryStarted>();
  const [error, setError] = useState<ApiError>();
  const start = (): void => {
    setError(undefined);
    redeliverAccount(accountId, { status: 'failed' }).then(setStarted, setError);
  };
  return (
    <Section title="Redeliver failed events" actions={<Link href={link('/events', { account_id: accountId, status: 'failed' })}>Failed events</Link>}>
      <p class="muted">Starts a new attempt series for every failed event of this account, in the background.</p>
      {!started && roleAllows('operator') && (
        <button type="button" onClick={start}>
          Redeliver failed events
        </button>
      )}
      {started && <TaskProgress taskId={started.task_id} count={started.count} onFinished={onFinished} />}
      <ErrorMessage error={error} />
    </Section>
  );
}

/** An operator opens what the account's user sees: a one-time portal link from the admin API. */
function PortalLink({ accountId }: { accountId: number }) {
  const [made, setMade] = useState<{ url: string; expires_at: string }>();
  const [error, setError] = useState<ApiError>();
  const make = (): void => {
    setError(undefined);
    portalLink(accountId).then(setMade, setError);
  };
  return (
    <p class="portal-link">
      <button type="button" class="secondary" onClick={make}>
        Open portal
      </button>{' '}
      {made && (
        <>
          <a href={made.url} target="_blank" rel="noopener noreferrer">
            The account's portal
          </a>{' '}
          <span class="muted">
            (works once, until <Time iso={made.expires_at} />)
          </span>
        </>
      )}
      <ErrorMessage error={error} />
    </p>
  );
}

export function AccountDetailPage({ accountId }: { accountId: string }) {
  const id = Number(accountId);
  const answer = useLoader(() => accountDetail(id), [id]);
  const account = answer.data;
  return (
    <>
      <h1>
        Account <Mono>{accountId}</Mono>
      </h1>
      <ErrorMessage error={answer.error} />
      {account && (
        <>
          <Section title="Settings" actions={<Link href={link('/events', { account_id: account.id })}>Events of this account</Link>}>
            {roleAllows('admin') && <PortalLink accountId={account.id} />}
            <Fields
              rows={[
                ['Email', account.email],
                ['Name', account.name],
                ['Created', <Time iso={account.created_at} />],
                ['Push URL', account.push_url && <Mono>{account.push_url}</Mono>],
                ['Content type', account.push_content_type],
              ]}
            />
            <h3>Permissions</h3>
            <ul class="permissions">
              {Object.entries(account.permissions).map(([key, on]) => (
                <li key={key} class={on ? 'on' : 'off'}>
                  <Mono>{key}</Mono> {on ? 'on' : 'off'}
                </li>
              ))}
            </ul>
          </Section>
          {roleAllows('admin') && <AccountCredentials account={account} onChanged={answer.reload} />}
          <EndpointState account={account} onChanged={answer.reload} />
          {roleAllows('admin') && <DeliveryOptionsPanel current={account} save={(change) => setDeliveryOptions(account.id, change)} onChanged={answer.reload} />}
          <DestinationsPanel client={accountDestinations(account.id)} scope={account.id} />
          <BulkRedelivery accountId={account.id} onFinished={answer.reload} />
          <BotWebhooks accountId={account.id} />
          {roleAllows('admin') && <AccountDataProtection account={account} onChanged={answer.reload} />}
        </>
      )}
    </>
  );
}

