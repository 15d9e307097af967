import { useState } from 'preact/hooks';
import { eventDetail, redeliverEvent } from '../api/admin';
import type { ApiError } from '../api/client';
import type { EventDetail } from '@app/payloads/admin-api.types';
import type { ComponentChildren } from 'preact';
import { AttemptSection } from '../components/attempt-section';
import { ErrorMessage, Fields, Json, Mono, Section, StatusBadge, Time } from '../components/bits';
import { EventDeliveries } from '../components/event-deliveries';
import { AccountLink } from '../components/link';
import { useInterval, useLoader } from '../lib/use-loader';
import { roleAllows } from '../api/session';

const PENDING = ['queued', 'retrying'];

export interface EventCalls {
  detail: (eventId: string) => Promise<EventDetail>;
  /** Every destination of the event, or only `destinationId` (CONTRACT §11). */
  redeliver: (eventId: string, destinationId?: string) => Promise<unknown>;
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

  const redeliver = (destinationId?: string): void => {
    setError(undefined);
    calls.redeliver(eventId, destinationId).then(() => {
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
              // The portal (its own calls) is the account's own: roles are the operators' console's.
              (calls !== ADMIN_CALLS || roleAllows('operator')) && (
                <button type="button" onClick={() => redeliver()}>
                  Redeliver
                </button>
              )
            }
          >
            <ErrorMessage error={error} />
            <Fields
              rows={[
                ['Status', <span data-field="status"><StatusBadge status={data.status} /></span>],
                ...(showAccount ? [['Account', <AccountLink id={data.account_id} />] as [string, ComponentChildren]] : []),
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
          <EventDeliveries deliveries={data.deliveries} error={error} onRedeliver={redeliver} />
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
