import { ApiError } from './client';

/**
 * CONTRACT §11 destinations as the console and the portal show them. One panel serves both doors: each
 * passes a `DestinationsClient` bound to its own API (admin routes of an account, or the portal's own).
 */
export const DESTINATION_TYPES = ['webhook', 'rabbitmq', 'nats', 'mqtt'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];
export const DESTINATION_FORMATS = ['udesk', 'cloudevents'] as const;
export const DESTINATION_AUTH_TYPES = ['header', 'oauth2', 'mtls'] as const;
export type DestinationAuthType = (typeof DESTINATION_AUTH_TYPES)[number];
/** The id the account's push_url answers to in the destination lists: paused and resumed here, edited on its own page. */
export const PRIMARY_DESTINATION_ID = 'primary';

export interface DestinationView {
  id: string;
  type: DestinationType;
  /** Any password in it reads `***`. */
  target: string;
  actions: string[] | null;
  filter: Record<string, unknown> | null;
  content_type: string;
  format: string;
  auth: { type: DestinationAuthType } | null;
  ordering: string;
  max_per_second: number | null;
  paused: boolean;
  state: { breaker: unknown; disabled_at: string | null };
  /** Only in the answer to a create: shown this once. */
  signing_secret?: string;
}

/** What a create or an edit sends: only the fields given (an edit keeps what it does not send). */
export type DestinationAuth =
  | { type: 'header'; name: string; value: string }
  | { type: 'oauth2'; token_url: string; client_id: string; client_secret: string; scope?: string }
  | { type: 'mtls'; certificate: string; private_key: string; ca?: string };

export interface DestinationChange {
  type?: DestinationType;
  target?: string;
  actions?: string[] | null;
  filter?: Record<string, unknown> | null;
  content_type?: string;
  format?: string;
  auth?: DestinationAuth | null;
  ordering?: string;
  max_per_second?: number | null;
}

export interface DestinationsClient {
  list(): Promise<DestinationView[]>;
  create(change: DestinationChange): Promise<DestinationView>;
  update(id: string, change: DestinationChange): Promise<DestinationView>;
  remove(id: string): Promise<unknown>;
  pause(id: string): Promise<DestinationView>;
  resume(id: string): Promise<DestinationView>;
}

type Answer = Record<string, unknown>;

/**
 * The Open API shape (`{"code":1000,"message":"OK",…}`) also serves the portal's calls; a code other than
 * 1000 on a 200 is a refusal all the same, shown like the admin API's 400 (its message names the field).
 */
export function accepted(answer: unknown): Answer {
  const body = (typeof answer === 'object' && answer !== null ? answer : {}) as Answer;
  if (typeof body.code === 'number' && body.code !== 1000) {
    throw new ApiError(400, `code ${body.code}`, typeof body.message === 'string' ? body.message : `code ${body.code}`);
  }
  return body;
}

/** `{"destination": view}` (Open API and portal) or the bare view (admin API). */
export function destinationOf(answer: unknown): DestinationView {
  const body = accepted(answer);
  return (typeof body.destination === 'object' && body.destination !== null ? body.destination : body) as DestinationView;
}

/** `{"items": [...]}` or `{"destinations": [...]}`, whichever the door answers. */
export function destinationsOf(answer: unknown): DestinationView[] {
  const body = accepted(answer);
  const items = Array.isArray(body.items) ? body.items : Array.isArray(body.destinations) ? body.destinations : [];
  return items as DestinationView[];
}

/** The breaker as text, whether the view carries its state word or the whole breaker object. */
export function breakerText(breaker: unknown): string {
  if (typeof breaker === 'string') return breaker;
  if (typeof breaker === 'object' && breaker !== null && typeof (breaker as { state?: unknown }).state === 'string') {
    return (breaker as { state: string }).state;
  }
  return 'closed';
}
