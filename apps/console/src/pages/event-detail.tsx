import { useState } from 'preact/hooks';
import { eventDetail, redeliverEvent } from '../api/admin';
import type { ApiError } from '../api/client';
import type { AttemptView, EventDetail } from '@app/payloads/admin-api.types';
import type { ComponentChildren } from 'preact';
import { ErrorMessage, Fields, Json, Mono, Section, StatusBadge, Time } from '../components/bits';
import { Link } from '../components/link';
import { formatMs } from '../lib/format';
import { useInterval, useLoader } from '../lib/use-loader';
import { link, segment } from '../router';

const PENDING = ['queued', 'retrying'];

function Headers({ headers }: { headers: Record<string, string> | null }) {
  if (!headers || Object.keys(headers).length === 0) return <p class="muted">none</p>;
  return (
    <table class="headers">
      <tbody>
        {Object.entries(headers).map(([name, value]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Attempts refused before any call (open breaker, disabled endpoint, refused target) record no request. */
function madeNoCall(attempt: AttemptView): boolean {
  return attempt.response_status === null && !attempt.request_body && Object.keys(attempt.request_headers ?? {}).length === 0;
}

function AttemptSection({ attempt }: { attempt: AttemptView }) {
  const ok = attempt.response_status !== null && attempt.response_status >= 200 && attempt.response_status < 300;
  return (
    <article class="attempt" data-attempt={attempt.attempt}>
      <header>
        <strong>Attempt {attempt.attempt}</strong>
        <span class="muted"> series {attempt.series}</span> · <Time iso={attempt.started_at} /> · {formatMs(attempt.duration_ms)} ·{' '}
        <span class={ok ? 'badge badge-delivered' : 'badge badge-failed'}>
          {attempt.response_status === null ? 'no answer' : `HTTP ${attempt.response_status}`}
        </span>{' '}
        ·{' '}
        <Mono>{attempt.url}</Mono>
      </header>
      {attempt.error && (
        <p class="attempt-error">
          <strong>Error:</strong> {attempt.error}
        </p>
      )}
      {madeNoCall(attempt) ? (
        <p class="muted">No HTTP call was made for this attempt.</p>
      ) : (
      <div class="exchange">
        <div>
          <h4>Request headers</h4>
          <Headers headers={attempt.request_headers} />
          <h4>Request body</h4>
          <Json value={attempt.request_body} label="Request body" />
        </div>
        <div>
          <h4>Response {attempt.response_status ?? ''}</h4>
          <Headers headers={attempt.response_headers} />
          <h4>Response body</h4>
          {attempt.response_body === null ? <p class="muted">none</p> : <Json value={attempt.response_body} label="Response body" />}
        </div>
      </div>
      )}
    </article>
  );
}

export interface EventCalls {
  detail: (eventId: string) => Promise<EventDetail>;
  redeliver: (eventId: string) => Promise<unknown>;
}

const ADMIN_CALLS: EventCalls = { detail: eventDetail, redeliver: redeliverEvent };

/** One event; the account portal shows the same page through its own API, without the account link. */
export function EventDetailPage({ eventId, calls = ADMIN_CALLS, showAccount = true }: { eventId: string; calls?: EventCalls; showAccount?: boolean }) {
  const event = useLoader(() => calls.detail(eventId), [eventId]);
  const [redelivering, setRedelivering] = useState(false);
  const [error, setError] = useState<ApiError>();
  const data = event.data;
  // After a redelivery the page follows the event until its new attempt series settles.
  useInterval(event.reload, 1000, redelivering && (!data || PENDING.includes(data.status)));

  const redeliver = (): void => {
    setError(undefined);
    calls.redeliver(eventId).then(() => {
      setRedelivering(true);
      event.reload();
    }, setError);
  };

  return (
    <>
      <h1>
        Event <Mono>{eventId}</Mono>
      </h1>
      <ErrorMessage error={event.error} />
      {data && (
        <>
          <Section
            title="Event"
            actions={
              <button type="button" onClick={redeliver}>
                Redeliver
              </button>
            }
          >
            <ErrorMessage error={error} />
            <Fields
              rows={[
                ['Status', <span data-field="status"><StatusBadge status={data.status} /></span>],
                ...(showAccount ? [['Account', <Link href={link(`/accounts/${segment(data.account_id)}`)}><Mono>{data.account_id}</Mono></Link>] as [string, ComponentChildren]] : []),
                ['Action', data.action],
                ['Attempts', `${data.attempt_count} (series ${data.series})`],
                ['Created', <Time iso={data.created_at} />],
                ['Delivered', <Time iso={data.delivered_at} />],
                ['Next attempt', <Time iso={data.next_attempt_at} />],
                ['Last error', data.last_error],
              ]}
            />
          </Section>
          <Section title="Message">
            {data.erased ? <p class="muted" data-field="erased">Erased: the message and the attempts' bodies were cleared.</p> : <Json value={data.message} label="Message" />}
          </Section>
          <Section title={`Attempts (${data.attempts.length})`}>
            {data.attempts.length === 0 && <p class="muted">No attempt has been made.</p>}
            {data.attempts.map((attempt) => (
              <AttemptSection key={`${attempt.series}-${attempt.attempt}-${attempt.started_at}`} attempt={attempt} />
            ))}
          </Section>
        </>
      )}
    </>
  );
}
