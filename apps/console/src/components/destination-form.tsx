import { CONTENT_TYPE_FORM, CONTENT_TYPE_JSON } from '@app/payloads/actions';
import { DELIVERY_ORDERINGS } from '@app/payloads/admin-api.types';
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { DESTINATION_FORMATS, DESTINATION_TYPES, type DestinationChange, type DestinationType, type DestinationView } from '../api/destinations';
import { authChange, type AuthDraft, DestinationAuthFields, initialAuth } from './destination-auth-fields';
import { PaceField, SaveOrCancel, SelectField, useSaving } from './form-fields';
import { type RetryDraft, retryChangeOf, retryDraftOf, RetryPolicyFields } from './retry-policy-fields';

interface Draft {
  type: DestinationType;
  target: string;
  actions: string;
  content_type: string;
  format: string;
  ordering: string;
  max_per_second: string;
  filter: string;
  auth: AuthDraft;
  retry: RetryDraft;
}

const DEFAULTS: DestinationView = {
  id: '',
  type: 'webhook',
  target: '',
  actions: null,
  filter: null,
  content_type: CONTENT_TYPE_JSON,
  format: 'udesk',
  auth: null,
  ordering: 'none',
  max_per_second: null,
  paused: false,
  retry: { schedule: [], stop_on: [], disable_on: [] },
  expire_after: null,
  state: { breaker: 'closed', disabled_at: null, held: 0 },
};

function draftOf(view: DestinationView): Draft {
  return {
    type: view.type,
    target: view.target ?? '',
    actions: (view.actions ?? []).join(', '),
    content_type: view.content_type,
    format: view.format,
    ordering: view.ordering,
    max_per_second: view.max_per_second === null ? '' : String(view.max_per_second),
    filter: view.filter === null ? '' : JSON.stringify(view.filter, null, 2),
    auth: initialAuth(view.auth),
    retry: retryDraftOf(view),
  };
}

/** "a, b" → ['a', 'b']; nothing typed → null (every action). Names hold no comma, so a mistyped one reaches the server whole and is named back. */
function actionList(text: string): string[] | null {
  const actions = text
    .split(/[,\n]/)
    .map((action) => action.trim())
    .filter((action) => action !== '');
  return actions.length > 0 ? actions : null;
}

function filterValue(text: string): Record<string, unknown> | null {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new ApiError(0, 'invalid', `filter: not valid JSON (${error instanceof Error ? error.message : String(error)})`, [{ path: 'filter' }]);
  }
}

const same = (left: unknown, right: unknown): boolean => JSON.stringify(left) === JSON.stringify(right);

/**
 * Only what differs from `base` (a new destination's defaults, or the stored view): an edit keeps what it
 * does not send, so a target shown with `***` for its password is sent only when the user changed it.
 */
function changeOf(draft: Draft, base: DestinationView, creating: boolean): DestinationChange {
  const change: DestinationChange = {};
  if (creating || draft.type !== base.type) change.type = draft.type;
  // A target sent again re-enables a disabled destination (as set_url does the primary), unless it shows
  // `***`: sending that back would replace the password, so the user types the whole target again.
  const enabling = base.state.disabled_at !== null && !draft.target.includes('***');
  if (creating || enabling || draft.target !== (base.target ?? '')) change.target = draft.target.trim();
  const actions = actionList(draft.actions);
  if (!same(actions, base.actions)) change.actions = actions;
  const filter = filterValue(draft.filter);
  if (!same(filter, base.filter)) change.filter = filter;
  // Only webhooks send a form body: a broker's is JSON, so a webhook turned broker goes back to JSON.
  const contentType = draft.type === 'webhook' ? draft.content_type : CONTENT_TYPE_JSON;
  if (contentType !== base.content_type) change.content_type = contentType;
  if (draft.format !== base.format) change.format = draft.format;
  if (draft.ordering !== base.ordering) change.ordering = draft.ordering;
  const pace = draft.max_per_second.trim() === '' ? null : Number(draft.max_per_second);
  if (pace !== base.max_per_second) change.max_per_second = pace;
  // Brokers take no auth (their credentials ride in the target): a webhook turned broker drops it.
  const auth = draft.type === 'webhook' ? authChange(draft.auth, base.auth !== null) : base.auth !== null ? null : undefined;
  if (auth !== undefined) change.auth = auth;
  return { ...change, ...retryChangeOf(draft.retry, base, creating) };
}

/** Whether the API's refusal names `field` (its details' paths), so that input is marked invalid. */
function namedIn(error: ApiError | undefined, field: string): boolean {
  return (error?.details ?? []).some((detail) => detail.path === field || (detail.path ?? '').startsWith(`${field}.`) || (detail.path ?? '').startsWith(`${field}[`));
}

/** Adds a destination (`current` absent) or edits one; `onSaved` gets the API's view of it. */
export function DestinationForm({ current, save, onSaved, onCancel }: {
  current?: DestinationView;
  save: (change: DestinationChange) => Promise<DestinationView>;
  onSaved: (view: DestinationView) => void;
  onCancel: () => void;
}) {
  const creating = current === undefined;
  const base = current ?? DEFAULTS;
  const [draft, setDraft] = useState<Draft>(() => draftOf(base));
  const { error, setError, saving, send } = useSaving(save, onSaved);
  const set = (field: keyof Draft) => (event: { currentTarget: { value: string } }) => setDraft({ ...draft, [field]: event.currentTarget.value });
  const invalid = (field: string): boolean => namedIn(error, field);

  const submit = (event: Event): void => {
    event.preventDefault();
    setError(undefined);
    let change: DestinationChange;
    try {
      change = changeOf(draft, base, creating);
    } catch (problem) {
      setError(problem as ApiError);
      return;
    }
    if (!creating && Object.keys(change).length === 0) {
      onSaved(base);
      return;
    }
    send(change);
  };

  return (
    <form class="filters destination-form" onSubmit={submit} aria-label={creating ? 'New destination' : `Edit destination ${base.id}`}>
      <SelectField id="destination-type" label="Type" value={draft.type} values={DESTINATION_TYPES} invalid={invalid('type')} onChange={set('type')} />
      <div class="field wide">
        <label for="destination-target">Target</label>
        <input id="destination-target" type="text" required value={draft.target} placeholder={placeholderOf(draft.type)} aria-invalid={invalid('target')} onInput={set('target')} />
      </div>
      <div class="field wide">
        <label for="destination-actions">Actions</label>
        <input id="destination-actions" type="text" value={draft.actions} placeholder="every action" aria-invalid={invalid('actions')} onInput={set('actions')} />
      </div>
      <details class="more-options" open={!creating || (error?.details ?? []).length > 0}>
        <summary>More options</summary>
        <div class="filters">
          {draft.type === 'webhook' && (
            <SelectField
              id="destination-content-type"
              label="Content type"
              value={draft.content_type}
              values={[CONTENT_TYPE_JSON, CONTENT_TYPE_FORM]}
              invalid={invalid('content_type')}
              onChange={set('content_type')}
            />
          )}
          <SelectField id="destination-format" label="Format" value={draft.format} values={DESTINATION_FORMATS} invalid={invalid('format')} onChange={set('format')} />
          <SelectField id="destination-ordering" label="Ordering" value={draft.ordering} values={DELIVERY_ORDERINGS} invalid={invalid('ordering')} onChange={set('ordering')} />
          <PaceField id="destination-max-per-second" value={draft.max_per_second} invalid={invalid('max_per_second')} onInput={set('max_per_second')} />
          <div class="field wide">
            <label for="destination-filter">Filter</label>
            <textarea id="destination-filter" rows={3} value={draft.filter} placeholder='{"customer.level": "vip"}' aria-invalid={invalid('filter')} onInput={set('filter')} />
          </div>
          <RetryPolicyFields draft={draft.retry} error={error} idPrefix="destination" creating={creating} onChange={(retry) => setDraft({ ...draft, retry })} />
          {draft.type === 'webhook' && <DestinationAuthFields draft={draft.auth} current={base.auth} invalid={invalid} onChange={(auth) => setDraft({ ...draft, auth })} />}
        </div>
      </details>
      <SaveOrCancel saving={saving} error={error} onCancel={onCancel} />
    </form>
  );
}

function placeholderOf(type: DestinationType): string {
  switch (type) {
    case 'rabbitmq':
      return 'amqp://user:pass@host:5672/vhost?exchange=X&routing_key=K';
    case 'nats':
      return 'nats://host:4222/subject';
    case 'mqtt':
      return 'mqtt://host:1883/topic';
    default:
      return 'https://…';
  }
}
