import { useEffect, useState } from 'preact/hooks';
import { isoToLocalInput, localInputToIso } from '../lib/format';

export interface FilterField {
  name: string;
  label: string;
  kind: 'text' | 'number' | 'select' | 'time';
  options?: readonly string[];
  placeholder?: string;
  wide?: boolean;
}

export type FilterValues = Record<string, string>;

/** The time-range filters of every log, under the names the APIs take. */
export const TIME_RANGE: FilterField[] = [
  { name: 'since', label: 'Since', kind: 'time' },
  { name: 'until', label: 'Until', kind: 'time' },
];

/** Form values as the inputs show them (times in local time) from URL values (times in ISO-8601 UTC). */
function toInputs(fields: FilterField[], values: FilterValues): FilterValues {
  return Object.fromEntries(fields.map((field) => [field.name, field.kind === 'time' ? isoToLocalInput(values[field.name] ?? '') : (values[field.name] ?? '')]));
}

function fromInputs(fields: FilterField[], inputs: FilterValues): FilterValues {
  return Object.fromEntries(
    fields.map((field) => [field.name, field.kind === 'time' ? localInputToIso(inputs[field.name] ?? '') : (inputs[field.name] ?? '').trim()]),
  );
}

/**
 * A row of labelled filters. The applied values live in the URL (the caller passes them in and gets
 * the new ones on submit); this form only holds what is being typed.
 */
export function FilterForm({ fields, values, onApply, submitLabel = 'Search' }: {
  fields: FilterField[];
  values: FilterValues;
  onApply: (values: FilterValues) => void;
  submitLabel?: string;
}) {
  const [inputs, setInputs] = useState(() => toInputs(fields, values));
  const key = JSON.stringify(values);
  // Re-synced only when the applied values change (Back/Forward, a link), not while typing.
  useEffect(() => setInputs(toInputs(fields, values)), [key]);
  const submit = (event: Event): void => {
    event.preventDefault();
    onApply(fromInputs(fields, inputs));
  };
  const clear = (): void => onApply(Object.fromEntries(fields.map((field) => [field.name, ''])));
  const set = (name: string) => (event: Event) => setInputs({ ...inputs, [name]: (event.currentTarget as HTMLInputElement).value });
  return (
    <form class="filters" onSubmit={submit}>
      {fields.map((field) => {
        const id = `filter-${field.name}`;
        return (
          <div class={field.wide ? 'field wide' : 'field'} key={field.name}>
            <label for={id}>{field.label}</label>
            {field.kind === 'select' ? (
              <select id={id} name={field.name} value={inputs[field.name]} onChange={set(field.name)}>
                <option value="">any</option>
                {field.options?.map((option) => (
                  <option key={option} value={option}>
                    {option}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                name={field.name}
                type={field.kind === 'time' ? 'datetime-local' : field.kind === 'number' ? 'number' : 'text'}
                min={field.kind === 'number' ? 1 : undefined}
                placeholder={field.placeholder}
                value={inputs[field.name]}
                onInput={set(field.name)}
                autocomplete="off"
              />
            )}
          </div>
        );
      })}
      <div class="field buttons">
        <button type="submit">{submitLabel}</button>
        <button type="button" class="secondary" onClick={clear}>
          Clear
        </button>
      </div>
    </form>
  );
}
