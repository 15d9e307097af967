import type { AttemptView } from '@app/payloads/admin-api.types';
import type { DestinationDeliveryView } from '@app/payloads/destination.types';
import type { ApiError } from '../api/client';
import { PRIMARY_DESTINATION_ID } from '../api/destinations';
import { AttemptSection } from './attempt-section';
import { ErrorMessage, Section, StatusBadge } from './bits';

/**
 * Where an event went (CONTRACT §11): one delivery per destination that took it, the primary first, each
 * with its status, last error and attempts, and a redelivery to that destination alone. Shown only when
 * the event went somewhere besides the primary, whose delivery is the page's own fields and attempts.
 */
export function EventDeliveries({ deliveries, error, onRedeliver }: {
  deliveries: DestinationDeliveryView<AttemptView>[] | undefined;
  error: ApiError | undefined;
  onRedeliver: (destinationId: string) => void;
}) {
  if (!deliveries || deliveries.every((delivery) => delivery.destination_id === PRIMARY_DESTINATION_ID)) return null;
  return (
    <Section title={`Destinations (${deliveries.length})`}>
      <ErrorMessage error={error} />
      <table class="grid deliveries">
        <thead>
          <tr>
            <th>Destination</th>
            <th>Status</th>
            <th class="num">Attempts</th>
            <th>Last error</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {deliveries.map((delivery) => (
            <tr key={delivery.destination_id} data-delivery-destination={delivery.destination_id}>
              <td class="mono">{delivery.destination_id}</td>
              <td data-column="status">
                <StatusBadge status={delivery.status} />
              </td>
              <td class="num">{delivery.attempts.length}</td>
              <td>
                {delivery.last_error ?? '—'}
                {delivery.destination_id !== PRIMARY_DESTINATION_ID && delivery.attempts.length > 0 && (
                  <details>
                    <summary>Attempts</summary>
                    {delivery.attempts.map((attempt) => (
                      <AttemptSection key={`${attempt.series}-${attempt.attempt}-${attempt.started_at}`} attempt={attempt} destinationId={delivery.destination_id} />
                    ))}
                  </details>
                )}
              </td>
              <td class="nowrap">
                <button type="button" class="secondary" onClick={() => onRedeliver(delivery.destination_id)}>
                  Redeliver to {delivery.destination_id}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}
