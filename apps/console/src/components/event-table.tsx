import type { EventListItem } from '@app/payloads/admin-api.types';
import { Mono, StatusBadge, Time } from './bits';
import { Link } from './link';

/**
 * A page of the delivery log, newest first. `eventHref` opens an event; `accountHref` adds the account
 * column (the console's log spans accounts; the portal's is one account's).
 */
export function EventTable({ items, eventHref, accountHref }: {
  items: EventListItem[];
  eventHref: (eventId: string) => string;
  accountHref?: (accountId: number) => string;
}) {
  return (
    <table class="grid">
      <thead>
        <tr>
          <th>Event ID</th>
          {accountHref && <th>Account</th>}
          <th>Action</th>
          <th>Status</th>
          <th class="num">Attempts</th>
          <th>Created</th>
          <th>Delivered</th>
          <th>Last error</th>
        </tr>
      </thead>
      <tbody>
        {items.map((event) => (
          <tr key={event.event_id} data-event-id={event.event_id}>
            <td>
              <Link class="mono" href={eventHref(event.event_id)}>
                {event.event_id}
              </Link>
            </td>
            {accountHref && (
              <td>
                <Link href={accountHref(event.account_id)}>
                  <Mono>{event.account_id}</Mono>
                </Link>
              </td>
            )}
            <td data-column="action">{event.action}</td>
            <td>
              <StatusBadge status={event.status} />
              {event.erased && <span class="muted" data-field="erased"> erased</span>}
            </td>
            <td class="num">{event.attempts}</td>
            <td>
              <Time iso={event.created_at} />
            </td>
            <td>
              <Time iso={event.delivered_at} />
            </td>
            <td class="clip" title={event.last_error ?? undefined}>
              {event.last_error ?? ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
