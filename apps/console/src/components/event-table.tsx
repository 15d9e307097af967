import type { EventListItem } from '@app/payloads/admin-api.types';
import { Mono, StatusBadge, Time } from './bits';
import { type Column, DataTable } from './data-table';
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
  const columns: Column<EventListItem>[] = [
    {
      head: 'Event ID',
      cell: (event) => (
        <Link class="mono" href={eventHref(event.event_id)}>
          {event.event_id}
        </Link>
      ),
    },
    ...(accountHref
      ? [
          {
            head: 'Account',
            cell: (event: EventListItem) => (
              <Link href={accountHref(event.account_id)}>
                <Mono>{event.account_id}</Mono>
              </Link>
            ),
          },
        ]
      : []),
    { head: 'Action', column: 'action', cell: (event) => event.action },
    {
      head: 'Status',
      cell: (event) => (
        <>
          <StatusBadge status={event.status} />
          {event.erased && <span class="muted" data-field="erased"> erased</span>}
        </>
      ),
    },
    { head: 'Attempts', num: true, cell: (event) => event.attempts },
    { head: 'Created', cell: (event) => <Time iso={event.created_at} /> },
    { head: 'Delivered', cell: (event) => <Time iso={event.delivered_at} /> },
    { head: 'Last error', class: 'clip', title: (event) => event.last_error ?? undefined, cell: (event) => event.last_error ?? '' },
  ];
  return <DataTable columns={columns} items={items} rowKey={(event) => event.event_id} idAttribute="data-event-id" />;
}
