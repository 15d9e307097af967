import { useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import type { DestinationChange, DestinationView } from '../api/destinations';
import { ErrorMessage } from './bits';
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
  const [error, setError] = useState<ApiError>();
  const [saving, setSaving] = useState(false);

  const submit = (event: Event): void => {
    event.preventDefault();
    setError(undefined);
    const change = retryChangeOf(draft, current);
    if (Object.keys(change).length === 0) {
      onSaved(current);
      return;
    }
    setSaving(true);
    save(change).then(
      (view) => {
        setSaving(false);
        onSaved(view);
      },
      (refusal: unknown) => {
        setSaving(false);
        setError(refusal instanceof ApiError ? refusal : new ApiError(0, 'error', String(refusal)));
      },
    );
  };

  return (
    <form class="filters destination-form" onSubmit={submit} aria-label={`Retry policy of ${current.id}`}>
      <RetryPolicyFields draft={draft} error={error} idPrefix="primary-retry" onChange={setDraft} />
      <div class="field buttons">
        <button type="submit" disabled={saving}>
          Save
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}
