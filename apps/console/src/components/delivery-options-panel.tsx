import { useState } from 'preact/hooks';
import type { ApiError } from '../api/client';
import { DELIVERY_ORDERINGS, type DeliveryOptions, type DeliveryOrdering } from '@app/payloads/admin-api.types';
import { ErrorMessage, Fields, Section } from './bits';
import { PaceField, SelectField, SubmitRow } from './form-fields';

const ORDERING_MEANING: Record<DeliveryOrdering, string> = {
  none: 'none (events are called as soon as they can be)',
  subject: 'subject (one call at a time per customer, organization, sub-session or conversation, in accepted order)',
};

const paceText = (maxPerSecond: number | null): string => (maxPerSecond === null ? 'no limit' : `${maxPerSecond} calls per second`);

/**
 * The endpoint's delivery options (ordering, max_per_second) and a form to change them, for the console
 * (admin API) and the account portal (portal API) alike: each passes its own `save`. An empty pace field
 * means no limit (null); the server checks every value again and its refusal is shown as sent.
 */
export function DeliveryOptionsPanel({
  current,
  save: store,
  onChanged,
}: {
  current: DeliveryOptions;
  save: (change: DeliveryOptions) => Promise<unknown>;
  onChanged: () => void;
}) {
  const [ordering, setOrdering] = useState<string>(current.ordering);
  const [pace, setPace] = useState(current.max_per_second === null ? '' : String(current.max_per_second));
  const [error, setError] = useState<ApiError>();
  const [saved, setSaved] = useState(false);
  const save = (event: Event): void => {
    event.preventDefault();
    setError(undefined);
    setSaved(false);
    const change = { ordering: ordering as DeliveryOrdering, max_per_second: pace.trim() === '' ? null : Number(pace) };
    store(change).then(() => {
      setSaved(true);
      onChanged();
    }, setError);
  };
  return (
    <Section title="Delivery options">
      <Fields
        rows={[
          ['Ordering', <span data-field="ordering">{ORDERING_MEANING[current.ordering]}</span>],
          ['Max per second', <span data-field="max-per-second">{paceText(current.max_per_second)}</span>],
        ]}
      />
      <form class="filters" onSubmit={save} aria-label="Delivery options">
        <SelectField id="delivery-ordering" label="Ordering" value={ordering} values={DELIVERY_ORDERINGS} onChange={(event) => setOrdering(event.currentTarget.value)} />
        <PaceField id="delivery-max-per-second" value={pace} onInput={(event) => setPace(event.currentTarget.value)} />
        <SubmitRow label="Save delivery options" />
      </form>
      {saved && (
        <p class="muted" role="status">
          Saved; the workers apply them to the next call.
        </p>
      )}
      <ErrorMessage error={error} />
    </Section>
  );
}
