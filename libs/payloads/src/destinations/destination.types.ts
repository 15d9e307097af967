import type { DestinationFilter } from './destination-filter';

/* The shapes of CONTRACT §11 as every door (Open API, portal, admin) answers them. */

export const DESTINATION_TYPES = ['webhook', 'rabbitmq', 'nats', 'mqtt'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

export const DESTINATION_FORMATS = ['udesk', 'cloudevents'] as const;
export type DestinationFormat = (typeof DESTINATION_FORMATS)[number];

export const DESTINATION_AUTH_TYPES = ['header', 'oauth2', 'mtls'] as const;
export type DestinationAuthType = (typeof DESTINATION_AUTH_TYPES)[number];

/** Destinations an account may have besides the primary. */
export const MAX_DESTINATIONS_PER_ACCOUNT = 20;

/** The id of the account's push_url seen as a destination. */
export const PRIMARY_DESTINATION_ID = 'primary';

/** Sent auth objects (unsealed); they are stored sealed and never shown back. */
export type DestinationAuthInput =
  | { type: 'header'; name: string; value: string }
  | { type: 'oauth2'; token_url: string; client_id: string; client_secret: string; scope?: string }
  | { type: 'mtls'; certificate: string; private_key: string; ca?: string };

export interface DestinationState {
  /** The destination's circuit breaker: closed, open or half_open. */
  breaker: string;
  disabled_at: string | null;
  /** Deliveries waiting without a job: held while it is paused or while its breaker is open (CONTRACT §5). */
  held: number;
}

export interface DestinationView {
  id: string;
  type: DestinationType;
  /** The target URL with any password shown as `***` (null: the primary without a push_url). */
  target: string | null;
  actions: string[] | null;
  filter: DestinationFilter | null;
  content_type: string;
  format: DestinationFormat;
  auth: { type: DestinationAuthType } | null;
  ordering: string;
  max_per_second: number | null;
  paused: boolean;
  /** Its retry policy (CONTRACT §13): the waits between calls after the first, and the statuses that end a delivery at once. */
  retry: DestinationRetryView;
  /** Its deadline (`"30m"`, `"1d"`), counted from when ingest accepted the event; null: none. */
  expire_after: string | null;
  state: DestinationState;
  /** Only in the answer that created the destination. */
  signing_secret?: string;
}

export interface DestinationRetryView {
  schedule: string[];
  stop_on: number[];
  disable_on: number[];
}

/** One destination's delivery of an event, in the admin and portal event views. */
export interface DestinationDeliveryView<Attempt> {
  destination_id: string;
  status: string;
  last_error: string | null;
  attempts: Attempt[];
}
