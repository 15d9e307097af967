import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { MAX_PER_SECOND_MAX, MAX_PER_SECOND_MIN } from '@app/payloads/admin-api.types';
import { ApiError } from '../api/client';
import { ErrorMessage } from './bits';

/** What an input or select hands its change handler. */
type ValueEvent = { currentTarget: { value: string } };

/** A labelled select of `values`. `invalid` (absent: not marked) flags the field the server named. */
export function SelectField({ id, label, value, values, invalid, onChange }: {
  id: string;
  label: string;
  value: string;
  values: readonly string[];
  invalid?: boolean;
  onChange: (event: ValueEvent) => void;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} aria-invalid={invalid} onChange={onChange}>
        {values.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The pace limit (max_per_second) of an endpoint or a destination, within the server's bounds; empty means no limit. */
export function PaceField({ id, value, invalid, onInput }: { id: string; value: string; invalid?: boolean; onInput: (event: ValueEvent) => void }) {
  return (
    <div class="field">
      <label for={id}>Max per second</label>
      <input id={id} type="number" min={MAX_PER_SECOND_MIN} max={MAX_PER_SECOND_MAX} step={1} placeholder="no limit" value={value} aria-invalid={invalid} onInput={onInput} />
    </div>
  );
}

/** A form's submit button, with what goes beside it (`children`). */
export function SubmitRow({ label, disabled, children }: { label: string; disabled?: boolean; children?: ComponentChildren }) {
  return (
    <div class="field buttons">
      <button type="submit" disabled={disabled}>
        {label}
      </button>
      {children}
    </div>
  );
}

/** The end of a destination's edit forms: Save (off while saving), Cancel, and the server's refusal. */
export function SaveOrCancel({ saving, error, onCancel }: { saving: boolean; error: ApiError | undefined; onCancel: () => void }) {
  return (
    <>
      <SubmitRow label="Save" disabled={saving}>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </SubmitRow>
      <ErrorMessage error={error} />
    </>
  );
}

/** Sends a form's change through `save`: `onSaved` gets the API's answer, a refusal is kept in `error` to show. */
export function useSaving<C, V>(save: (change: C) => Promise<V>, onSaved: (view: V) => void) {
  const [error, setError] = useState<ApiError>();
  const [saving, setSaving] = useState(false);
  const send = (change: C): void => {
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
  return { error, setError, saving, send };
}
