import { DESTINATION_AUTH_TYPES, type DestinationAuthInput, type DestinationAuthType } from '../api/destinations';

/**
 * A webhook destination's `auth` (CONTRACT §11). The API never shows its credentials back, only its
 * type, so an edit leaves it alone ("keep") unless the user picks a type and types it again, or "none".
 */
export type AuthChoice = 'keep' | 'none' | DestinationAuthType;

export interface AuthDraft {
  choice: AuthChoice;
  values: Record<string, string>;
}

const INPUTS: Record<DestinationAuthType, { key: string; label: string; optional?: boolean; secret?: boolean; pem?: boolean }[]> = {
  header: [
    { key: 'name', label: 'Header name' },
    { key: 'value', label: 'Header value', secret: true },
  ],
  oauth2: [
    { key: 'token_url', label: 'Token URL' },
    { key: 'client_id', label: 'Client id' },
    { key: 'client_secret', label: 'Client secret', secret: true },
    { key: 'scope', label: 'Scope', optional: true },
  ],
  mtls: [
    { key: 'certificate', label: 'Certificate (PEM)', pem: true },
    { key: 'private_key', label: 'Private key (PEM)', pem: true, secret: true },
    { key: 'ca', label: 'CA (PEM)', pem: true, optional: true },
  ],
};

export function initialAuth(current: { type: DestinationAuthType } | null | undefined): AuthDraft {
  return { choice: current ? 'keep' : 'none', values: {} };
}

/** What to send: undefined leaves the stored auth as it is; null removes it. */
export function authChange(draft: AuthDraft, hadAuth: boolean): DestinationAuthInput | null | undefined {
  if (draft.choice === 'keep') return undefined;
  if (draft.choice === 'none') return hadAuth ? null : undefined;
  const fields: Record<string, string> = {};
  for (const input of INPUTS[draft.choice]) {
    const value = draft.values[input.key] ?? '';
    // Optional fields left empty are not sent; required ones are, so the server names a missing one.
    if (value !== '' || !input.optional) fields[input.key] = value;
  }
  return { type: draft.choice, ...fields } as DestinationAuthInput;
}

export function DestinationAuthFields({ draft, current, invalid, onChange }: {
  draft: AuthDraft;
  current: { type: DestinationAuthType } | null | undefined;
  invalid: (field: string) => boolean;
  onChange: (draft: AuthDraft) => void;
}) {
  const choices: AuthChoice[] = [...(current ? (['keep'] as const) : []), 'none', ...DESTINATION_AUTH_TYPES];
  return (
    <>
      <div class="field">
        <label for="destination-auth">Auth</label>
        <select
          id="destination-auth"
          value={draft.choice}
          aria-invalid={invalid('auth')}
          onChange={(event) => onChange({ choice: event.currentTarget.value as AuthChoice, values: {} })}
        >
          {choices.map((choice) => (
            <option key={choice} value={choice}>
              {choice === 'keep' ? `keep (${current?.type ?? ''})` : choice}
            </option>
          ))}
        </select>
      </div>
      {draft.choice !== 'keep' &&
        draft.choice !== 'none' &&
        INPUTS[draft.choice].map((input) => {
          const id = `destination-auth-${input.key}`;
          const props = {
            id,
            value: draft.values[input.key] ?? '',
            placeholder: input.optional ? 'optional' : undefined,
            autocomplete: 'off',
            'aria-invalid': invalid(`auth.${input.key}`) || invalid(input.key),
            onInput: (event: { currentTarget: HTMLInputElement | HTMLTextAreaElement }) =>
              onChange({ ...draft, values: { ...draft.values, [input.key]: event.currentTarget.value } }),
          };
          return (
            <div key={input.key} class={input.pem ? 'field wide' : 'field'}>
              <label for={id}>{input.label}</label>
              {input.pem ? <textarea rows={4} {...props} /> : <input type={input.secret ? 'password' : 'text'} {...props} />}
            </div>
          );
        })}
    </>
  );
}
