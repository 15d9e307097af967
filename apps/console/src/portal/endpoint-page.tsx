import { EVENT_ACTIONS, PERMISSION_KEYS } from '@app/payloads/actions';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from '../api/client';
import { ErrorMessage, Fields, Mono, Section, Time } from '../components/bits';
import { DeliveryOptionsPanel } from '../components/delivery-options-panel';
import { SelectField, SubmitRow } from '../components/form-fields';
import { Link } from '../components/link';
import { useLoader } from '../lib/use-loader';
import { enableEndpoint, health, type PortalSettings, rotateSecret, saveSettings, sendTestEvent, settings } from './portal-api';
import { portalLink } from './portal-router';

const CONTENT_TYPES = ['JSON', 'application/x-www-form-urlencoded'];

function SettingsForm({ current, onSaved }: { current: PortalSettings; onSaved: () => void }) {
  const [draft, setDraft] = useState(current);
  const [error, setError] = useState<ApiError>();
  const [saved, setSaved] = useState(false);
  // "Saved." shows once the reloaded settings are in the form: shown earlier, what the user typed next
  // was overwritten when the reload landed (the portal e2e caught it).
  const confirmOnReload = useRef(false);
  useEffect(() => {
    setDraft(current);
    if (confirmOnReload.current) {
      confirmOnReload.current = false;
      setSaved(true);
    }
  }, [current]);
  const submit = (event: Event): void => {
    event.preventDefault();
    setError(undefined);
    setSaved(false);
    const changes: Partial<PortalSettings> = { push_content_type: draft.push_content_type, permissions: draft.permissions };
    if (draft.push_url) changes.push_url = draft.push_url;
    saveSettings(changes).then(() => {
      confirmOnReload.current = true;
      onSaved();
    }, setError);
  };
  return (
    <form class="filters settings" onSubmit={submit}>
      <div class="field wide">
        <label for="push-url">Push URL</label>
        <input id="push-url" type="url" value={draft.push_url ?? ''} placeholder="https://…" onInput={(event) => setDraft({ ...draft, push_url: event.currentTarget.value })} />
      </div>
      <SelectField
        id="content-type"
        label="Content type"
        value={draft.push_content_type}
        values={CONTENT_TYPES}
        onChange={(event) => setDraft({ ...draft, push_content_type: event.currentTarget.value })}
      />
      <fieldset class="permissions">
        <legend>Events to receive</legend>
        {PERMISSION_KEYS.map((key) => (
          <label key={key} class="check">
            <input
              type="checkbox"
              name={key}
              checked={draft.permissions[key]}
              onChange={(event) => setDraft({ ...draft, permissions: { ...draft.permissions, [key]: event.currentTarget.checked } })}
            />{' '}
            {key}
          </label>
        ))}
      </fieldset>
      <SubmitRow label="Save settings">{saved && <span class="ok" role="status">Saved.</span>}</SubmitRow>
      <ErrorMessage error={error} />
    </form>
  );
}

function EndpointState({ onChange }: { onChange: () => void }) {
  const answer = useLoader(() => {
    const until = new Date();
    return health({ since: new Date(until.getTime() - 3_600_000).toISOString(), until: until.toISOString(), bucket: '1h' });
  }, []);
  const [error, setError] = useState<ApiError>();
  const state = answer.data?.state;
  const enable = (): void => {
    setError(undefined);
    enableEndpoint().then(() => {
      answer.reload();
      onChange();
    }, setError);
  };
  return (
    <Section title="State" actions={state?.disabled_at ? <button type="button" onClick={enable}>Enable</button> : undefined}>
      <ErrorMessage error={answer.error ?? error} />
      {state && (
        <Fields
          rows={[
            ['Calls', <span data-field="endpoint-state">{state.disabled_at ? 'disabled' : state.push_url ? 'enabled' : 'no push URL'}</span>],
            ['Disabled since', <Time iso={state.disabled_at} />],
            ['Why', state.disabled_reason],
            ['Circuit breaker', state.endpoint ? `${state.endpoint.state} (${state.endpoint.consecutive_failures} failures in a row)` : null],
          ]}
        />
      )}
    </Section>
  );
}

function RotateSecret() {
  const [secret, setSecret] = useState<string>();
  const [error, setError] = useState<ApiError>();
  const rotate = (): void => {
    setError(undefined);
    rotateSecret().then((answer) => setSecret(answer.signing_secret), setError);
  };
  return (
    <Section title="Signing secret" actions={<button type="button" onClick={rotate}>Rotate secret</button>}>
      <ErrorMessage error={error} />
      {secret ? (
        <p role="status">
          Your new signing secret, shown this once: <Mono><span data-field="new-secret">{secret}</span></Mono>. The previous secret keeps signing for 24 hours.
        </p>
      ) : (
        <p class="muted">Rotating makes a new secret; the previous one keeps signing alongside it for 24 hours.</p>
      )}
    </Section>
  );
}

function TestEvent() {
  const [action, setAction] = useState<string>(EVENT_ACTIONS[0]);
  const [sent, setSent] = useState<string>();
  const [error, setError] = useState<ApiError>();
  const send = (event: Event): void => {
    event.preventDefault();
    setError(undefined);
    sendTestEvent(action).then((answer) => setSent(answer.event_id), setError);
  };
  return (
    <Section title="Test event">
      <form class="filters" onSubmit={send}>
        <SelectField id="test-action" label="Action" value={action} values={EVENT_ACTIONS} onChange={(event) => setAction(event.currentTarget.value)} />
        <SubmitRow label="Send test event" />
      </form>
      <ErrorMessage error={error} />
      {sent && (
        <p role="status">
          Sent <Link class="mono" href={portalLink('event', { id: sent })}>{sent}</Link>: it is delivered like any event, even when its permission is off.
        </p>
      )}
    </Section>
  );
}

export function EndpointPage() {
  const current = useLoader(settings, []);
  return (
    <>
      <h1>Endpoint</h1>
      <Section title="Settings">
        <ErrorMessage error={current.error} />
        {current.data && <SettingsForm current={current.data} onSaved={current.reload} />}
      </Section>
      {current.data && <DeliveryOptionsPanel current={current.data} save={saveSettings} onChanged={current.reload} />}
      <EndpointState onChange={current.reload} />
      <RotateSecret />
      <TestEvent />
    </>
  );
}
