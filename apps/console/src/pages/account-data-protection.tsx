import { useState } from 'preact/hooks';
import { deleteAccount, erasure, setRedaction, startErasure } from '../api/admin';
import type { ApiError } from '../api/client';
import type { AccountView } from '@app/payloads/admin-api.types';
import { SUBJECT_KINDS } from '@app/payloads/data-protection.types';
import { ErrorMessage, Mono, Section } from '../components/bits';
import { SubmitRow } from '../components/form-fields';
import { useInterval, useLoader } from '../lib/use-loader';
import { link, navigate } from '../router';

/* CONTRACT §12 on the account page: erase a subject, redaction fields, delete the account. */

function ErasureProgress({ erasureId }: { erasureId: string }) {
  const task = useLoader(() => erasure(erasureId), [erasureId]);
  const running = !task.data || task.data.status === 'running';
  useInterval(task.reload, 1000, running && !task.error);
  return (
    <p class="task" role="status" data-erasure-status={task.data?.status ?? 'running'}>
      {running ? 'Erasing: ' : 'Done: '}
      <span data-field="events-erased">{task.data?.events_erased ?? 0}</span> events erased
      <span class="muted mono"> erasure {erasureId}</span>
      <ErrorMessage error={task.error} />
    </p>
  );
}

function EraseSubject({ accountId }: { accountId: number }) {
  const [subject, setSubject] = useState('');
  const [confirming, setConfirming] = useState<string>();
  const [started, setStarted] = useState<string>();
  const [error, setError] = useState<ApiError>();
  const erase = (): void => {
    const chosen = confirming ?? '';
    setConfirming(undefined);
    setError(undefined);
    startErasure({ subject: chosen, account_id: accountId }).then((answer) => setStarted(answer.id), setError);
  };
  return (
    <Section title="Erase a subject">
      <p class="muted">
        Every stored event of this account about the subject ({SUBJECT_KINDS.map((kind) => `${kind}:<id>`).join(', ')}) loses its message and its attempts'
        bodies; a delivery still pending for it is never sent. Ids, actions, times and statuses stay.
      </p>
      <form
        class="filters"
        aria-label="Erase a subject"
        onSubmit={(event) => {
          event.preventDefault();
          setConfirming(subject.trim());
        }}
      >
        <div class="field">
          <label for="erase-subject">Subject</label>
          <input id="erase-subject" placeholder="customer:10086" value={subject} onInput={(event) => setSubject(event.currentTarget.value)} />
        </div>
        <SubmitRow label="Erase subject" />
      </form>
      {confirming !== undefined && (
        <div class="confirm" role="alertdialog" aria-label="Erase subject">
          <p>
            Erase every stored event of <Mono>{confirming}</Mono> of this account? This cannot be undone.
          </p>
          <button type="button" onClick={erase}>
            Confirm: Erase subject
          </button>{' '}
          <button type="button" onClick={() => setConfirming(undefined)}>
            Cancel
          </button>
        </div>
      )}
      {started && <ErasureProgress erasureId={started} />}
      <ErrorMessage error={error} />
    </Section>
  );
}

function RedactionFields({ account, onChanged }: { account: AccountView; onChanged: () => void }) {
  const [text, setText] = useState(account.redaction_fields.join(', '));
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<ApiError>();
  const save = (event: Event): void => {
    event.preventDefault();
    setError(undefined);
    setSaved(false);
    const fields = text
      .split(',')
      .map((field) => field.trim())
      .filter((field) => field !== '');
    setRedaction(account.id, fields).then(() => {
      setSaved(true);
      onChanged();
    }, setError);
  };
  return (
    <Section title="Redaction fields">
      <p class="muted">
        Callbacks still carry these keys; once an event has ended, the stored message and request bodies hold "[redacted]" for every key of these names, at
        any depth. Now: <span data-field="redaction-fields">{account.redaction_fields.length === 0 ? 'none' : account.redaction_fields.join(', ')}</span>
      </p>
      <form class="filters" onSubmit={save} aria-label="Redaction fields">
        <div class="field">
          <label for="redaction-fields">Key names (comma-separated)</label>
          <input id="redaction-fields" placeholder="cellphone, email" value={text} onInput={(event) => setText(event.currentTarget.value)} />
        </div>
        <SubmitRow label="Save redaction fields" />
      </form>
      {saved && (
        <p class="muted" role="status">
          Saved; events that ended already are redacted in the background.
        </p>
      )}
      <ErrorMessage error={error} />
    </Section>
  );
}

function DeleteAccount({ account }: { account: AccountView }) {
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<ApiError>();
  const remove = (): void => {
    setError(undefined);
    deleteAccount(account.id).then(() => navigate(link('/accounts', { deleted: account.id })), setError);
  };
  return (
    <Section title="Delete account">
      <p class="muted">
        Its Open API token, portal sessions and links, bot webhooks and callbacks stop at once; its events and attempts are deleted in the background, then
        the account, which frees its email.
      </p>
      {!confirming && (
        <button type="button" onClick={() => setConfirming(true)}>
          Delete account
        </button>
      )}
      {confirming && (
        <div class="confirm" role="alertdialog" aria-label="Delete account">
          <p>
            Type the account's email, <Mono>{account.email}</Mono>, to delete it and everything it stored. This cannot be undone.
          </p>
          <label for="delete-email">Email</label> <input id="delete-email" value={typed} onInput={(event) => setTyped(event.currentTarget.value)} />{' '}
          <button type="button" disabled={typed.trim().toLowerCase() !== account.email.toLowerCase()} onClick={remove}>
            Confirm: Delete account
          </button>{' '}
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      )}
      <ErrorMessage error={error} />
    </Section>
  );
}

export function AccountDataProtection({ account, onChanged }: { account: AccountView; onChanged: () => void }) {
  return (
    <>
      <EraseSubject accountId={account.id} />
      <RedactionFields account={account} onChanged={onChanged} />
      <DeleteAccount account={account} />
    </>
  );
}
