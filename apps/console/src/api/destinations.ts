import type { DestinationAuthInput, DestinationView } from '@app/payloads/destination.types';
import { ApiError } from './client';

/**
 * CONTRACT §11 destinations as the console and the portal show them. One panel serves both doors: each
 * passes a `DestinationsClient` bound to its own API (admin routes of an account, or the portal's own).
 */
export {
  DESTINATION_AUTH_TYPES,
  DESTINATION_FORMATS,
  DESTINATION_TYPES,
  type DestinationAuthInput,
  type DestinationAuthType,
  type DestinationType,
  type DestinationView,
  MAX_DESTINATIONS_PER_ACCOUNT,
  PRIMARY_DESTINATION_ID,
} from '@app/payloads/destination.types';

/** What a create or an edit sends: only the fields given (an edit keeps what it does not send). */
export interface DestinationChange {
  type?: string;
  target?: string;
  actions?: string[] | null;
  filter?: Record<string, unknown> | null;
  content_type?: string;
  format?: string;
  auth?: DestinationAuthInput | null;
  ordering?: string;
  max_per_second?: number | null;
  retry?: { schedule?: string[]; stop_on?: (number | string)[]; disable_on?: (number | string)[] };
  expire_after?: string | null;
}

export interface DestinationsClient {
  /** The primary (the push URL) first, then the others in the order they were made. */
  list(): Promise<DestinationView[]>;
  create(change: DestinationChange): Promise<DestinationView>;
  update(id: string, change: DestinationChange): Promise<DestinationView>;
  remove(id: string): Promise<unknown>;
  pause(id: string): Promise<DestinationView>;
  resume(id: string): Promise<DestinationView>;
}

type Answer = Record<string, unknown>;

/**
 * The admin and portal doors answer the bare view (errors as 4xx); the Open API's shape
 * (`{"code":1000,"message":"OK","destination":…}`) is read too, a code other than 1000 being a refusal.
 */
export function accepted(answer: unknown): Answer {
  const body = (typeof answer === 'object' && answer !== null ? answer : {}) as Answer;
  if (typeof body.code === 'number' && body.code !== 1000) {
    throw new ApiError(400, `code ${body.code}`, typeof body.message === 'string' ? body.message : `code ${body.code}`);
  }
  return body;
}

export function destinationOf(answer: unknown): DestinationView {
  const body = accepted(answer);
  return (typeof body.destination === 'object' && body.destination !== null ? body.destination : body) as DestinationView;
}

export function destinationsOf(answer: unknown): DestinationView[] {
  const body = accepted(answer);
  return (Array.isArray(body.items) ? body.items : []) as DestinationView[];
}
