import { useState } from 'preact/hooks';
import { revokePreviousSecret, rotateSecret, rotateToken } from '../api/admin';
import type { ApiError } from '../api/client';
import type { AccountView } from '@app/payloads/admin-api.types';
import { ErrorMessage, Fields, Mono, Section, Time } from '../components/bits';

type Action = 'rotate-secret' | 'revoke-previous-secret' | 'rotate-token';

/** What each button does, said before it is done: each one breaks an integration that is not told. */
const ACTIONS: Record<Action, { button: string; warning: string }> = {
  'rotate-secret': {
    button: 'Rotate secret',
    warning: 'A new signing secret signs callbacks from now on; the current one keeps signing beside it for 24 hours.',
  },
  'revoke-previous-secret': {
    button: 'Revoke previous secret',
    warning: 'The previous signing secret stops signing at once: receivers still checking it reject every callback.',
  },
  'rotate-token': {
    button: 'Rotate Open API token',
    warning: 'The current Open API token is refused at once: the API user must switch to the new one.',
  },
};

/** A credential the API answered: shown this once, it is never returned again. */
type Revealed = { name: 'signing_secret' | 'open_api_token'; value: string };

export function AccountCredentials({ account, onChanged }: { account: AccountView; onChanged: () => void }) {
  const [confirming, setConfirming] = useState<Action>();
  const [revealed, setRevealed] = useState<Revealed>();
  const [error, setError] = useState<ApiError>();

  const run = (action: Action): void => {
    setError(undefined);
    setConfirming(undefined);
    setRevealed(undefined);
    const done =
      action === 'rotate-secret'
        ? rotateSecret(account.id).then((answer) => setRevealed({ name: 'signing_secret', value: answer.signing_secret }))
        : action === 'rotate-token'
          ? rotateToken(account.id).then((answer) => setRevealed({ name: 'open_api_token', value: answer.open_api_token }))
          : revokePreviousSecret(account.id).then(() => undefined);
    done.then(onChanged, setError);
  };

  const available = (Object.keys(ACTIONS) as Action[]).filter((action) => action !== 'revoke-previous-secret' || account.previous_secret_expires_at);
  return (
    <Section
      title="Credentials"
      actions={
        <span class="actions">
          {available.map((action) => (
            <button key={action} type="button" onClick={() => setConfirming(action)}>
              {ACTIONS[action].button}
            </button>
          ))}
        </span>
      }
    >
      <Fields rows={[['Previous secret signs until', <Time iso={account.previous_secret_expires_at} />]]} />
      {confirming && (
        <div class="confirm" role="alertdialog" aria-label={ACTIONS[confirming].button}>
          <p>{ACTIONS[confirming].warning}</p>
          <button type="button" onClick={() => run(confirming)}>
            Confirm: {ACTIONS[confirming].button}
          </button>{' '}
          <button type="button" onClick={() => setConfirming(undefined)}>
            Cancel
          </button>
        </div>
      )}
      {revealed && (
        <div class="secrets" role="status">
          <p>Copy this now: it is shown only once.</p>
          <Fields rows={[[revealed.name, <Mono>{revealed.value}</Mono>]]} />
        </div>
      )}
      <ErrorMessage error={error} />
    </Section>
  );
}
