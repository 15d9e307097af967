import { useState } from 'preact/hooks';
import type { DestinationChange, DestinationView } from '../api/destinations';
import { SaveOrCancel, useSaving } from './form-fields';
import { type RetryDraft, retryChangeOf, retryDraftOf, RetryPolicyFields } from './retry-policy-fields';

/**
 * The primary's retry policy and deadline (CONTRACT §13): the one part of the push URL's settings edited
 * as a destination (`PUT …/destinations/primary`); its URL, content type and delivery options have their
 * own forms.
 */
export function RetryPolicyForm({ current, save, onSaved, onCancel }: {
  current: DestinationView;
  save: (change: DestinationChange) => Promise<DestinationView>;
  onSaved: (view: DestinationView) => void;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState<RetryDraft>(() => retryDraftOf(current));
  const { error, setError, saving, send } = useSaving(save, onSaved);

  const submit = (event: Event): void => {
    event.preventDefault();
    setError(undefined);
    const change = retryChangeOf(draft, current);
    if (Object.keys(change).length === 0) {
      onSaved(current);
      return;
    }
    send(change);
  };

  return (
    <form class="filters destination-form" onSubmit={submit} aria-label={`Retry policy of ${current.id}`}>
      <RetryPolicyFields draft={draft} error={error} idPrefix="primary-retry" onChange={setDraft} />
      <SaveOrCancel saving={saving} error={error} onCancel={onCancel} />
    </form>
  );
}
