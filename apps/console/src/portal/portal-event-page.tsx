import { EventDetailPage } from '../pages/event-detail';
import { eventDetail, redeliverEvent } from './portal-api';

const PORTAL_CALLS = { detail: eventDetail, redeliver: redeliverEvent };

/** One of the account's events: the console's event page, read through the portal API. */
export function PortalEventPage({ eventId }: { eventId: string }) {
  return <EventDetailPage eventId={eventId} calls={PORTAL_CALLS} showAccount={false} />;
}
