import { useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { type DestinationsClient, type DestinationView, MAX_DESTINATIONS_PER_ACCOUNT, PRIMARY_DESTINATION_ID } from '../api/destinations';
import { useLoader } from '../lib/use-loader';
import { ErrorMessage, Fields, Mono, Section, StatusBadge, Time } from './bits';
import { type Column, DataTable, ListOrEmpty } from './data-table';
import { DestinationForm } from './destination-form';
import { retryPolicyText } from './retry-policy-fields';
import { RetryPolicyForm } from './retry-policy-form';

/** One word for the list: paused before disabled before the breaker's own state. */
export function destinationState(view: DestinationView): string {
  if (view.paused) return 'paused';
  if (view.state.disabled_at) return 'disabled';
  return view.state.breaker;
}

function optionsText(view: DestinationView): string {
  const parts = [view.format, ...(view.type === 'webhook' ? [view.content_type] : []), `ordering ${view.ordering}`];
  parts.push(view.max_per_second === null ? 'no pace limit' : `${view.max_per_second}/s`);
  if (view.auth) parts.push(`auth ${view.auth.type}`);
  return parts.join(' · ');
}

/** The secret of a destination just made: the API shows it this once. */
function NewSecret({ view, onDismiss }: { view: DestinationView; onDismiss: () => void }) {
  return (
    <div class="secrets" role="status">
      <p>
        Destination <Mono><span data-field="destination-new-id">{view.id}</span></Mono> added. Copy its signing secret now: it is shown only once.
      </p>
      <Fields rows={[['signing_secret', <Mono><span data-field="destination-secret">{view.signing_secret}</span></Mono>]]} />
      <button type="button" class="secondary" onClick={onDismiss}>
        Done
      </button>
    </div>
  );
}

function stateCell(view: DestinationView) {
  const state = destinationState(view);
  return (
    <>
      <span data-field="destination-state" data-state={state}>
        <StatusBadge status={state} />
      </span>
      {view.state.held > 0 && (
        <span class="muted" data-field="destination-held">
          {' '}
          {view.state.held} waiting
        </span>
      )}
      {view.state.disabled_at && (
        <span class="muted">
          {' '}
          since <Time iso={view.state.disabled_at} />
          {view.id !== PRIMARY_DESTINATION_ID && '; saving its target again (Edit, Save) enables it'}
        </span>
      )}
    </>
  );
}

/** The list's columns; the last holds a row's buttons, disabled while `busy` names its destination. */
function destinationColumns({ busy, onEdit, onToggle, onDelete }: {
  busy: string | undefined;
  onEdit: (view: DestinationView) => void;
  onToggle: (view: DestinationView) => void;
  onDelete: (view: DestinationView) => void;
}): Column<DestinationView>[] {
  return [
    { head: 'ID', class: 'mono', column: 'id', cell: (view) => view.id },
    { head: 'Type', column: 'type', cell: (view) => view.type },
    { head: 'Target', class: 'mono clip', column: 'target', title: (view) => view.target ?? undefined, cell: (view) => view.target ?? <span class="muted">no push URL</span> },
    { head: 'Actions', column: 'actions', cell: (view) => (view.actions === null ? <span class="muted">every action</span> : view.actions.join(', ')) },
    { head: 'Filter', column: 'filter', cell: (view) => (view.filter === null ? <span class="muted">every message</span> : <Mono>{JSON.stringify(view.filter)}</Mono>) },
    { head: 'Options', class: 'muted', cell: optionsText },
    { head: 'Retry policy', class: 'muted', column: 'retry', cell: retryPolicyText },
    { head: 'State', column: 'state', cell: stateCell },
    {
      head: '',
      class: 'nowrap',
      cell: (view) => {
        const primary = view.id === PRIMARY_DESTINATION_ID;
        return (
          <span class="row-actions">
            <button type="button" class="secondary" disabled={busy === view.id} onClick={() => onEdit(view)} title={primary ? 'Its retry policy and deadline' : undefined}>
              Edit
            </button>
            <button type="button" disabled={busy === view.id} onClick={() => onToggle(view)}>
              {view.paused ? 'Resume' : 'Pause'}
            </button>
            {!primary && (
              <button type="button" class="secondary" disabled={busy === view.id} onClick={() => onDelete(view)}>
                Delete
              </button>
            )}
          </span>
        );
      },
    },
  ];
}

/**
 * An account's destinations (CONTRACT §11) for the console's account page and the portal's Destinations
 * page alike: listed with their health, added, edited, paused, resumed and deleted through `client`.
 * `scope` names whose destinations they are, so the list reloads when it changes.
 */
export function DestinationsPanel({ client, scope, primaryNote }: { client: DestinationsClient; scope: unknown; primaryNote?: string }) {
  const answer = useLoader(() => client.list(), [scope]);
  const [form, setForm] = useState<{ editing?: DestinationView } | null>(null);
  const [created, setCreated] = useState<DestinationView>();
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<ApiError>();
  const items = answer.data ?? [];
  const extra = items.filter((view) => view.id !== PRIMARY_DESTINATION_ID).length;

  const act = (view: DestinationView, call: (id: string) => Promise<unknown>): void => {
    setError(undefined);
    setBusy(view.id);
    call(view.id).then(
      () => {
        setBusy(undefined);
        answer.reload();
      },
      (refusal: unknown) => {
        setBusy(undefined);
        setError(refusal instanceof ApiError ? refusal : new ApiError(0, 'error', String(refusal)));
        answer.reload();
      },
    );
  };
  const columns = destinationColumns({
    busy,
    onEdit: (view) => {
      setCreated(undefined);
      setForm({ editing: view });
    },
    onToggle: (view) => act(view, view.paused ? client.resume : client.pause),
    onDelete: (view) => act(view, client.remove),
  });
  const saved = (view: DestinationView): void => {
    if (!form?.editing) setCreated(view.signing_secret ? view : undefined);
    setForm(null);
    answer.reload();
  };

  return (
    <Section
      title="Destinations"
      actions={
        !form && (
          <button type="button" onClick={() => setForm({})}>
            Add destination
          </button>
        )
      }
    >
      <p class="muted">
        Where this account's events go besides its push URL: webhooks, RabbitMQ, NATS JetStream or MQTT, each with its own secret, retries and
        state ({extra} of {MAX_DESTINATIONS_PER_ACCOUNT}). {primaryNote}
      </p>
      {created && <NewSecret view={created} onDismiss={() => setCreated(undefined)} />}
      {form?.editing?.id === PRIMARY_DESTINATION_ID && (
        <RetryPolicyForm
          key={PRIMARY_DESTINATION_ID}
          current={form.editing}
          save={(change) => client.update(PRIMARY_DESTINATION_ID, change)}
          onSaved={saved}
          onCancel={() => setForm(null)}
        />
      )}
      {form && form.editing?.id !== PRIMARY_DESTINATION_ID && (
        <DestinationForm
          key={form.editing?.id ?? 'new'}
          current={form.editing}
          save={(change) => (form.editing ? client.update(form.editing.id, change) : client.create(change))}
          onSaved={saved}
          onCancel={() => setForm(null)}
        />
      )}
      <ErrorMessage error={answer.error ?? error} />
      <ListOrEmpty loaded={answer.data !== undefined} count={items.length} empty="No destination.">
        <DataTable class="grid destinations" columns={columns} items={items} rowKey={(view) => view.id} idAttribute="data-destination-id" />
      </ListOrEmpty>
    </Section>
  );
}
